import FoundationEssentials
import Logging
import TrustEvaluator

/// Turns challenges into decisions with the rules AFNetworking, Alamofire,
/// TrustKit and SDWebImage agree on (one ``Rule`` each).
public struct ChallengeAdapter: Sendable {
    /// Which rule produced a decision (one case per rule).
    public enum Rule: String, Sendable, Hashable, CaseIterable {
        /// A policy applies and the chain is trusted → `useCredential` + server-trust credential.
        case trusted
        /// A policy applies and the chain is not trusted → cancel; the verdict reaches the caller.
        case untrusted
        /// The chain could not be evaluated at all → cancel.
        case evaluationFailed
        /// No pins apply (unlisted host allowed, or every pin set expired): default validation ran →
        /// `performDefaultHandling` when it passed, cancel when it failed.
        case unlistedDefaultHandling
        /// No policy applies and unlisted hosts are refused → cancel.
        case unlistedRefused
        /// "Allow invalid certificates" → `useCredential` for server trust, unevaluated.
        case allowInvalidCertificates
        /// Basic/digest, first attempt, credential configured (or proposed) → `useCredential`.
        case firstAttemptCredential
        /// Basic/digest, no credential → cancel or default handling (configurable).
        case noCredential
        /// Basic/digest with `previousFailureCount > 0` → cancel or reject the space (configurable).
        case retryAfterFailure
        /// Client certificate: the configured identity → `useCredential`; none → default handling.
        case clientIdentity
        /// Any other method → `performDefaultHandling`.
        case otherMethod
        /// The override handler answered.
        case override
    }

    /// What to do with an HTTP challenge when no credential is configured.
    public enum MissingCredential: Sendable, Hashable {
        /// Cancel the challenge (SDWebImage).
        case cancel
        /// Let the stack handle it: URL user/password, then stored default credential, else fail (Alamofire).
        case performDefaultHandling
    }

    /// What to do when a credential already failed (`previousFailureCount > 0`).
    public enum AfterFailure: Sendable, Hashable {
        /// Cancel: the task fails with a cancellation error.
        case cancel
        /// Reject the protection space: the stack gives up on it and delivers the 401.
        case rejectProtectionSpace
    }

    /// Whether invalid server certificates are accepted (SDWebImage's `allowInvalidSSLCertificates`).
    public enum InvalidCertificates: Sendable, Hashable {
        /// Evaluate, and refuse what fails.
        case refuse
        /// Accept every served chain for server trust, without evaluation.
        /// - Warning: For test servers only: anyone on the path can then read and change the traffic.
        case allow(because: String)
    }

    /// What a custom override handler answers (AFNetworking's `authenticationChallengeHandler`).
    public enum OverrideAnswer: Sendable {
        /// Not handled here: the adapter's rules apply.
        case notHandled
        /// Answer with this disposition (and credential).
        case disposition(Disposition, Credential?)
        /// Answer `useCredential` with this credential.
        case credential(Credential)
        /// Cancel the challenge and report this error.
        case error(any Error & Sendable)
        /// The handler kept the completion and will call it itself, exactly once.
        case willCallCompletion
    }

    /// A handler consulted before the rules; it may keep the completion when it answers ``OverrideAnswer/willCallCompletion``.
    public typealias OverrideHandler = @Sendable (Challenge, ChallengeCompletion) -> OverrideAnswer

    /// Which policy applies to which host (when no ``trustManagerSource`` is set).
    public var trustManager: TrustManager
    /// Where the manager in force comes from, when it can change while the process runs: each
    /// server-trust challenge is judged by the manager the source gives at that moment, instead
    /// of ``trustManager``.
    public var trustManagerSource: (any TrustManagerSource)?
    /// Pins an app updates without a release: the ``trustManagerSource``, when it is an
    /// `UpdatableTrustManager`; setting it sets the source.
    public var updatableTrustManager: UpdatableTrustManager? {
        get { trustManagerSource as? UpdatableTrustManager }
        set { trustManagerSource = newValue }
    }

    /// The trust manager that judges a challenge at `time`.
    package func trustManager(at time: Date) -> TrustManager {
        trustManagerSource?.trustManager(at: time) ?? trustManager
    }
    /// Whether invalid certificates are accepted.
    public var invalidCertificates: InvalidCertificates
    /// The credential for basic/digest/NTLM/negotiate challenges.
    public var credential: Credential?
    /// The identity for client-certificate challenges.
    public var clientIdentity: Credential?
    /// What to do with an HTTP challenge and no credential.
    public var missingCredential: MissingCredential
    /// What to do after a credential failed.
    public var afterFailure: AfterFailure
    /// Answers first, when set.
    public var override: OverrideHandler?
    /// The clock; tests inject a fixed time.
    public var now: @Sendable () -> Date
    /// Where the verdicts' pin failure reports go (RFC 7469), if anywhere: each is handed over
    /// without delaying the answer. Wrap it in a `DeduplicatingReporter` (`init` does) so a
    /// failing pin on a busy client does not become a report storm.
    public var reporter: (any Reporter)?
    /// Where trust decisions (`.debug`), expired pin sets and undelivered reports (`.warning`) are
    /// logged; silent by default (see ``TrustLogging``).
    public var logger: Logger
    /// Fetches the CRLs at the distribution points of the verified path before a server-trust
    /// challenge is judged, when the host's policy checks them
    /// (`RevocationPolicy/distributionPointCRLs`). Nil (the default): nothing is fetched, and a
    /// policy that checks them finds no CRL (`revocation.crl-unavailable`). Only ``handle(_:completion:)``
    /// and ``handle(_:)`` fetch: ``decide(_:)`` answers at once with what the challenge carries.
    public var revocationLists: RevocationListFetcher? = nil
    /// The report deliveries under way (shared by copies of this adapter).
    private let deliveries = ReportDeliveries()

    /// - Parameters:
    ///   - trustManager: Which policy applies to which host.
    ///   - invalidCertificates: `.refuse` by default.
    ///   - credential: The credential for HTTP challenges.
    ///   - clientIdentity: The identity for client-certificate challenges.
    ///   - missingCredential: `.cancel` by default.
    ///   - afterFailure: `.rejectProtectionSpace` by default, so a wrong password ends in the 401.
    ///   - override: A handler that may answer first.
    ///   - now: The clock; `Date()` by default.
    ///   - reporter: Where pin failure reports go; wrapped in a `DeduplicatingReporter`. None by default.
    ///   - logger: Where decisions and problems are logged (swift-log); silent by default.
    public init(
        trustManager: TrustManager, invalidCertificates: InvalidCertificates = .refuse,
        credential: Credential? = nil, clientIdentity: Credential? = nil,
        missingCredential: MissingCredential = .cancel, afterFailure: AfterFailure = .rejectProtectionSpace,
        override: OverrideHandler? = nil, now: @escaping @Sendable () -> Date = { Date() },
        reporter: (any Reporter)? = nil, logger: Logger = TrustLogging.silent
    ) {
        self.reporter = reporter.map { DeduplicatingReporter($0) }
        self.logger = logger
        self.trustManager = trustManager
        self.invalidCertificates = invalidCertificates
        self.credential = credential
        self.clientIdentity = clientIdentity
        self.missingCredential = missingCredential
        self.afterFailure = afterFailure
        self.override = override
        self.now = now
    }

    /// An adapter whose pins are updated with signed pin-set updates (see `UpdatableTrustManager`).
    /// - Parameters:
    ///   - updatableTrustManager: The manager whose pins are in force; its compiled-in configuration is ``trustManager``.
    ///   - invalidCertificates: `.refuse` by default.
    ///   - credential: The credential for HTTP challenges.
    ///   - clientIdentity: The identity for client-certificate challenges.
    ///   - missingCredential: `.cancel` by default.
    ///   - afterFailure: `.rejectProtectionSpace` by default, so a wrong password ends in the 401.
    ///   - override: A handler that may answer first.
    ///   - now: The clock; `Date()` by default.
    ///   - reporter: Where pin failure reports go; wrapped in a `DeduplicatingReporter`. None by default.
    ///   - logger: Where decisions and problems are logged (swift-log); silent by default.
    public init(
        updatableTrustManager: UpdatableTrustManager, invalidCertificates: InvalidCertificates = .refuse,
        credential: Credential? = nil, clientIdentity: Credential? = nil,
        missingCredential: MissingCredential = .cancel, afterFailure: AfterFailure = .rejectProtectionSpace,
        override: OverrideHandler? = nil, now: @escaping @Sendable () -> Date = { Date() },
        reporter: (any Reporter)? = nil, logger: Logger = TrustLogging.silent
    ) {
        self.init(
            trustManager: updatableTrustManager.compiledIn, invalidCertificates: invalidCertificates, credential: credential,
            clientIdentity: clientIdentity, missingCredential: missingCredential, afterFailure: afterFailure,
            override: override, now: now, reporter: reporter, logger: logger)
        self.trustManagerSource = updatableTrustManager
    }

    /// An adapter whose trust manager comes from a source each time a challenge is judged.
    /// - Parameters:
    ///   - trustManagerSource: Gives the manager in force at a moment (``trustManager`` starts as
    ///     the one it gives now).
    ///   - invalidCertificates: `.refuse` by default.
    ///   - credential: The credential for HTTP challenges.
    ///   - clientIdentity: The identity for client-certificate challenges.
    ///   - missingCredential: `.cancel` by default.
    ///   - afterFailure: `.rejectProtectionSpace` by default, so a wrong password ends in the 401.
    ///   - override: A handler that may answer first.
    ///   - now: The clock; `Date()` by default.
    ///   - reporter: Where pin failure reports go; wrapped in a `DeduplicatingReporter`. None by default.
    ///   - logger: Where decisions and problems are logged (swift-log); silent by default.
    public init(
        trustManagerSource: any TrustManagerSource, invalidCertificates: InvalidCertificates = .refuse,
        credential: Credential? = nil, clientIdentity: Credential? = nil,
        missingCredential: MissingCredential = .cancel, afterFailure: AfterFailure = .rejectProtectionSpace,
        override: OverrideHandler? = nil, now: @escaping @Sendable () -> Date = { Date() },
        reporter: (any Reporter)? = nil, logger: Logger = TrustLogging.silent
    ) {
        self.init(
            trustManager: trustManagerSource.trustManager(at: now()), invalidCertificates: invalidCertificates,
            credential: credential, clientIdentity: clientIdentity, missingCredential: missingCredential,
            afterFailure: afterFailure, override: override, now: now, reporter: reporter, logger: logger)
        self.trustManagerSource = trustManagerSource
    }

    /// Applies the rules (not the override handler) to a challenge.
    /// - Parameter challenge: The challenge.
    /// - Returns: The decision, with the rule, the verdict and any failure.
    public func decide(_ challenge: Challenge) -> ChallengeDecision {
        let space = challenge.protectionSpace
        switch space.authenticationMethod {
        case .serverTrust:
            return decideServerTrust(challenge)
        case .httpBasic, .httpDigest, .ntlm, .negotiate:
            if challenge.previousFailureCount > 0 {
                let error = ServerTrustError(
                    .credentialRejected,
                    "the credential for \(space) failed \(challenge.previousFailureCount) time(s); not retrying")
                return ChallengeDecision(
                    afterFailure == .cancel ? .cancelAuthenticationChallenge : .rejectProtectionSpace,
                    rule: .retryAfterFailure, error: error)
            }
            if let credential = credential ?? challenge.proposedCredential, credential.user != nil {
                return ChallengeDecision(.useCredential, credential, rule: .firstAttemptCredential)
            }
            switch missingCredential {
            case .cancel:
                return ChallengeDecision(
                    .cancelAuthenticationChallenge, rule: .noCredential,
                    error: ServerTrustError(.missingCredential, "no credential is configured for \(space)"))
            case .performDefaultHandling:
                return ChallengeDecision(.performDefaultHandling, rule: .noCredential)
            }
        case .clientCertificate:
            if let clientIdentity { return ChallengeDecision(.useCredential, clientIdentity, rule: .clientIdentity) }
            return ChallengeDecision(.performDefaultHandling, rule: .clientIdentity)
        default:
            return ChallengeDecision(.performDefaultHandling, rule: .otherMethod)
        }
    }

    private func decideServerTrust(_ challenge: Challenge) -> ChallengeDecision {
        let space = challenge.protectionSpace
        let time = now()
        let chain = space.serverTrust?.servedChain ?? []
        let manager = trustManager(at: time)
        return decideServerTrust(chain, host: space.host) { () throws(PincheckError) in
            try manager.evaluate(
                chain, host: space.host, port: space.port, at: time, stapledOCSPResponse: space.serverTrust?.stapledOCSPResponse,
                revocationLists: space.serverTrust?.revocationLists)
        }
    }

    /// Judges a served chain under a trust manager the caller read once (a handshake's road reads
    /// it once, for the question of the staple and for the verdict alike), fetching the
    /// distribution points' CRLs first when the adapter has a fetcher: the rules of a server-trust
    /// challenge, without a challenge. The override handler is not asked; a road with one goes
    /// through ``handle(_:completion:)``.
    /// - Parameters:
    ///   - defaultFetcher: The fetcher when the adapter has none (``revocationLists``): a road
    ///     whose callback is asynchronous fetches what the policy asks for rather than judge without it.
    ///   - completion: Called exactly once, at once unless CRLs are fetched.
    package func judgeServerTrust(
        _ chain: [Certificate], host: String, port: Int, staple: [UInt8]?, manager: TrustManager,
        at time: Date, defaultFetcher: RevocationListFetcher? = nil,
        completion: @escaping @Sendable (ChallengeDecision) -> Void
    ) {
        guard let fetcher = revocationLists ?? defaultFetcher, !chain.isEmpty, case .refuse = invalidCertificates,
            manager.fetchesDistributionPointCRLs(host: host)
        else {
            completion(
                decideServerTrust(chain, host: host) { () throws(PincheckError) in
                    try manager.evaluate(chain, host: host, port: port, at: time, stapledOCSPResponse: staple, revocationLists: nil)
                })
            return
        }
        // One evaluation, paused off the caller's thread (an event loop, say) while the CRLs its
        // verified path names are fetched.
        let adapter = self
        Task {
            let verdict: Result<Verdict, PincheckError>
            do throws(PincheckError) {
                verdict = .success(
                    try await manager.evaluate(
                        chain, host: host, port: port, at: time, stapledOCSPResponse: staple,
                        fetchingRevocationListsWith: fetcher))
            } catch {
                verdict = .failure(error)
            }
            completion(adapter.decideServerTrust(chain, host: host) { () throws(PincheckError) in try verdict.get() })
        }
    }

    private func decideServerTrust(
        _ chain: [Certificate], host: String,
        judging evaluate: () throws(PincheckError) -> Verdict
    ) -> ChallengeDecision {
        if case .allow = invalidCertificates {
            return ChallengeDecision(.useCredential, Credential(trust: PeerTrust(servedChain: chain)), rule: .allowInvalidCertificates)
        }
        let verdict: Verdict
        do {
            verdict = try evaluate()
        } catch {
            return ChallengeDecision(
                .cancelAuthenticationChallenge, rule: .evaluationFailed,
                error: ServerTrustError(.evaluationFailed, "the chain served by \(host) could not be evaluated: \(error)", underlying: error))
        }
        TrustLogging.log(verdict, host: host, to: logger)
        deliverReports(of: verdict)
        let disposition = Disposition(serverTrust: verdict)
        switch (verdict.coverage, disposition) {
        case (.unlistedRefused, _):
            return ChallengeDecision(
                disposition, rule: .unlistedRefused,
                error: ServerTrustError(.hostNotListed, "no trust policy applies to \(host) and unlisted hosts are refused", verdict: verdict),
                verdict: verdict)
        case (.unlistedDefaultValidation, .performDefaultHandling), (.pinSetExpired, .performDefaultHandling):
            return ChallengeDecision(disposition, rule: .unlistedDefaultHandling, verdict: verdict)
        case (.unlistedDefaultValidation, _), (.pinSetExpired, _):
            return ChallengeDecision(
                disposition, rule: .unlistedDefaultHandling,
                error: ServerTrustError(.untrusted, "no pins apply to \(host) and default validation failed", verdict: verdict),
                verdict: verdict)
        case (_, .useCredential):
            return ChallengeDecision(
                disposition, Credential(trust: PeerTrust(servedChain: chain, verdict: verdict)),
                rule: .trusted, verdict: verdict)
        case _:
            return ChallengeDecision(
                disposition, rule: .untrusted,
                error: ServerTrustError(.untrusted, "the chain served by \(host) is not trusted", verdict: verdict), verdict: verdict)
        }
    }

    /// Hands the verdict's failure reports to the ``reporter`` (deduplicated), without waiting.
    private func deliverReports(of verdict: Verdict) {
        guard let reporter, !verdict.reports.isEmpty else { return }
        let logger = logger
        for report in verdict.reports {
            deliveries.start {
                do { try await reporter.send(report) } catch { TrustLogging.logUndelivered(report, error: error, to: logger) }
            }
        }
    }

    /// Waits until every failure report handed to the ``reporter`` before the call has been
    /// delivered, or has failed and been logged. Reports go out without delaying the answer to a
    /// challenge, so a process that is about to exit calls this first, or loses the reports of
    /// its last connections.
    public func reportsDelivered() async {
        await deliveries.finished()
    }

    /// Answers a challenge through its completion: the override handler first, then the rules.
    /// - Parameters:
    ///   - challenge: The challenge.
    ///   - completion: Called exactly once (by the override handler if it says it will).
    public func handle(_ challenge: Challenge, completion: ChallengeCompletion) {
        if let override {
            switch override(challenge, completion) {
            case .notHandled: break
            case .willCallCompletion: return
            case .disposition(let disposition, let credential):
                completion.complete(with: ChallengeDecision(disposition, credential, rule: .override)); return
            case .credential(let credential):
                completion.complete(with: ChallengeDecision(.useCredential, credential, rule: .override)); return
            case .error(let error):
                completion.complete(
                    with: ChallengeDecision(
                        .cancelAuthenticationChallenge, rule: .override,
                        error: ServerTrustError(.handlerError, "the override handler failed: \(error)", underlying: error)))
                return
            }
        }
        let space = challenge.protectionSpace
        guard revocationLists != nil, space.authenticationMethod == .serverTrust, let trust = space.serverTrust, trust.revocationLists == nil,
            !trust.servedChain.isEmpty, case .refuse = invalidCertificates
        else {
            completion.complete(with: decide(challenge))
            return
        }
        // One evaluation, paused off the caller's thread while its path's CRLs are fetched.
        let time = now()
        judgeServerTrust(
            trust.servedChain, host: space.host, port: space.port, staple: trust.stapledOCSPResponse,
            manager: trustManager(at: time), at: time
        ) { completion.complete(with: $0) }
    }

    /// Answers a challenge: the override handler first, then the rules.
    /// - Parameter challenge: The challenge.
    /// - Returns: The decision.
    public func handle(_ challenge: Challenge) async -> ChallengeDecision {
        await withCheckedContinuation { continuation in
            handle(challenge, completion: ChallengeCompletion(label: "\(challenge.protectionSpace)") { continuation.resume(returning: $0) })
        }
    }

    /// What `performDefaultHandling` does for an HTTP challenge, as URLSession does it: the user and
    /// password in the URL, else the storage's default credential for the space, else fail
    /// (`nil`: the challenge fails and the response is delivered).
    /// - Parameters:
    ///   - challenge: The challenge.
    ///   - url: The request URL (its user and password are used first).
    ///   - storage: The credential storage.
    public static func defaultCredential(for challenge: Challenge, url: URL?, storage: CredentialStorage?) -> Credential? {
        if let user = url?.user, let password = url?.password {
            return Credential(user: user, password: password, persistence: .none)
        }
        return storage?.defaultCredential(for: challenge.protectionSpace)
    }
}
