import Dispatch
import FoundationEssentials
import TrustEvaluator
import Synchronization
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
    /// - Parameter resolver: Turns the name into addresses within the same deadline.
    static func open(
        host: String, port: UInt16, deadline: ContinuousClock.Instant,
        resolver: NameResolver = .system
    ) throws(ProbeError) -> TCPConnection {
        let addresses = try resolver.resolve(host, port: port, deadline: deadline)
        var lastError: ProbeError? = nil
        for address in addresses {
            do {
                return try connect(address, deadline: deadline)
            } catch {
                lastError = error
                if error.code == .timeout { break }
            }
        }
        throw lastError ?? ProbeError(.dnsFailure, "\"\(host)\" resolved to no usable address")
    }

    private static func connect(_ target: ResolvedAddress, deadline: ContinuousClock.Instant) throws(ProbeError) -> TCPConnection {
        let address = target.numericHost
        let fd = socket(target.family, target.socketType | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), target.protocolNumber)
        guard fd >= 0 else {
            throw ProbeError(.connectionFailed, "cannot create a socket for \(address): \(String(cString: strerror(errno)))")
        }
        let connection = TCPConnection(fd: fd, address: address)
        if target.withSocketAddress({ Glibc.connect(fd, $0, $1) }) != 0 {
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
}

/// One address a lookup found, copied out of getaddrinfo's list, so no C memory outlives the
/// lookup and nothing is shared between the worker thread and the caller but Swift values.
struct ResolvedAddress: Sendable, Hashable {
    let family: Int32
    let socketType: Int32
    let protocolNumber: Int32
    /// The `sockaddr`'s bytes (`ai_addrlen` of them).
    let socketAddress: [UInt8]

    /// Copies every entry of a getaddrinfo list; the caller still frees the list.
    static func copying(_ list: UnsafeMutablePointer<addrinfo>) -> [ResolvedAddress] {
        var addresses: [ResolvedAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let info = cursor?.pointee {
            cursor = info.ai_next
            guard let socketAddress = info.ai_addr,
                info.ai_addrlen > 0, Int(info.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size
            else { continue }
            addresses.append(
                ResolvedAddress(
                    family: info.ai_family, socketType: info.ai_socktype, protocolNumber: info.ai_protocol,
                    socketAddress: Array(UnsafeRawBufferPointer(start: socketAddress, count: Int(info.ai_addrlen)))))
        }
        return addresses
    }

    /// Lends the address as a `sockaddr` (copied into aligned storage) for the length of `body`.
    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: socketAddress) }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(socketAddress.count)) }
        }
    }

    /// The numeric form, e.g. `127.0.0.1` or `::1`.
    var numericHost: String {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = withSocketAddress { getnameinfo($0, $1, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) }
        guard status == 0 else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Turns a host into addresses within the probe's deadline.
///
/// IP literals are parsed on the calling thread (`AI_NUMERICHOST`), and names under `.invalid`
/// fail at once without a query (RFC 6761 §6.4). Any other name is looked up on a worker thread
/// while the caller waits until the deadline. getaddrinfo cannot be cancelled, so a lookup still
/// running at the deadline is abandoned: the worker finishes on its own, frees getaddrinfo's list
/// itself (it hands over only copies, ``ResolvedAddress``), and its answer is dropped.
///
/// A lookup that does not finish in time is `network.dns-failure`, like one the system resolver
/// gave up on (`EAI_AGAIN`), not `network.timeout`: the code names the step that failed, and a
/// person fixes DNS, not the server. The message says it was the timeout.
///
/// At most `maximumLookups` workers run at once, abandoned ones included, so an unresponsive DNS
/// server cannot pile up threads during a scan; a caller that finds no free slot before its
/// deadline fails the same way.
final class NameResolver: Sendable {
    /// A blocking lookup of a name (never an IP literal), run on a worker thread.
    typealias Lookup = @Sendable (_ host: String, _ port: UInt16) -> Result<[ResolvedAddress], ProbeError>

    /// getaddrinfo, at most 32 lookups at once.
    static let system = NameResolver()

    private let lookup: Lookup
    private let maximumLookups: Int
    /// One count per worker that may still start.
    private let slots: DispatchSemaphore

    /// - Parameters:
    ///   - maximumLookups: How many worker threads may run at once.
    ///   - lookup: The blocking lookup; the system's getaddrinfo by default. Tests pass one that stalls.
    init(maximumLookups: Int = 32, lookup: @escaping Lookup = NameResolver.getaddrinfo) {
        self.lookup = lookup
        self.maximumLookups = maximumLookups
        self.slots = DispatchSemaphore(value: maximumLookups)
    }

    /// - Throws: ``ProbeError`` `.dnsFailure` when the name does not resolve before `deadline`.
    func resolve(_ host: String, port: UInt16, deadline: ContinuousClock.Instant) throws(ProbeError) -> [ResolvedAddress] {
        if let addresses = Self.numeric(host, port: port) { return addresses }
        let name = host.lowercased()
        if name == "invalid" || name == "invalid." || name.hasSuffix(".invalid") || name.hasSuffix(".invalid.") {
            throw ProbeError(.dnsFailure, "cannot resolve \"\(host)\": names under .invalid never resolve (RFC 6761)")
        }
        guard slots.wait(timeout: dispatchTime(deadline)) == .success else {
            throw ProbeError(
                .dnsFailure, "cannot resolve \"\(host)\": \(maximumLookups) earlier lookups are still running and none finished within the timeout")
        }
        let pending = PendingLookup()
        let lookup = self.lookup
        let slots = self.slots
        // getaddrinfo's NSS modules get a megabyte of stack (reserved address space, not memory).
        let started = DetachedThread.start(stackSize: 1 << 20) {
            let result = lookup(host, port)
            slots.signal()
            pending.finish(result)
        }
        guard started else {
            slots.signal()
            throw ProbeError(.dnsFailure, "cannot resolve \"\(host)\": no thread could be started for the lookup")
        }
        guard let result = pending.wait(until: deadline) else {
            throw ProbeError(.dnsFailure, "cannot resolve \"\(host)\": no answer within the timeout")
        }
        return try result.get()
    }

    /// An IP literal's address, without a lookup; `nil` for a name.
    static func numeric(_ host: String, port: UInt16) -> [ResolvedAddress]? {
        guard case .success(let addresses) = addresses(host, port: port, flags: AI_NUMERICHOST | AI_NUMERICSERV),
            !addresses.isEmpty
        else { return nil }
        return addresses
    }

    /// The system resolver (blocking).
    static let getaddrinfo: Lookup = { host, port in
        addresses(host, port: port, flags: AI_NUMERICSERV)
    }

    private static func addresses(_ host: String, port: UInt16, flags: Int32) -> Result<[ResolvedAddress], ProbeError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = flags
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = Glibc.getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            let text = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(ProbeError(.dnsFailure, "cannot resolve \"\(host)\": \(text)"))
        }
        defer { freeaddrinfo(list) }
        return .success(ResolvedAddress.copying(list))
    }

    /// Where a worker leaves its answer. The caller may stop waiting at any time; the answer is
    /// then released with this object when the worker lets go of it.
    private final class PendingLookup: Sendable {
        private let result = Locked<Result<[ResolvedAddress], ProbeError>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        func finish(_ answer: Result<[ResolvedAddress], ProbeError>) {
            result.withLock { $0 = answer }
            done.signal()
        }

        func wait(until deadline: ContinuousClock.Instant) -> Result<[ResolvedAddress], ProbeError>? {
            guard done.wait(timeout: dispatchTime(deadline)) == .success else { return nil }
            return result.withLock { $0 }
        }
    }
}

/// `deadline` on Dispatch's clock (both are monotonic); now if it has passed.
private func dispatchTime(_ deadline: ContinuousClock.Instant) -> DispatchTime {
    let remaining = deadline - ContinuousClock.now
    guard remaining > .zero else { return .now() }
    let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
    return .now() + min(seconds, 365 * 86_400)
}
