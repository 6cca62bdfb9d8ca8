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
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return .failed("could not create a temporary file beside \(path) (\(String(cString: strerror(errno))))") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
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
}
