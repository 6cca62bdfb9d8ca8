import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The name a certificate must carry: a DNS name (A-labels, lowercase) or an IP address literal.
package enum PeerName: Sendable, Hashable {
    case dns(String)
    case ipAddress(String)

    package var text: String {
        switch self {
        case .dns(let name): name
        case .ipAddress(let address): address
        }
    }
}

/// The one host normaliser: turns the host a caller asks about (or a pattern's base) into the
/// name a certificate must carry. Every entry point normalises once, here.
package enum HostName {
    /// Lowercases, drops one trailing dot and IPv6 brackets, converts internationalised labels to
    /// A-labels (`xn--…`), recognises IP literals, and rejects what no certificate can match.
    package static func peerName(for host: String) throws(PincheckError) -> PeerName {
        // Nearly every caller passes a name that is already canonical: take it as it is.
        if isCanonicalDNSName(host) { return .dns(host) }
        return try normalise(aLabels(host), given: host)
    }

    private static func normalise(_ host: String, given original: String) throws(PincheckError) -> PeerName {
        let host = host
        // C APIs (inet_pton, SNI) would read only up to a NUL: "127.0.0.1\0evil.example" must not
        // become 127.0.0.1. No control character belongs in a host name.
        guard !host.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D || $0 == 0x7F }) else {
            throw PincheckError(.invalidHost, "the host name contains a NUL or another control character")
        }
        var name = host.trimmingWhitespaceCharacters()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if isIPv4(name) || isIPv6(name) { return .ipAddress(name.lowercased()) }
        if name.hasSuffix(".") { name.removeLast() }
        name = name.lowercased()
        guard !name.isEmpty else { throw PincheckError(.invalidHost, "the host name is empty") }
        guard name.utf8.count <= 253 else { throw PincheckError(.invalidHost, "host name \"\(host)\" is longer than 253 characters") }
        guard name.unicodeScalars.allSatisfy(\.isASCII) else {
            throw PincheckError(.invalidHost, "host name \"\(original)\" cannot be converted to A-labels (xn--…)")
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-_".unicodeScalars)
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, label.utf8.count <= 63 else {
                throw PincheckError(.invalidHost, "host name \"\(host)\" has an empty or over-long label")
            }
            guard label.unicodeScalars.allSatisfy(allowed.contains) else {
                throw PincheckError(.invalidHost, "host name \"\(host)\" contains characters a DNS name cannot (only letters, digits, '-' and '_')")
            }
        }
        return .dns(name)
    }

    /// True for lowercase letter/digit/`-`/`_` labels of 1–63 bytes, at most 253 bytes in all, with
    /// no trailing dot and at least one non-digit (so never an IPv4 literal): exactly what the full
    /// normalisation below would return unchanged. One pass over the bytes, no allocation.
    private static func isCanonicalDNSName(_ host: String) -> Bool {
        let bytes = host.utf8
        guard (1...253).contains(bytes.count) else { return false }
        var labelLength = 0
        var hasNonDigit = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                hasNonDigit = true
                labelLength += 1
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                labelLength += 1
            case UInt8(ascii: "."):
                guard labelLength > 0 else { return false }
                labelLength = 0
                continue
            default:
                return false
            }
            guard labelLength <= 63 else { return false }
        }
        return labelLength > 0 && hasNonDigit
    }

    /// Converts each non-ASCII label to its `xn--` form (after lowercasing); ASCII is unchanged.
    static func aLabels(_ host: String) -> String {
        guard !host.unicodeScalars.allSatisfy(\.isASCII) else { return host }
        // IDNA2008 maps to lowercase NFC before encoding; full UTS #46 mapping is not attempted.
        // NFC from the standard library (what Foundation's precomposedStringWithCanonicalMapping
        // gives, without linking Foundation; a test compares the two).
        let mapped = String(decoding: host.lowercased()._nfcCodeUnits, as: UTF8.self)
        let separators: Set<Character> = [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"]
        return mapped.split(omittingEmptySubsequences: false, whereSeparator: separators.contains)
            .map { Punycode.aLabel(String($0)) ?? String($0) }
            .joined(separator: ".")
    }

    package static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    package static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }
}
