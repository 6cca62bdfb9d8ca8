import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A connected, non-blocking TCP socket. The TLS client owns it; `close()` is called exactly once.
/// (Lives beside the TLS client because libssl reads and writes its descriptor.)
struct TCPConnection {
    let fd: Int32
    /// The numeric address connected to, e.g. `127.0.0.1` or `::1`.
    let address: String

    func close() { _ = Glibc.close(fd) }

    /// Resolves `host` and connects to the first address that answers before `deadline`.
    static func open(host: String, port: UInt16, deadline: ContinuousClock.Instant) throws(ProbeError) -> TCPConnection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            let text = String(cString: gai_strerror(status))
            throw ProbeError(.dnsFailure, "cannot resolve \"\(host)\": \(text)")
        }
        defer { freeaddrinfo(list) }

        var lastError: ProbeError? = nil
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let info = cursor {
            cursor = info.pointee.ai_next
            do {
                return try connect(info.pointee, deadline: deadline)
            } catch {
                lastError = error
                if error.code == .timeout { break }
            }
        }
        throw lastError ?? ProbeError(.dnsFailure, "\"\(host)\" resolved to no usable address")
    }

    private static func connect(_ info: addrinfo, deadline: ContinuousClock.Instant) throws(ProbeError) -> TCPConnection {
        let address = numericAddress(info)
        let fd = socket(info.ai_family, info.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), info.ai_protocol)
        guard fd >= 0 else {
            throw ProbeError(.connectionFailed, "cannot create a socket for \(address): \(String(cString: strerror(errno)))")
        }
        let connection = TCPConnection(fd: fd, address: address)
        if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) != 0 {
            let error = errno
            guard error == EINPROGRESS || error == EINTR else {
                connection.close()
                throw failure(error, address: address)
            }
            do {
                try connection.wait(for: Int16(POLLOUT), until: deadline, during: "the TCP connect to \(address)")
            } catch {
                connection.close()
                throw error
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError != 0 {
                connection.close()
                throw failure(soError, address: address)
            }
        }
        return connection
    }

    private static func failure(_ error: Int32, address: String) -> ProbeError {
        let text = String(cString: strerror(error))
        if error == ECONNREFUSED { return ProbeError(.refused, "\(address) refused the connection (\(text))") }
        if error == ETIMEDOUT { return ProbeError(.timeout, "connecting to \(address) timed out (\(text))") }
        return ProbeError(.connectionFailed, "cannot connect to \(address): \(text)")
    }

    /// Waits until the socket is ready for `events`, or throws `.timeout` at `deadline`.
    func wait(for events: Int16, until deadline: ContinuousClock.Instant, during step: String) throws(ProbeError) {
        while true {
            let remaining = deadline - ContinuousClock.now
            let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            guard milliseconds > 0 else {
                throw ProbeError(.timeout, "timed out during \(step)")
            }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: milliseconds))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw ProbeError(.connectionFailed, "poll failed during \(step): \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func numericAddress(_ info: addrinfo) -> String {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(info.ai_addr, info.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return "?"
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
