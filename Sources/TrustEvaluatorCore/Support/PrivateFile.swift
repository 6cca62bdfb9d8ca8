#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files written whole or not at all, readable only as `mode` allows (the owner alone by default).
package enum PrivateFile {
    /// Why a write failed.
    package enum Failure: Error, CustomStringConvertible {
        /// The path exists and was not to be replaced.
        case exists
        /// What failed, with the system's reason.
        case failed(String)

        package var description: String {
            switch self {
            case .exists: "the file exists"
            case .failed(let message): message
            }
        }
    }

    /// Writes `bytes` to a temporary file beside `path` with permissions `mode` and moves it into
    /// place, so the content is never readable by others, not even for an instant, and a crash
    /// never leaves half a file. The temporary name is unpredictable and created exclusively
    /// without following a symbolic link (mkstemp: O_CREAT|O_EXCL, which refuses any existing
    /// path, symbolic links included), so nothing planted in a shared folder can redirect the
    /// content or keep a descriptor to it. With `replacing` the move is a rename over `path`;
    /// without, a hard link, which fails when `path` exists (so a file that appears meanwhile is
    /// not replaced either). The folder is synced after the move so the new file survives a crash.
    /// - Returns: nil on success, else what failed.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600, replacing: Bool = true) -> Failure? {
        if case .done(let failure) = writeUnnamed(bytes, to: path, mode: mode, replacing: replacing) { return failure }
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return .failed("could not create a temporary file beside \(path) (\(String(cString: strerror(errno))))") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fchmod(fd, mode)
        var failure = WriteAll.write(bytes, to: fd)?.reason
        if failure == nil, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        if let failure {
            unlink(temporary)
            return .failed("could not write \(path) (\(failure))")
        }
        if replacing {
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                return .failed("could not write \(path) (\(reason))")
            }
        } else {
            let linked = link(temporary, path) == 0
            let reason = errno
            unlink(temporary)
            guard linked else { return reason == EEXIST ? .exists : .failed("could not write \(path) (\(String(cString: strerror(reason))))") }
        }
        let folder = open(FilePath.directory(of: path).isEmpty ? "." : FilePath.directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
        return nil
    }

    private enum Unnamed {
        /// Not possible here: write through a named temporary file.
        case unsupported
        /// Written (nil), or what failed.
        case done(Failure?)
    }

    /// Linux's `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), which Swift does not import.
    private static let temporaryFileFlag: Int32 = 0o20_000_000 | O_DIRECTORY

    /// The same, through a file with no name until it is whole (`O_TMPFILE`, then `linkat` from
    /// /proc/self/fd): a process killed while writing leaves nothing behind — not a half file, not
    /// a whole private key under a temporary name. Nil when the folder's file system or the
    /// missing /proc does not allow it (the caller then writes through a named temporary file).
    private static func writeUnnamed(_ bytes: [UInt8], to path: String, mode: mode_t, replacing: Bool) -> Unnamed {
        let directory = FilePath.directory(of: path).isEmpty ? "." : FilePath.directory(of: path)
        let fd = open(directory, temporaryFileFlag | O_WRONLY | O_CLOEXEC, mode)
        guard fd >= 0 else { return .unsupported }
        defer { close(fd) }
        _ = fchmod(fd, mode)
        if let failure = WriteAll.write(bytes, to: fd) { return .done(.failed("could not write \(path) (\(failure.reason))")) }
        guard fsync(fd) == 0 else { return .done(.failed("could not write \(path) (\(String(cString: strerror(errno))))")) }
        let source = "/proc/self/fd/\(fd)"
        if replacing {
            // A name of its own first (linkat never replaces), then one rename over `path`.
            let temporary = "\(path).tmp-\(UInt64.random(in: 0...UInt64.max))"
            guard linkat(AT_FDCWD, source, AT_FDCWD, temporary, AT_SYMLINK_FOLLOW) == 0 else {
                let reason = String(cString: strerror(errno))
                if access(source, F_OK) != 0 { return .unsupported }  // no /proc
                return .done(.failed("could not write \(path) (\(reason))"))
            }
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                return .done(.failed("could not write \(path) (\(reason))"))
            }
        } else {
            guard linkat(AT_FDCWD, source, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 else {
                let reason = errno
                if access(source, F_OK) != 0 { return .unsupported }  // no /proc
                return .done(reason == EEXIST ? .exists : .failed("could not write \(path) (\(String(cString: strerror(reason))))"))
            }
        }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
        return .done(nil)
    }
}
