internal import PincheckOpenSSL
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// HTTP GET of a CRL or an issuer certificate: the request through OpenSSL's HTTP client (the
/// C module's `OpenSSLHTTP`), the decisions here, with the connection made here: the host is resolved and every address vetted before one is
/// connected to, so a name that resolves to a metadata service or (from a remote certificate)
/// to this machine's loopback reaches nothing. A redirect is followed only on the same host and
/// port, at most three times: CDNs move paths, and another host is what an attacker on the path
/// needs. Blocking: run it off any event loop.
package enum HTTPFetch {
    /// Why a fetch failed.
    package enum Failure: Error, Sendable, Hashable {
        /// The response was larger than allowed (by its Content-Length or its bytes).
        case tooLarge(limit: Int)
        /// Connecting or transferring took longer than allowed.
        case timedOut(seconds: Int)
        /// The body is not DER (not ASN.1 at all).
        case notDER
        /// No answer: refused, unreachable, not HTTP, an error status; OpenSSL's words.
        case unavailable(String)
        /// Not fetched: the URL, its destination or a redirect is not one Pincheck goes to.
        case refused(String)

        init(_ failure: OpenSSLHTTP.Failure) {
            self =
                switch failure {
                case .tooLarge(let limit): .tooLarge(limit: limit)
                case .timedOut(let seconds): .timedOut(seconds: seconds)
                case .notDER: .notDER
                case .unavailable(let why): .unavailable(why)
                }
        }
    }

    /// Which destinations a fetch may reach. The rule, in one place (docs/revocation.md says it
    /// too): never a link-local, metadata, unspecified, multicast or reserved address, nor a
    /// cloud metadata name; loopback (and `localhost`) only when allowed; private networks unless
    /// refused. Names are vetted as the URL spells them, whether or not a proxy is used (a proxy
    /// resolves what it is handed, so an IP literal in any spelling is judged as its address);
    /// without a proxy every address a name resolves to is vetted too.
    package struct Destinations: Sendable, Hashable {
        /// Loopback addresses: only when the certificates come from this machine (a test, a
        /// local server); never for a remote peer's certificate.
        package var loopback: Bool
        /// Private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7): where enterprise
        /// CRLs live, so allowed unless an operator or a public-facing road refuses them.
        package var privateNetworks: Bool

        package init(loopback: Bool = false, privateNetworks: Bool = true) {
            self.loopback = loopback
            self.privateNetworks = privateNetworks
        }

        /// Names of cloud metadata services (the addresses they answer at are refused by address).
        static let metadataNames: Set<String> = [
            "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
            "instance-data.ec2.internal", "metadata.azure.internal", "metadata.oraclecloud.com",
        ]

        /// Why a URL naming `host` must not be fetched; nil when it may be tried.
        package func forbidden(host: String) -> String? {
            var name = host.lowercased()
            while name.hasSuffix(".") { name.removeLast() }
            if let address = IPAddress(name) ?? IPAddress(legacyIPv4: name) {
                return address.forbidden(allowingLoopback: loopback, allowingPrivate: privateNetworks)
            }
            if name == "localhost" || name.hasSuffix(".localhost") { return loopback ? nil : "a loopback name" }
            if Self.metadataNames.contains(name) { return "a cloud metadata name" }
            return nil
        }
    }

    /// The end of a refusal's sentence: what is never fetched, and what can be allowed, with its knob.
    static func refusal(_ why: String) -> String {
        if why.contains("loopback") {
            return "Pincheck fetches only when loopback is allowed (RevocationListFetcher.Limits.allowsLoopback; certificates from this machine only)"
        }
        if why.contains("private") || why.contains("shared (carrier") {
            return "this fetcher refuses (RevocationListFetcher.Limits.allowsPrivateNetworks, or the command's --refuse-private-fetches)"
        }
        return "Pincheck never fetches from"
    }

    /// The most redirects followed (same host and port only).
    package static let maximumRedirects = 3

    /// The body of `url`, at most `maximumBytes` long.
    /// - Parameters:
    ///   - timeout: For resolving (when no proxy is used), connecting and the transfer together.
    ///   - proxy: nil honours `http_proxy`/`no_proxy` from the environment; "" uses none. Through
    ///     a proxy the proxy resolves names: the URL's name is vetted here (``Destinations``).
    package static func get(
        _ url: String, maximumBytes: Int, timeout: Duration, proxy: String?,
        destinations: Destinations = Destinations()
    ) -> Result<[UInt8], Failure> {
        if let why = HTTPURL.problem(url) { return .failure(.refused(why)) }
        guard var current = HTTPURL(url) else { return .failure(.refused("the URL is malformed")) }
        let deadline = ContinuousClock.now + timeout
        let seconds = Int(timeout.components.seconds) + (timeout.components.attoseconds > 0 ? 1 : 0)
        for _ in 0...maximumRedirects {
            switch exchange(
                current, maximumBytes: maximumBytes, deadline: deadline, seconds: max(1, seconds), proxy: proxy,
                destinations: destinations)
            {
            case .body(let bytes): return .success(bytes)
            case .failure(let failure): return .failure(failure)
            case .redirect(let location):
                let target: HTTPURL?
                if location.hasPrefix("/") && !location.hasPrefix("//") {
                    target = HTTPURL("http://\(current.authority)\(location)")
                } else {
                    target = HTTPURL(location)
                }
                guard let target else {
                    return .failure(.refused("the server redirected to \"\(location.prefix(200))\", which is not an http URL Pincheck fetches"))
                }
                guard target.sameOrigin(as: current) else {
                    return .failure(
                        .refused(
                            "the server redirected to another host or port (\(target.authority)); only redirects on \(current.authority) are followed"
                        ))
                }
                current = target
            }
        }
        return .failure(.refused("more than \(maximumRedirects) redirects"))
    }

    private enum Step {
        case body([UInt8])
        case redirect(String)
        case failure(Failure)
    }

    /// One request on `url`: its destination vetted and the connection made here (or the proxy's),
    /// the request itself through OpenSSL.
    private static func exchange(
        _ url: HTTPURL, maximumBytes: Int, deadline: ContinuousClock.Instant, seconds: Int, proxy: String?,
        destinations: Destinations
    ) -> Step {
        // The proxy this URL goes through, after no_proxy ("" is none; nil reads the environment).
        let viaProxy = proxy == "" ? nil : OpenSSLHTTP.proxy(for: url.host, given: proxy)
        if let why = destinations.forbidden(host: url.host) {
            return .failure(.refused("\(url.host) is \(why), which \(Self.refusal(why))"))
        }
        var socket: Int32?
        if viaProxy == nil {
            switch connect(url, deadline: deadline, seconds: seconds, destinations: destinations) {
            case .success(let descriptor): socket = descriptor
            case .failure(let failure): return .failure(failure)
            }
        }
        switch OpenSSLHTTP.get(
            host: url.host, port: url.port, authority: url.authority, path: url.path, proxy: viaProxy, socket: socket,
            maximumBytes: maximumBytes, deadline: deadline, seconds: seconds)
        {
        case .body(let bytes): return .body(bytes)
        case .redirect(let location): return .redirect(location)
        case .failure(let failure): return .failure(Failure(failure))
        }
    }

    /// A non-blocking TCP connection to the first vetted address of `url`'s host that answers
    /// before `deadline`. Every address the name resolves to is vetted first: one forbidden
    /// address refuses the name (a resolver answering a public and a metadata address must not
    /// get the second tried).
    /// One resolved address of a host.
    private struct Candidate {
        let family: Int32
        let address: [UInt8]
        let ip: IPAddress
    }

    private static func connect(_ url: HTTPURL, deadline: ContinuousClock.Instant, seconds: Int, destinations: Destinations) -> Result<Int32, Failure>
    {
        let candidates: [Candidate]
        switch resolve(url, destinations: destinations) {
        case .success(let resolved): candidates = resolved
        case .failure(let failure): return .failure(failure)
        }
        var last = "no address answered"
        for candidate in candidates {
            guard ContinuousClock.now < deadline else { return .failure(.timedOut(seconds: seconds)) }
            switch connect(candidate, deadline: deadline) {
            case .success(let descriptor): return .success(descriptor)
            case .failure(.timedOut): return .failure(.timedOut(seconds: seconds))
            case .failure(.unavailable(let why)): last = why
            case .failure(let other): return .failure(other)
            }
        }
        return .failure(.unavailable("could not connect to \(url.authority): \(last)"))
    }

    /// Every address of the host, each of them one the destinations allow (any other refuses the fetch).
    private static func resolve(_ url: HTTPURL, destinations: Destinations) -> Result<[Candidate], Failure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(url.host, String(url.port), &hints, &list)
        guard status == 0, let list else {
            return .failure(.unavailable("\(url.host) could not be resolved: \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(list) }
        var candidates: [Candidate] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            defer { entry = current.pointee.ai_next }
            guard let raw = current.pointee.ai_addr else { continue }
            let bytes = Array(UnsafeRawBufferPointer(start: raw, count: Int(current.pointee.ai_addrlen)))
            let ip: IPAddress
            switch current.pointee.ai_family {
            case AF_INET:
                ip = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin_addr
                    return IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })
                }
            case AF_INET6:
                ip = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin6_addr
                    return IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })
                }
            default: continue
            }
            if let why = ip.forbidden(allowingLoopback: destinations.loopback, allowingPrivate: destinations.privateNetworks) {
                return .failure(.refused("\(url.host) resolves to \(ip.description), \(why), which \(Self.refusal(why))"))
            }
            candidates.append(Candidate(family: current.pointee.ai_family, address: bytes, ip: ip))
        }
        guard !candidates.isEmpty else { return .failure(.unavailable("\(url.host) has no address")) }
        return .success(candidates)
    }

    /// A non-blocking connect to one address, waited for until `deadline`.
    private static func connect(_ candidate: Candidate, deadline: ContinuousClock.Instant) -> Result<Int32, Failure> {
        let descriptor = socket(candidate.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return .failure(.unavailable(String(cString: strerror(errno)))) }
        let started = candidate.address.withUnsafeBytes { raw in
            Glibc.connect(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if started == 0 { return .success(descriptor) }
        guard errno == EINPROGRESS else {
            let why = "\(candidate.ip.description): \(String(cString: strerror(errno)))"
            Glibc.close(descriptor)
            return .failure(.unavailable(why))
        }
        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        var ready: Int32 = 0
        repeat {
            let left = deadline - ContinuousClock.now
            let milliseconds = max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            ready = poll(&poller, 1, Int32(clamping: milliseconds))
        } while ready < 0 && errno == EINTR
        if ready == 0 {
            Glibc.close(descriptor)
            return .failure(.timedOut(seconds: 0))
        }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &size)
        if ready > 0 && error == 0 { return .success(descriptor) }
        let why = "\(candidate.ip.description): \(String(cString: strerror(error == 0 ? errno : error)))"
        Glibc.close(descriptor)
        return .failure(.unavailable(why))
    }
}
