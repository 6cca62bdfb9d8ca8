/// A handler of challenges, in either of URLSession's two shapes.
public enum ChallengeHandler: Sendable {
    /// An async handler: it returns the decision.
    case async(@Sendable (Challenge) async -> ChallengeDecision)
    /// A completion-handler handler: it may keep the completion and call it later, exactly once.
    case completion(@Sendable (Challenge, ChallengeCompletion) -> Void)

    /// A handler that applies an adapter (its override handler first, then the adapter's rules).
    /// - Parameter adapter: The adapter.
    public static func adapter(_ adapter: ChallengeAdapter) -> ChallengeHandler {
        .completion { challenge, completion in adapter.handle(challenge, completion: completion) }
    }
}

/// Sends each challenge to the session-level or the task-level handler, as URLSession does.
///
/// Session-wide challenges (server trust, client certificate, NTLM, negotiate) go to the session
/// handler when one is set, else to the task handler; task-specific ones (basic, digest, and any
/// other) go to the task handler only. With no handler, the answer is `performDefaultHandling`.
public struct ChallengeRouter: Sendable {
    /// Where a challenge goes.
    public enum Destination: String, Sendable, Hashable {
        /// The session-level handler (`urlSession(_:didReceive:completionHandler:)`).
        case session
        /// The task-level handler (`urlSession(_:task:didReceive:completionHandler:)`).
        case task
        /// No handler: `performDefaultHandling`.
        case defaultHandling
    }

    /// The session-level handler.
    public var sessionHandler: ChallengeHandler?
    /// The task-level handler.
    public var taskHandler: ChallengeHandler?
    /// Told when a handler calls its completion twice or drops it uncalled.
    public var onMisuse: @Sendable (ServerTrustError) -> Void

    /// - Parameters:
    ///   - sessionHandler: The session-level handler.
    ///   - taskHandler: The task-level handler.
    ///   - onMisuse: Told about completion misuse (no secrets are ever in the message).
    public init(
        sessionHandler: ChallengeHandler? = nil, taskHandler: ChallengeHandler? = nil,
        onMisuse: @escaping @Sendable (ServerTrustError) -> Void = { _ in }
    ) {
        self.sessionHandler = sessionHandler
        self.taskHandler = taskHandler
        self.onMisuse = onMisuse
    }

    /// Where a challenge with this method goes, given the handlers set.
    /// - Parameter method: The challenge's authentication method.
    public func destination(for method: AuthenticationMethod) -> Destination {
        if method.isSessionWide, sessionHandler != nil { return .session }
        if taskHandler != nil { return .task }
        return .defaultHandling
    }

    /// Routes a challenge; `completion` is called exactly once.
    /// - Parameters:
    ///   - challenge: The challenge.
    ///   - completion: Receives the decision.
    public func route(_ challenge: Challenge, completion: ChallengeCompletion) {
        let handler: ChallengeHandler?
        switch destination(for: challenge.protectionSpace.authenticationMethod) {
        case .session: handler = sessionHandler
        case .task: handler = taskHandler
        case .defaultHandling: handler = nil
        }
        switch handler {
        case nil:
            completion.complete(with: ChallengeDecision(.performDefaultHandling))
        case .completion(let body)?:
            body(challenge, completion)
        case .async(let body)?:
            Task { completion.complete(with: await body(challenge)) }
        }
    }

    /// Routes a challenge and waits for the decision.
    /// - Parameter challenge: The challenge.
    /// - Returns: The one decision (a cancellation if the handler dropped its completion).
    public func route(_ challenge: Challenge) async -> ChallengeDecision {
        await withCheckedContinuation { continuation in
            route(challenge, completion: makeCompletion(for: challenge) { continuation.resume(returning: $0) })
        }
    }

    /// Makes a completion that reports misuse to ``onMisuse``.
    /// - Parameters:
    ///   - challenge: The challenge (names it in diagnostics).
    ///   - deliver: Receives the one decision.
    public func makeCompletion(for challenge: Challenge, deliver: @escaping @Sendable (ChallengeDecision) -> Void) -> ChallengeCompletion {
        ChallengeCompletion(label: "\(challenge.protectionSpace)", onMisuse: onMisuse, deliver: deliver)
    }
}
