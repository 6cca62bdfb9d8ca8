/// RFC 5280 §4.2.1.6: an rfc822Name SAN is a mailbox, `local-part@domain`, with a valid host name
/// as domain and exactly one `@` (client certificates).
struct EmailAddressCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard let leaf = input.path.certificates.first else { return }
        for case .email(let address) in leaf.subjectAlternativeNames where !Self.isValid(address) {
            findings.fail(.profileViolation, "the leaf's subjectAltName email address \"\(address)\" is malformed")
        }
    }

    static func isValid(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 }) else { return false }
        return DNSNameSyntax.isValid(String(parts[1]), allowWildcard: false)
    }
}
