/// One requirement of an evaluation. The plan lists its checks once, when it is made
/// (``EvaluationPlan/checks(validation:pinSets:pinOverride:judgesRevocation:coverage:advisories:)``); an
/// evaluation verifies nothing by itself: it runs the checks in that order over one
/// ``EvaluationRun`` and collects what they found into the verdict.
///
/// The order is the order of the verdict's reasons: the validation switches, the supplied CRLs,
/// the pin sets' expiry, AFNetworking's guard, the path to the anchors, each pin set with its
/// enforcement, the policy's path checks on every path judged, revocation, Certificate
/// Transparency, and the trust manager's rule for unlisted hosts.
///
/// Adding a requirement is one type conforming here, in a file of its own under `Checks/`, and
/// one line where the plan lists its checks. A check reads what earlier ones established (the
/// path, the matched pins) from the run and adds failures and warnings to it.
protocol EvaluationCheck: Sendable {
    /// Adds this requirement's findings to `run`. `.stop` when nothing after it can change the
    /// outcome (no path could be built): later checks are skipped unless they run regardless.
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next

    /// Whether the check runs after an earlier one stopped the run (a rule about the host, not the chain).
    var runsAfterStop: Bool { get }
}

extension EvaluationCheck {
    var runsAfterStop: Bool { false }
}
