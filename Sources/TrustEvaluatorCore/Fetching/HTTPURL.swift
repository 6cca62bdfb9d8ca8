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
        if let problem = pathProblem(path) { return .failure(problem) }
        switch hostAndPort(authority) {
        case .success(let (host, port)): return .success(HTTPURL(host: host, port: port, path: String(decoding: path, as: UTF8.self)))
        case .failure(let problem): return .failure(problem)
        }
    }

    /// What makes a path (with its query) unfit for the request line: a fragment, a broken percent escape.
    private static func pathProblem(_ path: [UInt8]) -> Problem? {
        if path.contains(UInt8(ascii: "#")) { return Problem(text: "the URL has a fragment") }
        var index = 0
        while index < path.count {
            if path[index] == UInt8(ascii: "%") {
                guard index + 2 < path.count, isHex(path[index + 1]), isHex(path[index + 2]) else {
                    return Problem(text: "the URL has a malformed percent escape")
                }
                index += 3
            } else {
                index += 1
            }
        }
        return nil
    }

    /// The authority's host (lower case; an IPv6 literal without brackets) and port (80 when none).
    private static func hostAndPort(_ authority: ArraySlice<UInt8>) -> Result<(String, Int), Problem> {
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
            return .success((literal.lowercased(), port))
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
        return .success((host, port))
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
