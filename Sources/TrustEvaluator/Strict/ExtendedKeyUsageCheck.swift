/// CABF 7.1.2.7.10: a subscriber certificate carries a non-critical extendedKeyUsage with the
/// purpose asked for and without anyExtendedKeyUsage (x509-limbo `webpki::eku::*`; for the
/// conflicting `rfc5280::eku::ee-without-eku` Pincheck takes the Web PKI side).
struct ExtendedKeyUsageCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard let leaf = input.path.certificates.first else { return }
        let facts = leaf.facts
        guard let purposes = facts.extendedKeyUsage else {
            findings.failures.append(Reason(.profileViolation, "the leaf (\(leaf.subject)) has no extendedKeyUsage extension"))
            return
        }
        if purposes.contains(CertificateFacts.anyExtendedKeyUsageOID) {
            findings.failures.append(Reason(.profileViolation, "the leaf (\(leaf.subject)) allows anyExtendedKeyUsage"))
        }
        if facts.isCritical(CertificateFacts.extendedKeyUsageOID) {
            findings.failures.append(Reason(.profileViolation, "the leaf's extendedKeyUsage (\(leaf.subject)) is marked critical"))
        }
    }
}
