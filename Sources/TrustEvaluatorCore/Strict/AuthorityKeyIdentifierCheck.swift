/// RFC 5280 §4.2.1.1: an authorityKeyIdentifier, where present (including on a self-signed root),
/// carries its keyIdentifier (x509-limbo `webpki::aki::root-with-aki-missing-keyidentifier`).
struct AuthorityKeyIdentifierCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        for (depth, certificate) in input.path.certificates.enumerated() {
            let facts = certificate.facts
            if facts.authorityKeyIdentifierPresent && facts.authorityKeyIdentifier == nil {
                // Every verifier accepts it (the key identifier only helps path building): a
                // refusal on the Web PKI only.
                input.baselineRequirement(
                    .profileViolation,
                    "the certificate at depth \(depth) (\(certificate.subject)) has an authorityKeyIdentifier without a keyIdentifier",
                    into: &findings)
            }
        }
    }
}
