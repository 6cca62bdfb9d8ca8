import ServerTrust
import TrustEvaluator

extension Verdict {
    /// What a challenge handler answers for this verdict: ServerTrust's one mapping, so the
    /// engine's tests check the answer every stack gives.
    package var disposition: Disposition { Disposition(serverTrust: self) }
    package var allowsConnection: Bool { disposition.allowsConnection }
}
