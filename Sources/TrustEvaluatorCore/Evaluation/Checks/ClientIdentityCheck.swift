/// The identities a server requires of its clients (``ClientIdentityRequirement/identities``):
/// the leaf must carry one of them in its subjectAltName. Judged whatever the chain's outcome,
/// so a refusal names every reason.
struct ClientIdentityCheck: EvaluationCheck {
    let identities: [ClientIdentity]

    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        let leaf = run.leaf
        guard !identities.contains(where: { $0.isCarried(by: leaf) }) else { return .next }
        var evidence = Evidence()
        evidence.namesPresented = leaf.subjectAlternativeNames.map { $0.description }
        let wanted = identities.map { $0.description }.joined(separator: ", ")
        let carried = leaf.subjectAlternativeNames.map { $0.description }.joined(separator: ", ")
        run.found.fail(
            Reason(
                .identityMismatch,
                "the client certificate (\(leaf.subject)) carries none of the required identities (\(wanted)); it names \(carried.isEmpty ? "none" : carried)",
                evidence: evidence, requirement: .name))
        return .next
    }

    var runsAfterStop: Bool { true }
}
