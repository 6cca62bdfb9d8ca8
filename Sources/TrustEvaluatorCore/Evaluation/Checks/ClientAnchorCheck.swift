/// A client anchor that is a public root (``EvaluationAdvisories/clientAnchors``): public CAs
/// stopped issuing client certificates in 2026, so such an anchor lets in whoever holds any
/// certificate it still vouches for. A warning, for a plan that judges clients.
struct ClientAnchorCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        let validation = run.policy
        guard validation.purpose == .clientAuthentication else { return .next }
        for message in validation.anchors.clientAuthenticationWarnings(rootPrograms: validation.rootPrograms.data) {
            run.warn(.publicClientAnchor, message, requirement: .chain)
        }
        return .next
    }

    var runsAfterStop: Bool { true }
}
