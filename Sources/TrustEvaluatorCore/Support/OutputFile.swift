#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files the command writes (keys, signatures): never over one of its own inputs, never over
/// something that is not a regular file (a device, a folder, a FIFO, a symbolic link), never over
/// an existing file unless the caller says so, and never half-written.
package enum OutputFile {
    /// What to do about an existing output, for commands that take `--force`.
    package static let forceAdvice = "pass --force to replace it"

    /// Whether `path` may be written: refused when it is an input (by name or inode), not a
    /// regular file, or (without `replacing`) an existing file.
    /// - Throws: ``PincheckError`` `input.unreadable-file` saying why.
    package static func checkDestination(
        _ path: String, replacing: Bool, inputs: [String],
        advice: String = forceAdvice
    ) throws(PincheckError) {
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
            guard replacing else { throw refuse("exists; \(advice)") }
        } else if errno != ENOENT {
            throw refuse("cannot be checked: \(String(cString: strerror(errno)))")
        }
    }

    /// The permission bits of a file, or nil when it cannot be read.
    package static func mode(of path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }

    /// Writes `bytes` to `path` (``PrivateFile/write(_:to:mode:replacing:)``) once
    /// ``checkDestination(_:replacing:inputs:advice:)`` allows it.
    /// - Parameters:
    ///   - mode: The new file's permissions (0600 for a private key).
    ///   - replacing: Whether an existing regular file may be replaced (`--force`).
    ///   - inputs: Files the command read; `path` may be none of them, by name or by inode.
    ///   - advice: What to do about an existing file, for the message.
    /// - Throws: ``PincheckError`` `input.unreadable-file` naming what was refused or failed.
    package static func write(
        _ bytes: [UInt8], to path: String, mode: mode_t, replacing: Bool,
        inputs: [String] = [], advice: String = forceAdvice
    ) throws(PincheckError) {
        try checkDestination(path, replacing: replacing, inputs: inputs, advice: advice)
        switch PrivateFile.write(bytes, to: path, mode: mode, replacing: replacing) {
        case nil: return
        case .exists: throw PincheckError(.unreadableFile, "exists; \(advice)", source: path)
        case .failed(let message): throw PincheckError(.unreadableFile, message, source: path)
        }
    }
}
