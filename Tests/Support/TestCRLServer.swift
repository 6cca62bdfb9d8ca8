import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.x server on 127.0.0.1 (an ephemeral port) that answers GETs from a table of paths:
/// what a CA's CRL distribution point does. It accepts proxy-form requests
/// (`GET http://crl.pincheck.test/x.crl`), so a fetcher pointed at it as its proxy reaches
/// certificates' distribution points without the certificates naming a port. It counts requests.
public final class TestCRLServer: @unchecked Sendable {
    // @unchecked Sendable: the table is immutable; the counts and `closed` are under `lock`.
    /// What a path answers.
    public enum Answer: Sendable {
        /// 200 with these bytes.
        case bytes([UInt8])
        /// 200 with these bytes, after waiting this long.
        case slow([UInt8], seconds: Double)
        /// 404.
        case notFound
        /// The connection is closed without an answer.
        case hangUp
    }

    public let port: UInt16
    private let fd: Int32
    private let answers: [String: Answer]
    private let lock = NSLock()
    private var closed = false
    private var counts: [String: Int] = [:]

    /// `http://127.0.0.1:PORT`, to give a fetcher as its proxy.
    public var proxyURL: String { "http://127.0.0.1:\(port)" }

    /// - Parameter answers: By path (`/intermediate.crl`); anything else is 404.
    public init(_ answers: [String: Answer]) throws {
        self.answers = answers
        let (fd, port) = try LoopbackSocket.bind()
        guard listen(fd, 64) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        self.fd = fd
        self.port = port
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    /// How many requests asked for `path`.
    public func requests(for path: String) -> Int { lock.withLock { counts[path, default: 0] } }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.contains(0x0A) || !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer.prefix(count)
            if request.count > 65_536 { return }
        }
        let line = String(decoding: request, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
        let parts = line.split(separator: " ")
        guard parts.count >= 2 else { return }
        var target = String(parts[1])
        // Proxy form: http://host/path → /path.
        if target.hasPrefix("http://"), let slash = target.dropFirst(7).firstIndex(of: "/") { target = String(target[slash...]) }
        lock.withLock { counts[target, default: 0] += 1 }
        func send(_ status: String, _ body: [UInt8]) {
            let head = "HTTP/1.0 \(status)\r\nContent-Type: application/pkix-crl\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            let bytes = Array(head.utf8) + body
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { return }
                offset += sent
            }
        }
        switch answers[target] ?? .notFound {
        case .bytes(let body): send("200 OK", body)
        case .slow(let body, let seconds):
            Thread.sleep(forTimeInterval: seconds)
            send("200 OK", body)
        case .notFound: send("404 Not Found", [])
        case .hangUp: return
        }
    }

    public func stop() { LoopbackSocket.close(fd, lock: lock, closed: &closed) }

    deinit { stop() }
}
