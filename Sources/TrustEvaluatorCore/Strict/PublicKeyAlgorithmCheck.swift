/// CABF 6.1.5 and 7.1.3.1: RSA keys of at least 2048 bits with a modulus a multiple of 8 bits,
/// ECDSA on P-256, P-384 or P-521; DSA and every other key type are refused. Ed25519 and Ed448
/// (not yet in the baseline requirements, but unambiguous and strong) are allowed. The
/// post-quantum signature algorithms (ML-DSA, SLH-DSA) are not yet the Web PKI's: refused under
/// its roots, a warning under a private anchor, whose owner may choose them.
struct PublicKeyAlgorithmCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        for (depth, certificate) in input.path.certificates.enumerated() {
            guard let problem = Self.problem(with: certificate.publicKey) else { continue }
            let message = "the certificate at depth \(depth) (\(certificate.subject)) \(problem)"
            if Self.isPostQuantumSignature(certificate.publicKey) {
                input.baselineRequirement(.profileViolation, message, into: &findings)
            } else {
                findings.fail(.profileViolation, message)
            }
        }
    }

    /// ML-DSA and SLH-DSA keys, as OpenSSL 3.5 names them.
    static func isPostQuantumSignature(_ key: PublicKeyDescription) -> Bool {
        guard case .unknown(let name) = key.algorithm else { return false }
        return name.hasPrefix("ML-DSA") || name.hasPrefix("SLH-DSA")
    }

    static func problem(with key: PublicKeyDescription) -> String? {
        switch key.algorithm {
        case .rsa:
            if key.bits < 2048 { return "has an RSA key of \(key.bits) bits (at least 2048 required)" }
            if key.bits % 8 != 0 { return "has an RSA modulus of \(key.bits) bits, not a multiple of 8" }
            return nil
        case .ecdsa(let curve):
            return ["prime256v1", "P-256", "secp384r1", "P-384", "secp521r1", "P-521"].contains(curve)
                ? nil : "has an ECDSA key on \(curve) (P-256, P-384 or P-521 required)"
        case .ed25519, .ed448:
            return nil
        case .unknown(let name):
            return "has a \(name) key, which the Web PKI does not allow"
        }
    }
}
