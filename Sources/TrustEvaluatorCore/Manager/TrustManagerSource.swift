import FoundationEssentials

/// Where an adapter gets the trust manager in force at a moment: a fixed ``TrustManager`` (which
/// is its own source), or one whose pins change while the process runs — `UpdatableTrustManager`
/// (signed pin-set updates, in `TrustEvaluatorFormats`) or a source of the app's own.
///
/// The adapters (`ChallengeAdapter`, the NIO verifier) ask once per evaluation, so an evaluation
/// in flight finishes under the manager it started with.
public protocol TrustManagerSource: Sendable {
    /// The trust manager that applies to an evaluation at `time`.
    func trustManager(at time: Date) -> TrustManager
}

extension TrustManager: TrustManagerSource {
    /// This manager: its policies do not change.
    public func trustManager(at time: Date) -> TrustManager { self }
}
