internal import COpenSSL
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An http URL that Pincheck agrees to fetch: the scheme in any case, a host name or IP literal,
/// an optional port, and a path of visible ASCII with well-formed percent escapes. No user
/// information, no fragment, no space, CR, LF or other control byte: what a certificate names is
/// never allowed to shape the request line or its headers.
package struct HTTPURL: Sendable, Hashable {
    /// The host in lower case; an IPv6 literal without its brackets.
    package let host: String
    package let port: Int
    /// The path with its query, as it goes on the request line (`/` when the URL has none).
    package let path: String

    /// Why `text` is not a URL Pincheck fetches; nil when it is.
    package static func problem(_ text: String) -> String? {
        switch parse(text) {
        case .success: nil
        case .failure(let why): why.text
        }
    }

    package init?(_ text: String) {
        guard case .success(let url) = Self.parse(text) else { return nil }
        self = url
    }

    private init(host: String, port: Int, path: String) {
        self.host = host
        self.port = port
        self.path = path
    }

    /// `host:port` as the Host header and the origin comparison read it (brackets around IPv6).
    package var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }

    /// `http://authority/path`, normalised (lower-case scheme and host).
    package var text: String { "http://\(authority)\(path)" }

    /// True when `other` is on the same host and port (the scheme is always http).
    package func sameOrigin(as other: HTTPURL) -> Bool { host == other.host && port == other.port }

    package struct Problem: Error, Sendable { let text: String }

    private static func parse(_ text: String) -> Result<HTTPURL, Problem> {
        let bytes = Array(text.utf8)
        guard bytes.count <= 2048 else { return .failure(Problem(text: "the URL is longer than 2048 bytes")) }
        guard bytes.count > 7, bytes.prefix(7).map({ $0 | 0x20 }) == Array("http://".utf8) else {
            return .failure(Problem(text: "only http URLs are fetched"))
        }
        for byte in bytes where byte <= 0x20 || byte >= 0x7F {
            let what =
                switch byte {
                case 0x0D: "a carriage return"
                case 0x0A: "a line feed"
                case 0x20: "a space"
                case 0x7F...: "a byte outside ASCII"
                default: "a control byte"
                }
            return .failure(Problem(text: "the URL contains \(what)"))
        }
        let rest = bytes.dropFirst(7)
        let end = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let authority = rest[rest.startIndex..<end]
        var path = Array(rest[end...])
        if path.first == UInt8(ascii: "?") { path.insert(UInt8(ascii: "/"), at: 0) }
        if path.isEmpty { path = Array("/".utf8) }
        if path.contains(UInt8(ascii: "#")) { return .failure(Problem(text: "the URL has a fragment")) }
        var index = 0
        while index < path.count {
            if path[index] == UInt8(ascii: "%") {
                guard index + 2 < path.count, isHex(path[index + 1]), isHex(path[index + 2]) else {
                    return .failure(Problem(text: "the URL has a malformed percent escape"))
                }
                index += 3
            } else {
                index += 1
            }
        }
        guard !authority.contains(UInt8(ascii: "@")) else { return .failure(Problem(text: "the URL carries user information")) }
        var hostPart = authority[...]
        var port = 80
        if hostPart.first == UInt8(ascii: "[") {
            guard let close = hostPart.firstIndex(of: UInt8(ascii: "]")) else {
                return .failure(Problem(text: "the URL's IPv6 literal is not closed"))
            }
            let literal = String(decoding: hostPart[hostPart.index(after: hostPart.startIndex)..<close], as: UTF8.self)
            guard IPAddress(literal)?.isV6 == true else { return .failure(Problem(text: "the URL's IPv6 literal is malformed")) }
            let after = hostPart[hostPart.index(after: close)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":"), let number = portNumber(after.dropFirst()) else {
                    return .failure(Problem(text: "the URL's port is malformed"))
                }
                port = number
            }
            return .success(HTTPURL(host: literal.lowercased(), port: port, path: String(decoding: path, as: UTF8.self)))
        }
        if let colon = hostPart.firstIndex(of: UInt8(ascii: ":")) {
            guard let number = portNumber(hostPart[hostPart.index(after: colon)...]) else {
                return .failure(Problem(text: "the URL's port is malformed"))
            }
            port = number
            hostPart = hostPart[..<colon]
        }
        let host = String(decoding: hostPart, as: UTF8.self).lowercased()
        guard !host.isEmpty, host.utf8.count <= 253,
            host.utf8.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") })
        else {
            return .failure(Problem(text: "the URL's host is not a host name or IP address"))
        }
        return .success(HTTPURL(host: host, port: port, path: String(decoding: path, as: UTF8.self)))
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static func portNumber(_ digits: some Collection<UInt8>) -> Int? {
        guard (1...5).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(value)
        else { return nil }
        return value
    }
}

/// An IPv4 or IPv6 address, read from its text or from a socket address.
package struct IPAddress: Sendable, Hashable {
    /// 4 or 16 bytes, network order.
    package let bytes: [UInt8]

    package var isV6: Bool { bytes.count == 16 }

    package init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    package init(bytes: [UInt8]) { self.bytes = bytes }

    /// Why a fetch must never reach this address; nil when it may. Link-local addresses (where
    /// the cloud providers' metadata services answer), the metadata addresses outside that range,
    /// unspecified, multicast and reserved addresses are refused always; loopback unless allowed.
    /// IPv4 carried in IPv6 (mapped, NAT64) is judged as the IPv4 address it carries.
    package func forbidden(allowingLoopback: Bool) -> String? {
        forbidden(allowingLoopback: allowingLoopback, allowingPrivate: true)
    }

    /// The same, and private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) refused
    /// unless `allowingPrivate`.
    package func forbidden(allowingLoopback: Bool, allowingPrivate: Bool) -> String? {
        if isV6 {
            let b = bytes
            if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
                return IPAddress(bytes: Array(b[12...])).forbidden(allowingLoopback: allowingLoopback, allowingPrivate: allowingPrivate)
            }
            if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
                return IPAddress(bytes: Array(b[12...])).forbidden(allowingLoopback: allowingLoopback, allowingPrivate: allowingPrivate)
            }
            if !allowingPrivate && (b[0] & 0xFE) == 0xFC { return "a private (unique local) address" }
            if b.allSatisfy({ $0 == 0 }) { return "the unspecified address" }
            if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return allowingLoopback ? nil : "a loopback address" }
            if b[0] == 0xFE && (b[1] & 0xC0) == 0x80 { return "a link-local address" }
            if b[0] == 0xFF { return "a multicast address" }
            // AWS's instance metadata service over IPv6.
            if b == [0xFD, 0x00, 0x0E, 0xC2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54] { return "a cloud metadata address" }
            return nil
        }
        let b = bytes
        switch b[0] {
        case 0: return "the unspecified network (0.0.0.0/8)"
        case 127: return allowingLoopback ? nil : "a loopback address"
        case 169 where b[1] == 254: return "a link-local address (cloud metadata services answer there)"
        case 224...239: return "a multicast address"
        case 240...255: return "a reserved or broadcast address"
        default: break
        }
        // Alibaba Cloud's metadata service, outside the link-local range.
        if b == [100, 100, 100, 200] { return "a cloud metadata address" }
        if !allowingPrivate {
            if b[0] == 10 || (b[0] == 172 && (b[1] & 0xF0) == 16) || (b[0] == 192 && b[1] == 168) { return "a private address" }
            if b[0] == 100 && (b[1] & 0xC0) == 64 { return "a shared (carrier-grade NAT) address" }
        }
        return nil
    }

    /// An IPv4 address in any spelling the resolver and proxies accept for one: `2130706433`,
    /// `0x7f000001`, `0177.0.0.1`, `127.1` (inet_aton's forms); nil for anything else.
    package init?(legacyIPv4 text: String) {
        guard !text.isEmpty,
            text.utf8.allSatisfy({
                $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "x") || $0 == UInt8(ascii: "X")
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0)
            })
        else { return nil }
        var v4 = in_addr()
        guard inet_aton(text, &v4) != 0 else { return nil }
        bytes = withUnsafeBytes(of: &v4) { Array($0) }
    }

    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isV6 ? AF_INET6 : AF_INET
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// HTTP GET of a CRL through OpenSSL's HTTP client (`OSSL_HTTP_open`, `OSSL_HTTP_exchange`), with
/// the connection made here: the host is resolved and every address vetted before one is
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

    private enum Exchange {
        case body([UInt8])
        case redirect(String)
        case failure(Failure)
    }

    private static func exchange(
        _ url: HTTPURL, maximumBytes: Int, deadline: ContinuousClock.Instant, seconds: Int, proxy: String?,
        destinations: Destinations
    ) -> Exchange {
        OpenSSLErrorStack.clear()
        let portText = String(url.port)
        // The proxy this URL goes through, after no_proxy (OpenSSL reads the environment when nil).
        // OSSL_HTTP_adapt_proxy hands back the pointer it was given (or getenv's): it is copied
        // while the C strings passed in are still alive.
        let viaProxy: String? =
            proxy == ""
            ? nil
            : url.host.withCString { host in
                guard let proxy else { return OSSL_HTTP_adapt_proxy(nil, nil, host, 0).map { String(cString: $0) } }
                return proxy.withCString { given in OSSL_HTTP_adapt_proxy(given, nil, host, 0).map { String(cString: $0) } }
            }
        if let why = destinations.forbidden(host: url.host) {
            return .failure(.refused("\(url.host) is \(why), which \(Self.refusal(why))"))
        }
        var socketBIO: OpaquePointer? = nil
        if viaProxy == nil {
            switch connect(url, deadline: deadline, seconds: seconds, destinations: destinations) {
            case .success(let descriptor):
                guard let bio = BIO_new_socket(descriptor, BIO_CLOSE) else {
                    Glibc.close(descriptor)
                    return .failure(.unavailable("no memory for the connection"))
                }
                socketBIO = bio
            case .failure(let failure):
                return .failure(failure)
            }
        }
        defer { if let socketBIO { BIO_free_all(socketBIO) } }
        let remaining = max(1, Int((deadline - ContinuousClock.now).components.seconds) + 1)
        // With a connection of ours, it is given as the reading side too: OpenSSL then neither
        // connects it (it is connected) nor frees it (the defer above does).
        guard
            let context = OSSL_HTTP_open(
                url.host, portText, viaProxy, nil, 0, socketBIO, socketBIO, nil, nil, 0, Int32(clamping: min(remaining, seconds)))
        else {
            return .failure(failure(OpenSSLErrorStack.drain(), maximumBytes: maximumBytes, deadline: deadline, seconds: seconds))
        }
        var ok: Int32 = 0
        defer { OSSL_HTTP_close(context, ok) }
        var headers: OpaquePointer? = nil
        defer { shim_sk_CONF_VALUE_pop_free(headers) }
        _ = X509V3_add_value("Host", url.authority, &headers)
        guard OSSL_HTTP_set1_request(context, url.path, headers, nil, nil, nil, 1, max(1, maximumBytes), -1, 0) == 1 else {
            return .failure(.unavailable(OpenSSLErrorStack.drain().map(\.description).joined(separator: "; ")))
        }
        var redirection: UnsafeMutablePointer<CChar>? = nil
        let response = OSSL_HTTP_exchange(context, &redirection)
        if let redirection {
            defer { shim_OPENSSL_free(redirection) }
            OpenSSLErrorStack.clear()
            return .redirect(String(cString: redirection))
        }
        guard let response else {
            return .failure(failure(OpenSSLErrorStack.drain(), maximumBytes: maximumBytes, deadline: deadline, seconds: seconds))
        }
        // OSSL_HTTP_exchange hands back a reference of the caller's own (BIO_up_ref): freed here.
        defer { BIO_free_all(response) }
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { BIO_read(response, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { break }
            body += buffer.prefix(Int(count))
            guard body.count <= maximumBytes else { return .failure(.tooLarge(limit: maximumBytes)) }
        }
        OpenSSLErrorStack.clear()
        ok = 1
        return .body(body)
    }

    /// Whether OpenSSL says time ran out: its HTTP client's retry timeout, or a BIO's connect or
    /// transfer timeout. OpenSSL keeps its own clock, in whole seconds, which can run out just
    /// before the deadline here; a fetch it cut for time is still a timeout, not "unavailable".
    private static func saysTimedOut(_ entries: [OpenSSLErrorEntry]) -> Bool {
        say(entries, library: ERR_LIB_HTTP, [HTTP_R_RETRY_TIMEOUT])
            || say(entries, library: ERR_LIB_BIO, [BIO_R_TRANSFER_TIMEOUT, BIO_R_CONNECT_TIMEOUT])
    }

    /// Whether one of `entries` is from `library` for one of `reasons`.
    private static func say(_ entries: [OpenSSLErrorEntry], library: Int32, _ reasons: [Int32]) -> Bool {
        entries.contains { ERR_GET_LIB($0.code) == library && reasons.contains(ERR_GET_REASON($0.code)) }
    }

    /// What a fetch that OpenSSL ended with `entries` failed of. Internal for the tests, which
    /// raise OpenSSL's own errors: the race between its clock and `deadline` is not reproducible.
    static func failure(_ entries: [OpenSSLErrorEntry], maximumBytes: Int, deadline: ContinuousClock.Instant, seconds: Int) -> Failure {
        if say(entries, library: ERR_LIB_HTTP, [HTTP_R_MAX_RESP_LEN_EXCEEDED, HTTP_R_ASN1_LEN_EXCEEDS_MAX_RESP_LEN]) {
            return .tooLarge(limit: maximumBytes)
        }
        if say(entries, library: ERR_LIB_HTTP, [HTTP_R_MISSING_ASN1_ENCODING, HTTP_R_ERROR_PARSING_ASN1_LENGTH]) {
            return .notDER
        }
        if ContinuousClock.now >= deadline || saysTimedOut(entries) {
            return .timedOut(seconds: seconds)
        }
        return .unavailable(entries.isEmpty ? "no response" : entries.map(\.description).joined(separator: "; "))
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
