/// The preferred name syntax of RFC 1034 §3.5 as the Web PKI uses it (RFC 5280 §4.2.1.6, CABF
/// 7.1.2.7.12): ASCII letters, digits and hyphens, labels of 1–63 characters not starting or
/// ending with a hyphen, at most 253 characters. With `allowWildcard`, the leftmost label of a
/// name of three or more labels may hold one `*`: as the whole label, or as a partial wildcard
/// (`w*`), which is well formed but never matches (the host check refuses partial wildcards).
enum DNSNameSyntax {
    static func isValid(_ name: String, allowWildcard: Bool) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for (index, label) in labels.enumerated() {
            if index == 0, allowWildcard, labels.count > 2, label.filter({ $0 == "*" }).count == 1 {
                let rest = label.filter { $0 != "*" }
                if rest.isEmpty || isValidLabel(Substring(rest)) { continue }
            }
            guard isValidLabel(label) else { return false }
        }
        return true
    }

    static func isValidLabel(_ label: Substring) -> Bool {
        let bytes = Array(label.utf8)
        guard !bytes.isEmpty, bytes.count <= 63, bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-")
        }
    }
}
