internal import PincheckOpenSSL
/// CABF 7.1.2.7.10: a subscriber certificate carries a non-critical extendedKeyUsage with the
/// purpose asked for and without anyExtendedKeyUsage (x509-limbo `webpki::eku::*`).
///
/// Judged against the real world (docs/conformance.md, "The strict profile against the real world"):
/// - anyExtendedKeyUsage is refused: Firefox (mozilla::pkix) and rustls-webpki do not count it as
///   serverAuth, and a leaf that allows every purpose is not a server certificate by intent.
/// - a leaf without extendedKeyUsage, or with a critical one, is a warning: Chromium, Firefox, Go
///   and rustls-webpki accept both (no EKU means any purpose; EKU is an extension they understand,
///   so critical is harmless), and OpenSSL's purpose check has already judged the purposes.
struct ExtendedKeyUsageCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard let leaf = input.path.certificates.first else { return }
        let facts = leaf.facts
        guard let purposes = facts.extendedKeyUsage else {
            findings.warn(.profileViolation, "the leaf (\(leaf.subject)) has no extendedKeyUsage extension (CABF 7.1.2.7.10)")
            return
        }
        if purposes.contains(CertificateFacts.anyExtendedKeyUsageOID) {
            findings.fail(.profileViolation, "the leaf (\(leaf.subject)) allows anyExtendedKeyUsage")
        }
        if facts.isCritical(CertificateFacts.extendedKeyUsageOID) {
            findings.warn(.profileViolation, "the leaf's extendedKeyUsage (\(leaf.subject)) is marked critical (CABF 7.1.2.7.10)")
        }
    }
}
