/// Revocation is judged on the path verified against the anchors, whatever the pinning mode: a
/// certificate-pinned leaf is a path of one, which names no issuer to check a staple or a CRL
/// against, and a pin says nothing about revocation. With chain validation disabled the path
/// linked by signatures stands in (OpenSSL has applied no CRL to it, so that is done here). The
/// staple (``StapledOCSPCheck``) and the distribution points' CRLs (``DistributionPointCheck``)
/// are judged on it.
struct RevocationCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        let path = run.judgedAnchorsPath()
        if path.anchoring != .trustAnchor, !run.policy.revocationLists.isEmpty {
            run.checkRevocationLists(on: path.certificates)
        }
        var findings = PathFindings()
        run.staple.run(PathCheckInput(path: path, servedChain: run.served, peer: run.peer, time: run.time), into: &findings)
        if let settings = run.policy.revocation.distributionPointCRLs {
            DistributionPointCheck(settings: settings, maximumAge: run.policy.revocation.maximumResponseAge, fetched: run.fetchedLists)
                .check(
                    path: path.certificates, time: run.time, into: &findings.failures, warnings: &findings.warnings,
                    statuses: &run.revocationStatuses)
        }
        findings.failures.forEach { run.found.fail($0) }
        findings.warnings.forEach { run.found.warn($0) }
        return .next
    }
}

extension EvaluationRun {
    /// The path revocation and Certificate Transparency are judged on: the anchors' path, or the
    /// path linked by signatures; found once.
    mutating func judgedAnchorsPath() -> VerifiedPath {
        if let revocationPath { return revocationPath }
        let path = basePath ?? linkedBySignatures()
        revocationPath = path
        return path
    }

    /// The supplied CRLs over a path OpenSSL did not verify (chain validation disabled): the path
    /// is verified once more, ending at its own top, and only the revocation findings count.
    fileprivate mutating func checkRevocationLists(on linked: [Certificate]) {
        guard let top = linked.last, let only = try? TrustAnchors(certificates: [top]) else { return }
        let outcome = ChainVerifier.verify(
            ChainVerificationRequest(
                leaf: leaf, untrusted: Array(linked.dropFirst().dropLast()), anchors: only, peer: nil, time: time,
                allowPartialChain: true, maximumDepth: policy.maximumChainDepth,
                purpose: policy.purpose, revocationLists: policy.revocationLists, revocationScope: policy.revocationScope,
                strictRules: .warningsOnly))
        for error in outcome.errors {
            switch error.kind {
            case .revoked, .revocationUnknown: found.fail(error.reason(at: time, purpose: policy.purpose))
            default: break
            }
        }
    }
}
