#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files the command writes (keys, signatures): never over one of its own inputs, never over
/// something that is not a regular file (a device, a folder, a FIFO, a symbolic link), never over
/// an existing file unless the caller says so, and never half-written.
package enum OutputFile {
    /// Whether `path` may be written: refused when it is an input (by name or inode), not a
    /// regular file, or (without `replacing`) an existing file.
    /// - Throws: ``PincheckError`` `input.unreadable-file` saying why.
    package static func checkDestination(_ path: String, replacing: Bool, inputs: [String]) throws(PincheckError) {
        func refuse(_ message: String) -> PincheckError { PincheckError(.unreadableFile, message, source: path) }
        var existing = stat()
        if lstat(path, &existing) == 0 {
            switch existing.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFLNK: throw refuse("is a symbolic link; the output is written only to a regular file or a new name")
            case S_IFDIR: throw refuse("is a folder; name a file")
            default: throw refuse("is not a regular file (a device, FIFO or socket); it is never written over")
            }
            for input in inputs {
                var read = stat()
                if stat(input, &read) == 0, read.st_dev == existing.st_dev, read.st_ino == existing.st_ino {
                    throw refuse("is also an input of this command (\(input)); an input is never overwritten")
                }
            }
            guard replacing else { throw refuse("exists; pass --force to replace it") }
        } else if errno != ENOENT {
            throw refuse("cannot be checked: \(String(cString: strerror(errno)))")
        }
    }

    /// The permission bits of a file, or nil when it cannot be read.
    package static func mode(of path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }

    /// Writes `bytes` to `path`: into a new temporary file beside it (mkstemp: O_CREAT|O_EXCL, so
    /// no planted name or link is followed), synced, then moved into place. Without `replacing`
    /// the move is a hard link, which fails when `path` exists — so a file that appears between
    /// the check and the write is not replaced either.
    /// - Parameters:
    ///   - mode: The new file's permissions (0600 for a private key).
    ///   - replacing: Whether an existing regular file may be replaced (`--force`).
    ///   - inputs: Files the command read; `path` may be none of them, by name or by inode.
    /// - Throws: ``PincheckError`` `input.unreadable-file` naming what was refused or failed.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t, replacing: Bool,
                              inputs: [String] = []) throws(PincheckError) {
        func refuse(_ message: String) -> PincheckError { PincheckError(.unreadableFile, message, source: path) }
        try checkDestination(path, replacing: replacing, inputs: inputs)
        let directory = FilePath.directory(of: path).isEmpty ? "." : FilePath.directory(of: path)
        var template = Array((FilePath.join(directory, ".pincheck-out.tmp-XXXXXX")).utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw refuse("cannot be written: no temporary file in \(directory) (\(String(cString: strerror(errno))))") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(temporary) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fchmod(fd, mode)
        var offset = 0
        var failure: String? = nil
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
                break
            }
            offset += written
        }
        if failure == nil, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        if let failure { throw refuse("cannot be written: \(failure)") }
        if replacing {
            guard rename(temporary, path) == 0 else { throw refuse("cannot be written: \(String(cString: strerror(errno)))") }
        } else {
            guard link(temporary, path) == 0 else {
                throw refuse(errno == EEXIST ? "exists; pass --force to replace it" : "cannot be written: \(String(cString: strerror(errno)))")
            }
        }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }
}
