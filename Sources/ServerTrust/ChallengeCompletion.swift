import TrustEvaluator

/// The answer to a challenge: a disposition, a credential, and what led to them.
public struct ChallengeDecision: Sendable {
    /// What to do.
    public let disposition: Disposition
    /// The credential to answer with (only with ``Disposition/useCredential``).
    public let credential: Credential?
    /// Which adapter rule decided; `nil` when a handler answered directly.
    public let rule: ChallengeAdapter.Rule?
    /// Why the challenge was cancelled or refused, with the verdict for trust failures.
    public let error: ServerTrustError?
    /// The verdict behind a server-trust decision (trusted, untrusted, or the default validation's).
    public let verdict: TrustEvaluator.Verdict?

    /// - Parameters:
    ///   - disposition: What to do.
    ///   - credential: The credential (with `.useCredential`).
    ///   - rule: The adapter rule that decided.
    ///   - error: The failure to report, if any.
    ///   - verdict: The verdict behind a server-trust decision.
    public init(
        _ disposition: Disposition, _ credential: Credential? = nil, rule: ChallengeAdapter.Rule? = nil,
        error: ServerTrustError? = nil, verdict: TrustEvaluator.Verdict? = nil
    ) {
        self.disposition = disposition
        self.credential = credential
        self.rule = rule
        self.error = error
        self.verdict = verdict ?? error?.verdict
    }
}

/// A challenge's completion handler that completes exactly once.
///
/// Handlers may keep it and call it later, from any task or thread. The first call decides; a
/// second call is rejected (it returns `false` and is reported to `onMisuse`) and changes nothing.
/// If the last reference is released before any call, the challenge is cancelled and
/// ``ServerTrustError/Code-swift.struct/completionReleased`` is reported.
public final class ChallengeCompletion: Sendable {
    private struct State {
        var decided: ChallengeDecision?
    }
    private let state = Locked(State())
    private let deliver: @Sendable (ChallengeDecision) -> Void
    private let onMisuse: @Sendable (ServerTrustError) -> Void
    private let label: String

    /// - Parameters:
    ///   - label: Names the challenge in diagnostics (no secrets).
    ///   - onMisuse: Told about second calls and releases without a call.
    ///   - deliver: Receives the one decision.
    public init(
        label: String = "challenge", onMisuse: @escaping @Sendable (ServerTrustError) -> Void = { _ in },
        deliver: @escaping @Sendable (ChallengeDecision) -> Void
    ) {
        self.label = label
        self.deliver = deliver
        self.onMisuse = onMisuse
    }

    /// Whether the challenge has been answered.
    public var isCompleted: Bool { state.withLock { $0.decided != nil } }

    /// The decision, once made.
    public var decision: ChallengeDecision? { state.withLock { $0.decided } }

    /// Answers like URLSession's completion handler.
    /// - Parameters:
    ///   - disposition: What to do.
    ///   - credential: The credential, with `.useCredential`.
    /// - Returns: `true` if this call decided; `false` if the challenge was already answered.
    @discardableResult
    public func callAsFunction(_ disposition: Disposition, _ credential: Credential?) -> Bool {
        complete(with: ChallengeDecision(disposition, credential))
    }

    /// Answers with a full decision (rule, error, verdict).
    /// - Parameter decision: The decision.
    /// - Returns: `true` if this call decided; `false` if the challenge was already answered.
    @discardableResult
    public func complete(with decision: ChallengeDecision) -> Bool {
        let won = state.withLock { state -> Bool in
            guard state.decided == nil else { return false }
            state.decided = decision
            return true
        }
        if won {
            deliver(decision)
        } else {
            onMisuse(
                ServerTrustError(
                    .completionCalledTwice,
                    "the completion of \(label) was called again with \(decision.disposition); the first answer stands"))
        }
        return won
    }

    deinit {
        let undecided = state.withLock { $0.decided == nil }
        if undecided {
            let error = ServerTrustError(
                .completionReleased,
                "the completion of \(label) was released without being called; the challenge was cancelled")
            onMisuse(error)
            deliver(ChallengeDecision(.cancelAuthenticationChallenge, error: error))
        }
    }
}
