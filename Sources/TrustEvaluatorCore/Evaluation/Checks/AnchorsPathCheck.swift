/// The path to the anchors, verified once for every pin set (OpenSSL's verification, then the
/// other paths to the caller's anchors when OpenSSL's choice fails). With chain validation
/// disabled, a path linked by issuer signatures stands in when a pin set matches on it. No path:
/// the run stops.
struct AnchorsPathCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        if run.validatesChain {
            guard let verified = run.verifyAgainstAnchors() else { return .stop }
            run.basePath = verified
        } else if run.activePinSets.contains(where: { $0.check.matchesOnAnchorsPath }) {
            // Chain validation off: only certificates that certify the leaf by signature may match
            // a key pin (AFNetworking would count any served certificate), and a requested name
            // must still be on the leaf.
            if let peer = run.peer, !HostCheck.matches(run.leaf, peer) {
                run.found.fail(ChainReasons.nameMismatch(run.leaf, peer))
                return .stop
            }
            let linked = SignatureChain.path(
                from: run.leaf, through: run.untrusted + run.policy.anchors.certificates,
                maximumDepth: run.policy.maximumChainDepth)
            run.basePath = VerifiedPath(linked, anchoring: .signaturesOnly)
        }
        run.path = run.basePath
        return .next
    }
}

extension EvaluationRun {
    /// OpenSSL verification against the policy's anchors. Records failures; returns the path.
    mutating func verifyAgainstAnchors() -> VerifiedPath? {
        let request = ChainVerificationRequest(
            leaf: leaf, untrusted: untrusted, anchors: policy.anchors, peer: peer, time: time,
            allowPartialChain: false, maximumDepth: policy.maximumChainDepth,
            purpose: policy.purpose, revocationLists: policy.revocationLists, revocationScope: policy.revocationScope)
        let outcome = ChainVerifier.verify(request)
        consult(outcome)
        if outcome.succeeded, passesPathChecks(outcome.builtChain) {
            tolerate(outcome)
            return VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
        }
        // OpenSSL stops at the first path it builds. When that one fails (or fails the policy's
        // own checks), try the other paths to the caller's anchors, each forced on OpenSSL by
        // offering only its intermediates and its anchor. The system store cannot be enumerated.
        var reachedAnchor: [ChainVerificationError]? = nil
        if let alternate = alternatePath(request, avoiding: outcome.builtChain, reachedAnchor: &reachedAnchor) { return alternate }
        guard outcome.succeeded else {
            // OpenSSL's path reached no anchor but a path forced onto one did: that one's errors
            // say why (an intermediate anchor for the wrong host is a name mismatch, not an unknown issuer).
            let reachedNone = outcome.errors.contains(where: \.isMissingIssuer)
            let errors = reachedNone ? reachedAnchor ?? outcome.errors : outcome.errors
            ChainReasons.failures(errors, leaf: leaf, peer: peer, time: time, purpose: policy.purpose).forEach { found.fail($0) }
            return nil
        }
        // The path verified but fails the policy's checks: they say why, after the pins.
        tolerate(outcome)
        return VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
    }

    /// The first path to one of the caller's anchors that verifies and passes the path checks.
    /// `reachedAnchor` gets the errors of the first forced path that reached its anchor and failed.
    private mutating func alternatePath(
        _ request: ChainVerificationRequest, avoiding chosen: [Certificate],
        reachedAnchor: inout [ChainVerificationError]?
    ) -> VerifiedPath? {
        guard !policy.anchors.certificates.isEmpty else { return nil }
        let candidates = PathCandidates.enumerate(
            leaf: leaf, pool: untrusted, anchors: policy.anchors.certificates, maximumDepth: policy.maximumChainDepth)
        for candidate in candidates {
            guard let anchor = candidate.last, let only = try? TrustAnchors(certificates: [anchor]) else { continue }
            // Any certificate the caller trusts ends a path, as in Chromium, Firefox, Go and
            // rustls: an intermediate given as anchor needs no root above it. The store holds only
            // this anchor, so a partial chain can end nowhere else. A root goes through OpenSSL's
            // own checks, which refuse one whose authorityKeyIdentifier names another issuer.
            let partial = !anchor.handle.isRoot
            // OpenSSL's own choice, run again the same way, would fail the same way, unless
            // another anchor has the same name: OpenSSL looks issuers up by name and stops at the
            // first (two developers' CN=localhost certificates in one bundle), so with only this
            // anchor in the store the same path can verify.
            let sameNamed = policy.anchors.certificates.contains { $0 != anchor && $0.subject == anchor.subject }
            if candidate == chosen, !partial, !sameNamed { continue }
            var forced = request
            forced.untrusted = Array(candidate.dropFirst().dropLast())
            forced.anchors = only
            forced.allowPartialChain = partial
            let outcome = ChainVerifier.verify(forced)
            consult(outcome)
            if outcome.succeeded, passesPathChecks(outcome.builtChain) {
                tolerate(outcome)
                return VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
            }
            if reachedAnchor == nil, !outcome.succeeded, !outcome.errors.contains(where: \.isMissingIssuer) {
                reachedAnchor = outcome.errors
            }
        }
        return nil
    }

    /// Runs the path checks on a candidate path.
    private mutating func passesPathChecks(_ chain: [Certificate]) -> Bool {
        plan.pathChecks.isEmpty || pathFindings(VerifiedPath(chain, anchoring: .trustAnchor)).failures.isEmpty
    }

    /// OpenSSL's strict-rule findings on a chosen path, as warnings.
    private mutating func tolerate(_ outcome: ChainVerification) {
        ChainReasons.tolerated(outcome).forEach { found.warn($0) }
    }
}
