import TrustEvaluator

extension Disposition {
    /// The one answer to a server-trust challenge for what the engine found. The challenge adapter,
    /// the NIO verifier and the command's `--json` all answer through it, so they cannot disagree.
    ///
    /// - A host policy (or the one policy for every host) applied and the chain is trusted:
    ///   ``useCredential``.
    /// - No pins applied (an unlisted host that is allowed, or a host whose pin sets all expired)
    ///   and default validation passed: ``performDefaultHandling`` — the stack's own validation
    ///   may run as well.
    /// - Anything not trusted, including an unlisted host whose default validation failed and an
    ///   unlisted host that is refused: ``cancelAuthenticationChallenge``. Pincheck has already
    ///   found the chain invalid, so it fails closed instead of handing the decision back to a
    ///   stack whose anchors may differ.
    /// - Parameter verdict: The verdict of a `TrustManager` or an `Evaluator`.
    public init(serverTrust verdict: Verdict) {
        guard verdict.isTrusted else {
            self = .cancelAuthenticationChallenge
            return
        }
        switch verdict.coverage {
        case .hostPolicy, .everyHost: self = .useCredential
        case .unlistedDefaultValidation, .pinSetExpired: self = .performDefaultHandling
        case .unlistedRefused: self = .cancelAuthenticationChallenge
        }
    }

    /// Whether a TLS stack that has no default handling of its own (a NIOSSL verification
    /// callback, a command) lets the connection go ahead: Pincheck has already run the default
    /// validation that ``performDefaultHandling`` stands for.
    public var allowsConnection: Bool {
        self == .useCredential || self == .performDefaultHandling
    }

    /// The name of the case, as URLSession spells it (`useCredential`, …).
    public var name: String {
        switch self {
        case .useCredential: "useCredential"
        case .performDefaultHandling: "performDefaultHandling"
        case .cancelAuthenticationChallenge: "cancelAuthenticationChallenge"
        case .rejectProtectionSpace: "rejectProtectionSpace"
        }
    }
}

extension ChallengeDecision {
    /// Whether a road with no default handling of its own (a NIOSSL verification callback, an
    /// mTLS server, gRPC, AsyncHTTPClient) lets the connection go ahead on this decision: its
    /// disposition allows the connection (``Disposition/allowsConnection``, decided by
    /// ``Disposition/init(serverTrust:)``), and a `performDefaultHandling` rests on a trusted
    /// verdict — an override handler's bare answer is not a validation. The one answer every road gives.
    public var allowsConnection: Bool {
        guard disposition.allowsConnection else { return false }
        return disposition == .useCredential || verdict?.isTrusted == true
    }
}
