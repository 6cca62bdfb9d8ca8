/// A pin set past its expiry is skipped with a warning (TrustKit's `TSKExpirationDate`, Android's
/// `<pin-set expiration>`): the host falls back to default validation rather than lock users out.
struct PinSetExpiryCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        for (index, set) in run.plan.pinSets.enumerated() {
            guard let expires = set.expires, run.time >= expires else { continue }
            run.warn(.pinSetExpired, "\(run.pinsName) expired on \(Timestamp.day(expires)); only default validation applied", requirement: .pins)
            run.expiredPinSets.insert(index)
        }
        return .next
    }
}
