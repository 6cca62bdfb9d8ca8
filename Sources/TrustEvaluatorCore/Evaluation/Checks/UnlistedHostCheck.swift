/// A trust manager whose every host must be evaluated refuses a host no policy names
/// (TrustKit's and Pincheck's `allHostsMustBeEvaluated`), whatever the chain: listed only in the
/// plan for unlisted hosts, and run even when the chain failed.
struct UnlistedHostCheck: EvaluationCheck {
    var runsAfterStop: Bool { true }

    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        if let peer = run.peer {
            run.found.fail(
                Reason(
                    .hostNotListed, "\(peer.text) matches no pinning policy, and every host must be evaluated by one (allHostsMustBeEvaluated)",
                    requirement: .hostPolicy))
        }
        return .next
    }
}
