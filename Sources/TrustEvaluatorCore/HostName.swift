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
    /// Whether `host` is an IP literal as certificates are matched against it (IPv4, IPv6 with or
    /// without brackets): what a road must not send as SNI or `:authority`. A name that is neither
    /// a valid name nor an address is not one.
    package static func isIPLiteral(_ host: String) -> Bool {
        if case .ipAddress? = try? peerName(for: host) { return true }
        return false
    }

    package static func peerName(for host: String) throws(PincheckError) -> PeerName {
        // Nearly every caller passes a name that is already canonical: take it as it is.
        if isCanonicalDNSName(host) { return .dns(host) }
        if host.unicodeScalars.allSatisfy(\.isASCII) { return try normalise(host, given: host) }
        return try normalise(aLabels(mappingUTS46(host)), given: host)
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
        // IDNA2008 maps to lowercase NFC before encoding. Of UTS #46's mapping only what
        // ``mappingUTS46(_:)`` does is attempted.
        // NFC from the standard library (what Foundation's precomposedStringWithCanonicalMapping
        // gives, without linking Foundation; a test compares the two).
        let mapped = String(decoding: host.lowercased()._nfcCodeUnits, as: UTF8.self)
        let separators: Set<Character> = [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"]
        return mapped.split(omittingEmptySubsequences: false, whereSeparator: separators.contains)
            .map { Punycode.aLabel(String($0)) ?? String($0) }
            .joined(separator: ".")
    }

    /// Code points UTS #46 maps to nothing (status `ignored` in Unicode 16.0's IdnaMappingTable):
    /// the soft hyphen, zero-width space, word joiner, variation selectors, the byte order mark,
    /// Hangul fillers. Browsers' URL parsers, OkHttp and Java's IDN drop them, so `ex\u{AD}ample.com`
    /// is example.com; encoding them instead would make a different, invisible A-label.
    private static let ignoredByUTS46: [ClosedRange<UInt32>] = [
        0x00AD...0x00AD, 0x034F...0x034F, 0x115F...0x1160, 0x17B4...0x17B5, 0x180B...0x180F, 0x200B...0x200B,
        0x2060...0x2064, 0x206A...0x206F, 0x3164...0x3164, 0xFE00...0xFE0F, 0xFEFF...0xFEFF, 0xFFA0...0xFFA0,
        0x1BCA0...0x1BCA3, 0x1D173...0x1D17A, 0xE0100...0xE01EF,
    ]

    /// The part of UTS #46's mapping that changes what a certificate must carry, for a name that is
    /// not all ASCII: white space at either end is trimmed (a name pasted from a web page), ignored
    /// code points are dropped, full-width ASCII (U+FF01–U+FF5E, from an East Asian input method)
    /// becomes ASCII. What is left may not hold a space, control, format, private-use, unassigned
    /// or surrogate code point anywhere: UTS #46 disallows them, and a name holding one would be
    /// encoded into an A-label no certificate carries. ZWNJ and ZWJ stay (IDNA2008 allows them in
    /// context) and are encoded.
    private static func mappingUTS46(_ host: String) throws(PincheckError) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in host.trimmingWhitespaceCharacters().unicodeScalars {
            let value = scalar.value
            if ignoredByUTS46.contains(where: { $0.contains(value) }) { continue }
            if (0xFF01...0xFF5E).contains(value) {
                scalars.append(Unicode.Scalar(value - 0xFF01 + 0x21)!)
                continue
            }
            // U+FFFD is what invalid UTF-8 (a command-line argument, a file) decodes to: the name
            // that was meant cannot be known, so it is not encoded into one nobody meant.
            if value == 0xFFFD {
                throw PincheckError(.invalidHost, "the host name is not valid UTF-8 (it decodes to U+FFFD, the replacement character)")
            }
            if !scalar.isASCII, value != 0x200C, value != 0x200D {
                switch scalar.properties.generalCategory {
                case .control, .format, .privateUse, .surrogate, .unassigned, .spaceSeparator, .lineSeparator, .paragraphSeparator:
                    let hex = String(value, radix: 16, uppercase: true)
                    let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                    let before = String(scalars)
                    throw PincheckError(
                        .invalidHost,
                        "the host name contains \(code) \(before.isEmpty ? "at its start" : "after \"\(before)\""), a space or invisible character no DNS name can hold"
                    )
                default:
                    break
                }
            }
            scalars.append(scalar)
        }
        return String(scalars)
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
