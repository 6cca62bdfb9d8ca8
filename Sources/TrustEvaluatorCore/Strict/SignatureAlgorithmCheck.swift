/// CABF 7.1.3.2: certificates are signed with SHA-256, SHA-384 or SHA-512 (or an algorithm that
/// fixes its own digest, such as Ed25519); SHA-1, MD5 and other weak digests are refused. The
/// trust anchor's own signature is not judged: it is trusted as configured, not by its signature.
struct SignatureAlgorithmCheck: PathCheck {
    static let weakDigests: Set<String> = ["SHA1", "MD5", "MD4", "MD2", "MDC2", "RIPEMD160", "SHA224"]

    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        let judged =
            input.path.anchoring == .trustAnchor && input.path.count > 1
            ? input.path.certificates.dropLast() : input.path.certificates[...]
        for (depth, certificate) in judged.enumerated() {
            if let digest = certificate.facts.signatureDigest, Self.weakDigests.contains(digest) {
                findings.fail(
                    .profileViolation,
                    "the certificate at depth \(depth) (\(certificate.subject)) is signed with \(digest), which the Web PKI no longer accepts")
            }
        }
    }
}
