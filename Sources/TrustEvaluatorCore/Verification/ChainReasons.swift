import FoundationEssentials
internal import PincheckOpenSSL

/// What a verification run's errors mean for the verdict: the one place, besides
/// ``ChainVerificationError/reason(at:purpose:)``, where the verifier's findings become reasons.
enum ChainReasons {
    /// The leaf does not carry the requested name: which names it carries instead.
    static func nameMismatch(_ leaf: Certificate, _ peer: PeerName) -> Reason {
        var evidence = Evidence()
        evidence.hostRequested = peer.text
        evidence.namesPresented = leaf.dnsNames + leaf.ipAddresses
        let names = evidence.namesPresented!.isEmpty ? "no DNS or IP subjectAltName" : evidence.namesPresented!.joined(separator: ", ")
        return switch peer {
        case .dns(let name):
            Reason(.hostMismatch, "the certificate is not valid for \(name); it names \(names)", evidence: evidence, requirement: .name)
        case .ipAddress(let address):
            Reason(
                .ipAddressMismatch, "the certificate is not valid for IP address \(address); it names \(names)", evidence: evidence,
                requirement: .name)
        }
    }

    /// The failures a run's errors give. OpenSSL may report one problem under two numbers (20 then
    /// 21 for a missing issuer, say): one reason per kind of problem and certificate.
    static func failures(
        _ errors: [ChainVerificationError], leaf: Certificate, peer: PeerName?, time: Date,
        purpose: ValidationPolicy.Purpose
    ) -> [Reason] {
        var seen: [(code: Reason.Code, depth: Int)] = []
        var reasons: [Reason] = []
        for error in errors {
            let reason = if error.isNameMismatch, let peer { nameMismatch(leaf, peer) } else { error.reason(at: time, purpose: purpose) }
            guard !seen.contains(where: { $0.code == reason.code && $0.depth == error.depth }) else { continue }
            seen.append((reason.code, error.depth))
            reasons.append(reason)
        }
        return reasons
    }

    /// OpenSSL's strict-rule findings on a path that is used, as warnings.
    /// A rule the verifier reported and the request tolerated, as the warning says it.
    static func sentence(for finding: X509ToleratedFinding) -> String {
        let subject = finding.subject.map { " (\($0))" } ?? ""
        switch finding.rule {
        case .versionOneAnchor:
            return "the trust anchor at depth \(finding.depth)\(subject) is an X.509 v1 root without basicConstraints; trusted as configured"
        case .strictRule(_, let text):
            return "the certificate at depth \(finding.depth)\(subject): \(text) (RFC 5280 strict rule, not counted)"
        }
    }

    static func tolerated(_ outcome: ChainVerification) -> [Reason] {
        outcome.tolerated.map { Reason(.profileViolation, $0, requirement: .profile) }
    }
}
