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
        /// 200 with each body in turn, one per request; the last one again after that.
        case sequence([[UInt8]])
        /// A redirect (302) to this Location.
        case redirect(String)
        /// 200 with these bytes, sent `chunk` bytes at a time with `pause` seconds between: a
        /// server that trickles.
        case trickle([UInt8], chunk: Int, pause: Double)
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
                    close(fd)  // this loop's last use of it (LoopbackSocket.close)
                    return
                }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    /// How many requests asked for `path`.
    public func requests(for path: String) -> Int { lock.withLock { counts[path, default: 0] } }

    /// How many requests came in, for any path.
    public var totalRequests: Int { lock.withLock { counts.values.reduce(0, +) } }

    /// The request lines and headers received, in order (for the tests that look at what was sent).
    public var received: [String] { lock.withLock { heads } }
    private var heads: [String] = []

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
        let text = String(decoding: request, as: UTF8.self)
        lock.withLock { heads.append(text) }
        let line = text.split(separator: "\r\n").first.map(String.init) ?? ""
        let parts = line.split(separator: " ")
        guard parts.count >= 2 else { return }
        var target = String(parts[1])
        // Proxy form: http://host/path → /path.
        if target.hasPrefix("http://"), let slash = target.dropFirst(7).firstIndex(of: "/") { target = String(target[slash...]) }
        let count = lock.withLock { () -> Int in
            counts[target, default: 0] += 1
            return counts[target, default: 0]
        }
        func send(_ status: String, _ body: [UInt8], extra: String = "") {
            let head = "HTTP/1.0 \(status)\r\nContent-Type: application/pkix-crl\r\nContent-Length: \(body.count)\r\n\(extra)Connection: close\r\n\r\n"
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
        case .sequence(let bodies): send("200 OK", bodies.isEmpty ? [] : bodies[min(count, bodies.count) - 1])
        case .redirect(let location): send("302 Found", [], extra: "Location: \(location)\r\n")
        case .trickle(let body, let chunk, let pause):
            let head = Array("HTTP/1.0 200 OK\r\nContent-Type: application/pkix-crl\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8)
            guard head.withUnsafeBytes({ Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 else { return }
            var offset = 0
            while offset < body.count {
                let end = min(body.count, offset + max(1, chunk))
                guard body[offset..<end].withUnsafeBytes({ Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 else { return }
                offset = end
                Thread.sleep(forTimeInterval: pause)
            }
        }
    }

    public func stop() { LoopbackSocket.close(fd, lock: lock, closed: &closed, acceptLoopCloses: true) }

    deinit { stop() }
}
