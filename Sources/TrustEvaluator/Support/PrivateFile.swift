#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files only their owner may read, written whole or not at all.
package enum PrivateFile {
    /// Writes `bytes` to a 0600 temporary file beside `path` and renames it over `path`, so the
    /// content is never readable by others, not even for an instant, and a crash never leaves half
    /// a file. The temporary name is unpredictable and created exclusively without following a
    /// symbolic link (mkstemp: O_CREAT|O_EXCL, which refuses any existing path, symbolic links
    /// included), so nothing planted in a shared folder can redirect the content or keep a
    /// descriptor to it; the folder is synced after the rename so the new file survives a crash.
    /// - Returns: nil on success, else what failed (with the system's reason).
    package static func write(_ bytes: [UInt8], to path: String) -> String? {
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return "could not create a temporary file beside \(path) (\(String(cString: strerror(errno))))" }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fchmod(fd, 0o600)
        var offset = 0
        var failed = false
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 { if errno == EINTR { continue }; failed = true; break }
            offset += written
        }
        let synced = fsync(fd)
        close(fd)
        guard !failed, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            return "could not write \(path)"
        }
        let folder = open(FilePath.directory(of: path).isEmpty ? "." : FilePath.directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
        return nil
    }
}
