internal import PincheckOpenSSL
/// Extensions every certificate of the path must encode correctly: each decodes (a malformed
/// authorityInfoAccess, for example, is refused rather than ignored), and policyConstraints is
/// critical (RFC 5280 §4.2.1.11: "Conforming CAs MUST mark this extension as critical").
struct ExtensionCriticalityCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        for (depth, certificate) in input.path.certificates.enumerated() {
            let facts = certificate.facts
            // Built only for a finding: the subject costs an OpenSSL name print.
            var at: String { "the certificate at depth \(depth) (\(certificate.subject))" }
            if facts.hasUndecodableExtension {
                findings.fail(.profileViolation, "\(at) has an extension whose value does not decode")
            }
            if facts.has(CertificateFacts.policyConstraintsOID) && !facts.isCritical(CertificateFacts.policyConstraintsOID) {
                findings.fail(.profileViolation, "\(at) has a non-critical policyConstraints extension")
            }
        }
    }
}
