/// Warnings a caller asks the plan for on top of the requirements: judgements about how the
/// peer is set up (how it serves its chain, how fragile the pins on it are) that never change
/// whether it is trusted. Each is a check of the plan (``EvaluationPlan/checks(validation:pinSets:pinOverride:judgesRevocation:coverage:advisories:)``),
/// so every road that asks for one gets the same finding from the same place.
///
/// A trust manager's host policies always ask for ``backupPins``; `pincheck check` and `scan`
/// ask for the live-check ones; `pincheck verify --purpose client` for ``clientAnchors``.
package struct EvaluationAdvisories: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// An enforced pin set without a backup pin (``BackupPinCheck``).
    package static let backupPins = EvaluationAdvisories(rawValue: 1 << 0)
    /// An intermediate the peer did not send, no stapled OCSP response (``ServedChainCheck``).
    package static let servedChain = EvaluationAdvisories(rawValue: 1 << 1)
    /// Only the leaf's key matched, and the leaf expires soon (``LeafPinRenewalCheck``).
    package static let leafPinRenewal = EvaluationAdvisories(rawValue: 1 << 2)
    /// A client anchor that is a public root (``ClientAnchorCheck``).
    package static let clientAnchors = EvaluationAdvisories(rawValue: 1 << 3)

    /// What a live check of a server asks for (`pincheck check`, `scan`).
    package static let liveCheck: EvaluationAdvisories = [.backupPins, .servedChain, .leafPinRenewal]
}
