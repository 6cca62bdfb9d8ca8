import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads an input file whole, but never more than a bound: the size is checked before anything
/// is read, and what cannot be sized (a FIFO, a device) is read only up to the bound. A FIFO
/// without a writer reads as empty instead of blocking. Failures say what the system said.
package enum InputFile {
    /// Certificate bundles and CRL files (Debian's whole CA bundle is about 220 KiB).
    public static let certificateLimit = 16 << 20
    /// Configuration files: Pincheck JSON, TrustKit plists, Android XML, OkHttp pin lists.
    public static let configurationLimit = 4 << 20

    /// - Parameters:
    ///   - path: The file.
    ///   - limit: The most bytes accepted.
    ///   - what: The kind of file, for messages ("configuration file").
    /// - Throws: ``PincheckError`` `input.unreadable-file` (with the system's reason) or
    ///   `input.too-large`.
    public static func read(_ path: String, limit: Int, what: String = "file") throws(PincheckError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = errno == ENOENT ? "does not exist" : "cannot be read: \(String(cString: strerror(errno)))"
            throw PincheckError(.unreadableFile, "the \(what) \(reason)", source: path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw PincheckError(.unreadableFile, "the \(what) cannot be read: \(String(cString: strerror(errno)))", source: path)
        }
        let kind = status.st_mode & S_IFMT
        if kind == S_IFDIR { throw PincheckError(.unreadableFile, "the \(what) is a directory", source: path) }
        if kind == S_IFREG && Int(status.st_size) > limit {
            throw PincheckError(.tooLarge, "the \(what) is \(Int(status.st_size)) bytes; at most \(limit) are read", source: path)
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        var bytes: [UInt8] = []
        if kind == S_IFREG { bytes.reserveCapacity(Int(status.st_size)) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PincheckError(.unreadableFile, "the \(what) cannot be read: \(String(cString: strerror(errno)))", source: path)
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit {
                throw PincheckError(.tooLarge, "the \(what) holds more than \(limit) bytes", source: path)
            }
        }
    }
}
