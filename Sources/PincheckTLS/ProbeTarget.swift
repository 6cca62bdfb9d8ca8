import TrustEvaluator
/// A host and port to probe, parsed from `HOST`, `HOST:PORT`, `[IPV6]:PORT`, `[IPV6]` or a bare IPv6 literal.
public struct ProbeTarget: Sendable, Hashable, CustomStringConvertible {
    /// The DNS name or IP literal to connect to (IPv6 without brackets); parsed names are in their
    /// canonical form (lowercase, A-labels, no trailing dot).
    public let host: String
    /// The TCP port.
    public let port: UInt16

    /// - Parameters:
    ///   - host: A DNS name or IP literal (IPv6 without brackets).
    ///   - port: The TCP port.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST[:PORT]`.
    /// - Parameters:
    ///   - text: `example.com`, `example.com:8443`, `[::1]:8443`, `::1`.
    ///   - defaultPort: The port when none is given; 443 by default.
    /// - Throws: ``PincheckError`` with code `host.invalid` for an empty host or a bad port.
    public init(parsing text: String, defaultPort: UInt16 = 443) throws(PincheckError) {
        let trimmed = text.trimmingWhitespaceCharacters()
        var host = trimmed
        var portText: Substring? = nil
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw PincheckError(.invalidHost, "\"\(text)\": missing ] after the IPv6 address")
            }
            host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else {
                    throw PincheckError(.invalidHost, "\"\(text)\": expected :PORT after ]")
                }
                portText = rest.dropFirst()
            }
        } else if let colon = trimmed.lastIndex(of: ":"), trimmed.firstIndex(of: ":") == colon {
            host = String(trimmed[..<colon])
            portText = trimmed[trimmed.index(after: colon)...]
        }
        // More than one colon without brackets: a bare IPv6 literal, default port.
        if host.contains(":") {
            guard HostName.isIPv6(host) else {
                throw PincheckError(.invalidHost, "\"\(text)\" is not HOST, HOST:PORT or [IPV6]:PORT")
            }
        } else {
            // The name as DNS and the certificate know it: an internationalised name is looked up
            // by its A-labels, as browsers do (getaddrinfo does not convert it).
            do {
                host = try HostName.peerName(for: host).text
            } catch {
                throw PincheckError(.invalidHost, "\"\(text)\" is not HOST, HOST:PORT or [IPV6]:PORT: \(error.message)")
            }
        }
        var port = defaultPort
        if let portText {
            guard let value = UInt16(portText), value > 0 else {
                throw PincheckError(.invalidHost, "\"\(text)\": \"\(portText)\" is not a port (1–65535)")
            }
            port = value
        }
        self.init(host: host, port: port)
    }

    /// `host:port`, with IPv6 literals in brackets.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
