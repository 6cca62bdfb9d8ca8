import FoundationEssentials

/// Only the leaf's key matched, and the leaf expires within 30 days
/// (``EvaluationAdvisories/leafPinRenewal``): if the renewed certificate gets a new key, clients
/// are locked out. A warning, on a trusted verdict (whose pins matched).
struct LeafPinRenewalCheck: EvaluationCheck {
    /// Days before the leaf's notAfter from which it is said.
    static let days = 30

    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        guard run.found.failures.isEmpty, !run.matches.isEmpty, run.matches.allSatisfy({ $0.depth == 0 }), let leaf = run.matches.first?.certificate
        else { return .next }
        let left = Int((leaf.notAfter.timeIntervalSince(run.time) / 86_400).rounded(.down))
        guard left < Self.days else { return .next }
        run.warn(
            .leafPinExpiring,
            "only the leaf's key is pinned and the leaf expires in \(left) days: if the renewed certificate gets a new key, clients are locked out",
            requirement: .pins)
        return .next
    }
}
