/// AFNetworking's guard: checking a name on a chain nobody validates means nothing unless
/// something is pinned.
struct UnpinnedNameCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        guard run.peer != nil, !run.validatesChain, run.activePinSets.isEmpty else { return .next }
        run.found.fail(
            Reason(
                .selfSignedRequiresPinning,
                "validating a host name with chain validation disabled requires pinning: without pins anyone can make a certificate for any name",
                requirement: .hostPolicy))
        return .stop
    }
}
