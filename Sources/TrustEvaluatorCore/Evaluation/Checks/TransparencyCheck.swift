/// Certificate Transparency is judged, as revocation is, on the path verified against the anchors
/// whatever the pinning mode: a pin says nothing about whether a CA logged the certificate, and
/// the leaf's issuer (whose key hash a log signed) is the anchors' path's. A path to a private
/// anchor (or, chain validation disabled, to no anchor) is exempt unless the requirement's scope
/// says every anchor. Listed when the policy has a requirement.
struct TransparencyCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        guard let requirement = run.policy.certificateTransparency, let logs = run.transparencyLogs else { return .next }
        let anchorsPath = run.judgedAnchorsPath()
        let issuer = anchorsPath.certificates.count > 1 ? anchorsPath.certificates[1] : nil
        var assessment = CertificateTransparency.assess(
            leaf: run.leaf, issuer: issuer, additionalSCTs: run.presentedSCTs,
            policy: requirement.policy, logs: logs, at: run.time)
        if requirement.scope == .publiclyTrustedAnchors,
            let exemption = exemption(anchorsPath, anchors: run.policy.anchors, programs: run.policy.rootPrograms.data)
        {
            assessment = assessment.exempt(exemption)
        }
        run.transparency = assessment
        let policyName = requirement.policy.rawValue
        switch assessment.compliance {
        case .compliant, .notApplicable: break
        case .notCompliant(let why):
            let reason = Reason(.ctNotCompliant, "not compliant with the \(policyName) CT policy: \(why)", requirement: .certificateTransparency)
            if requirement.enforcement == .enforce {
                run.found.fail(reason)
            } else {
                run.warn(.ctNotCompliant, reason.message + " (report-only)", requirement: .certificateTransparency)
            }
        case .unenforceable(let why):
            let reason = Reason(.ctUnenforceable, "the \(policyName) CT policy cannot be enforced: \(why)", requirement: .certificateTransparency)
            if requirement.enforcement == .enforce, requirement.whenUnenforceable == .fail {
                run.found.fail(reason)
            } else {
                run.warn(.ctUnenforceable, reason.message + " (allowed)", requirement: .certificateTransparency)
            }
        }
        return .next
    }

    /// Why CT does not apply to this path, if it does not: it ends at a private anchor, or was not
    /// verified against the anchors at all.
    private func exemption(_ path: VerifiedPath, anchors: TrustAnchors, programs: RootPrograms) -> String? {
        switch path.anchoring {
        case .trustAnchor:
            path.certificates.last.flatMap {
                anchors.isPrivateAnchor($0, programs: programs)
                    ? "the path ends at a private anchor (\($0.subject), in no root program), which browsers do not hold to CT" : nil
            }
        case .pinnedCertificate, .signaturesOnly:
            "the chain was not verified against the anchors, so no public anchor makes CT apply"
        }
    }
}
