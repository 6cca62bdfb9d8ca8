import FoundationEssentials

/// The plan of a road whose TLS library verifies the chain and the host name itself and shows
/// Pincheck the leaf alone (AsyncHTTPClient's connection initializers): the pin sets of the
/// leaf, each with its enforcement and expiry, judged by the same checks as on every other road
/// (``PinSetExpiryCheck``, ``PinSetEnforcementCheck``), and its verdict answered by the same
/// decider. Revocation is the road's own evaluation of the path it makes above the leaf.
package struct LeafPinPlan: Sendable {
    private let plan: EvaluationPlan

    /// - Parameters:
    ///   - pinSets: Public-key pin sets of the leaf.
    ///   - road: What the road verifies itself, said in the verdict's warnings.
    package init(pinSets: [PinSet], road: String) {
        var validation = ValidationPolicy(anchors: .nothing)
        validation.chainValidation = .disabled(because: road)
        validation.nameValidation = .disabled(because: road)
        validation.profile = .openSSLOnly(because: road)
        plan = EvaluationPlan(validation: validation, pinSets: pinSets, judgesRevocation: false, verifiedByRoad: true)
    }

    /// The verdict on the leaf a connection presented.
    package func evaluate(_ leaf: Certificate, at time: Date) -> Verdict {
        plan.evaluate([leaf], peer: nil, at: time, staple: nil, verdictCache: nil, diagnostics: nil)
    }
}
