import ServerTrust
import TrustEvaluator

extension Verdict {
    /// What a challenge handler answers for this verdict: ServerTrust's one mapping, so the
    /// engine's tests check the answer every stack gives.
    var disposition: Disposition { Disposition(serverTrust: self) }
    var allowsConnection: Bool { disposition.allowsConnection }
}
