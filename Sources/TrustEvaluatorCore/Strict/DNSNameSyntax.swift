/// The preferred name syntax of RFC 1034 §3.5 as the Web PKI uses it (RFC 5280 §4.2.1.6, CABF
/// 7.1.2.7.12): ASCII letters, digits and hyphens, labels of 1–63 characters not starting or
/// ending with a hyphen, at most 253 characters. With `allowWildcard`, the leftmost label of a
/// name of three or more labels may hold one `*`: as the whole label, or as a partial wildcard
/// (`w*`), which is well formed but never matches (the host check refuses partial wildcards).
enum DNSNameSyntax {
    static func isValid(_ name: String, allowWildcard: Bool) -> Bool {
        var name = name
        return name.withUTF8 { isValid($0, allowWildcard: allowWildcard) }
    }

    /// One pass over the bytes, without splitting into strings: this runs on every evaluation.
    private static func isValid(_ bytes: UnsafeBufferPointer<UInt8>, allowWildcard: Bool) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        let labelCount = bytes.reduce(1) { $1 == dot ? $0 + 1 : $0 }
        var start = 0
        var index = 0
        for end in 0...bytes.count where end == bytes.count || bytes[end] == dot {
            let label = UnsafeBufferPointer(rebasing: bytes[start..<end])
            // A wildcard: one `*` in the first of at least three labels, alone or inside a valid label.
            let wildcard = index == 0 && allowWildcard && labelCount > 2 && label.reduce(0) { $1 == star ? $0 + 1 : $0 } == 1
            if wildcard {
                guard label.count == 1 || isValidLabel(label, ignoring: star) else { return false }
            } else {
                guard isValidLabel(label, ignoring: nil) else { return false }
            }
            start = end + 1
            index += 1
        }
        return true
    }

    /// Letters, digits and hyphens, 1–63 of them, not starting or ending with a hyphen (bytes equal
    /// to `ignoring` are left out first).
    private static func isValidLabel(_ label: UnsafeBufferPointer<UInt8>, ignoring: UInt8?) -> Bool {
        var count = 0
        var first: UInt8 = 0
        var last: UInt8 = 0
        for byte in label where byte != ignoring {
            guard (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || byte == hyphen else {
                return false
            }
            if count == 0 { first = byte }
            last = byte
            count += 1
        }
        return (1...63).contains(count) && first != hyphen && last != hyphen
    }

    private static let dot = UInt8(ascii: ".")
    private static let star = UInt8(ascii: "*")
    private static let hyphen = UInt8(ascii: "-")
}
