/// One pin set over the path the anchors' check established, with the enforcement the plan
/// decided: enforced, report-only (a mismatch recorded and warned about, the connection
/// allowed), or enforced unless the chain verifies to Android's override anchors
/// (`overridePins="true"`). A set that has expired is skipped (``PinSetExpiryCheck``).
struct PinSetEnforcementCheck: EvaluationCheck {
    /// The set's place in the plan's pin sets (the check holds no copy: a plan per host of a large
    /// configuration keeps its checks small).
    let index: Int
    /// The plan that decides Android's override for an enforced set; nil: no override.
    let pinOverride: EvaluationPlan?

    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        guard !run.expiredPinSets.contains(index) else { return .next }
        let set = run.plan.pinSets[index]
        let input = PinCheckInput(
            anchorsPath: run.basePath, leaf: run.leaf, served: run.served, untrusted: run.untrusted,
            peer: run.peer, time: run.time, validation: run.policy)
        let outcome = set.check.check(input)
        if run.tracksConsulted { run.consulted += outcome.consulted }
        if outcome.compared { run.pinsCompared = true }
        outcome.warnings.forEach { run.found.warn($0) }
        // A broken chain or name is rejected whatever the pin set's enforcement.
        outcome.failures.forEach { run.found.fail($0) }
        if !outcome.mismatches.isEmpty {
            switch set.enforcement {
            case .enforce where outcome.failures.isEmpty && overridden(&run):
                run.warn(
                    .pinMismatch,
                    "\(run.pinsName) did not match, but the chain ends at a trust anchor that overrides pins (Android overridePins); accepted on its validation",
                    requirement: .pins)
            case .enforce:
                outcome.mismatches.forEach { run.found.fail($0) }
            case .reportOnly:
                run.reportOnly += outcome.mismatches
                run.warn(
                    .reportOnlyFailure, "the report-only \(run.pinsNoun) did not match; the connection is allowed and a report is due",
                    requirement: .pins)
            }
            return .next
        }
        guard outcome.failures.isEmpty else { return .next }
        run.matches += outcome.matches
        if let own = outcome.path, own.anchoring == .pinnedCertificate { run.path = own }
        if let setPath = outcome.path { run.matchedPaths[index] = setPath }
        return .next
    }

    /// Whether the chain verifies to the override anchors, under the override plan's checks (asked
    /// once per evaluation, whichever set asks first).
    private func overridden(_ run: inout EvaluationRun) -> Bool {
        if let known = run.pinsOverridden { return known }
        guard let pinOverride else { return false }
        var nested = EvaluationRun(
            plan: pinOverride, served: run.served, peer: run.peer, time: run.time, staple: run.staple,
            tracksConsulted: run.tracksConsulted)
        nested.decide()
        run.consulted += nested.consulted
        run.pinsOverridden = nested.found.failures.isEmpty
        return run.pinsOverridden!
    }
}
