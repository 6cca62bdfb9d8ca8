internal import PincheckOpenSSL
/// CABF 7.1.2.7.8 (x509-limbo `webpki::ee-basicconstraints-ca`, `webpki::ca-as-leaf`): the leaf is
/// not a CA, and does not carry name constraints, which only mean something on a CA (RFC 5280 §4.2.1.10).
struct EndEntityCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard input.path.count > 1, let leaf = input.path.certificates.first else { return }
        if leaf.facts.basicConstraintsCA == true {
            findings.fail(.profileViolation, "the leaf (\(leaf.subject)) is a CA certificate (basicConstraints cA TRUE)")
        }
        if leaf.facts.has(CertificateFacts.nameConstraintsOID) {
            findings.fail(.profileViolation, "the leaf (\(leaf.subject)) carries a nameConstraints extension, allowed only in CA certificates")
        }
    }
}
