import TrustEvaluator

/// Why a challenge was cancelled or refused, or how a handler misused its completion.
///
/// A struct over a private enum, so new codes do not break callers (STYLE: errors that can grow).
public struct ServerTrustError: Error, Sendable, CustomStringConvertible {
    /// A stable, machine-readable code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case untrusted = "trust.untrusted"
            case hostNotListed = "trust.host-not-listed"
            case evaluationFailed = "trust.evaluation-failed"
            case missingCredential = "auth.no-credential"
            case credentialRejected = "auth.credential-rejected"
            case handlerError = "handler.error"
            case completionCalledTwice = "completion.called-twice"
            case completionReleased = "completion.released-uncalled"
            case sessionInvalidated = "session.invalidated"
            case cancelledByInvalidation = "session.cancelled-by-invalidation"
            case storage = "storage.failure"
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// The code's stable text.
        public var description: String { base.rawValue }

        /// The served chain is not trusted for the host; ``ServerTrustError/verdict`` says why.
        public static let untrusted = Code(.untrusted)
        /// No policy applies to the host, and unlisted hosts are refused.
        public static let hostNotListed = Code(.hostNotListed)
        /// The chain could not be evaluated at all (empty, malformed, bad host); see ``ServerTrustError/underlying``.
        public static let evaluationFailed = Code(.evaluationFailed)
        /// An HTTP challenge arrived and no credential was configured.
        public static let missingCredential = Code(.missingCredential)
        /// A credential already failed for this protection space (`previousFailureCount > 0`).
        public static let credentialRejected = Code(.credentialRejected)
        /// A custom handler answered with an error.
        public static let handlerError = Code(.handlerError)
        /// A completion was called after it had already completed; the second call changed nothing.
        public static let completionCalledTwice = Code(.completionCalledTwice)
        /// A completion was released without being called; the challenge was cancelled.
        public static let completionReleased = Code(.completionReleased)
        /// The session was invalidated; it takes no new challenges.
        public static let sessionInvalidated = Code(.sessionInvalidated)
        /// `invalidateAndCancel` cancelled a challenge that was still pending.
        public static let cancelledByInvalidation = Code(.cancelledByInvalidation)
        /// Credential storage could not read or write its file.
        public static let storage = Code(.storage)
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people. Never holds a password or key.
    public let message: String
    /// For trust failures: the verdict with every reason.
    public let verdict: Verdict?
    /// The error that caused this one, if any.
    public let underlying: (any Error & Sendable)?

    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: A sentence for people.
    ///   - verdict: The verdict, for trust failures.
    ///   - underlying: The cause, if any.
    public init(_ code: Code, _ message: String, verdict: Verdict? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.verdict = verdict
        self.underlying = underlying
    }

    /// `code: message`, followed by the verdict's reasons.
    public var description: String {
        var text = "\(code): \(message)"
        if let verdict, !verdict.failures.isEmpty {
            text += " [" + verdict.failures.map(\.description).joined(separator: "; ") + "]"
        }
        return text
    }
}
