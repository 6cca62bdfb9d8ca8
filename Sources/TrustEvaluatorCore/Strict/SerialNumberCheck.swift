internal import PincheckOpenSSL
/// RFC 5280 §4.1.2.2: serial numbers are positive and at most 20 octets long. Judged on every
/// certificate the path uses except its trust anchor (anchors are trusted as configured).
struct SerialNumberCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        let judged =
            input.path.anchoring == .trustAnchor && input.path.count > 1
            ? input.path.certificates.dropLast() : input.path.certificates[...]
        for (depth, certificate) in judged.enumerated() {
            if let problem = Self.problem(certificate.facts) {
                let message = "the certificate at depth \(depth) (\(certificate.subject)) \(problem)"
                // Go refuses a negative serial; zero and over-long ones every verifier accepts
                // (RFC 5280 asks users to handle them gracefully): those refuse Web PKI chains only.
                if certificate.facts.serialIsNegative && !certificate.facts.serialMagnitude.allSatisfy({ $0 == 0 }) {
                    findings.fail(.profileViolation, message)
                } else {
                    input.baselineRequirement(.profileViolation, message, into: &findings)
                }
            }
        }
    }

    static func problem(_ facts: CertificateFacts) -> String? {
        let magnitude = facts.serialMagnitude.drop { $0 == 0 }
        if magnitude.isEmpty { return "has serial number zero" }
        if facts.serialIsNegative { return "has a negative serial number" }
        let encoded = magnitude.count + (magnitude.first! & 0x80 != 0 ? 1 : 0)
        if encoded > 20 { return "has a serial number of \(encoded) octets (at most 20 allowed)" }
        return nil
    }
}
