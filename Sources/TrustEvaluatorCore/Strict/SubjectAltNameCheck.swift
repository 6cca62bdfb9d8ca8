internal import PincheckOpenSSL
/// The leaf's subjectAltName is well formed for the Web PKI: every DNS name is a valid host name
/// (letters, digits, hyphens; a wildcard only as the whole leftmost label, never `*.tld`), and the
/// extension is critical only when the subject is empty (RFC 5280 §4.2.1.6).
struct SubjectAltNameCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard let leaf = input.path.certificates.first else { return }
        for name in leaf.dnsNames where !DNSNameSyntax.isValid(name, allowWildcard: true) {
            findings.fail(.profileViolation, "the leaf's subjectAltName DNS name \"\(name)\" is not a valid host name")
        }
        // RFC 5280 §4.2.1.6 says SHOULD NOT, and every verifier reads a critical SAN; only the
        // Baseline Requirements forbid it. trustme marks it critical on every certificate it makes.
        if leaf.facts.isCritical(CertificateFacts.subjectAltNameOID), !leaf.facts.subjectIsEmpty {
            input.baselineRequirement(.profileViolation, "the leaf's subjectAltName is critical although its subject is not empty", into: &findings)
        }
    }
}
