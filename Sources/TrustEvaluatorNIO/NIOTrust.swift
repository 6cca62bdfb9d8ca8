import Foundation
import Logging
import NIOCore
import NIOSSL
import ServerTrust
import TrustEvaluator

/// Judges TLS peers in SwiftNIO handshakes with Pincheck, through NIOSSL's custom verification callback.
///
/// The callback converts the peer chain (BoringSSL's certificates) to DER, evaluates it with a
/// Pincheck `ChallengeAdapter` as a server-trust challenge for the connection's host, and
/// completes the handshake only when the disposition `Disposition(serverTrust:)` gives allows
/// the connection:
/// - a policy applies and the chain is trusted (`useCredential`);
/// - no pins apply (an unlisted host, allowed; every pin set expired) and default validation
///   passed (`performDefaultHandling` with a trusted verdict);
/// - "allow invalid certificates" is set (`useCredential`, unevaluated).
/// Everything else fails the handshake. Set the channel up with
/// `addClientHandlers(to:context:host:port:onDecision:)` and the caller catches a
/// ``PincheckTrustError`` carrying the verdict; every decision also reaches `onDecision`.
///
/// Session resumption: swift-nio-ssl 2.37 offers clients no session cache, so every
/// client handshake is a full one and runs this callback; there is nothing to bypass the pins.
///
/// Stapled OCSP: swift-nio-ssl does not deliver the server's staple, so the verifier asks the
/// server for it over a second connection when ``staples`` says so (``StapleRetrieval``; by
/// default only where the connection cannot succeed without one) and judges it exactly as the
/// other routes do.
public struct PincheckNIOVerifier: Sendable {
    /// NIOSSL's verification callback with metadata, `@Sendable`.
    public typealias SendableVerificationCallback =
        @Sendable ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResultWithMetadata>) -> Void

    /// The rules (trust manager, invalid-certificate option, override handler, clock).
    public let adapter: ChallengeAdapter
    /// Run the evaluation on a task instead of the event loop (OpenSSL costs 0.1–1 ms a chain).
    public let offloadEvaluation: Bool
    /// Where the peers' certificates are found when they were parsed before: a client connecting
    /// to the same servers again skips OpenSSL's decoding (about 100 µs a certificate) and only
    /// verifies. Every handshake is still verified in full.
    public let certificateCache: CertificateCache
    /// When the server's stapled OCSP response is asked for over a second connection
    /// (swift-nio-ssl does not deliver it): ``StapleRetrieval/whenRequired`` by default.
    public var staples: StapleRetrieval

    /// - Parameters:
    ///   - adapter: The rules to apply (its `trustManager` says which policy applies to which host).
    ///   - offloadEvaluation: Evaluate off the event loop; `true` by default.
    ///   - certificateCache: Parsed certificates to reuse; one cache for the process by default.
    ///   - staples: When the stapled OCSP response is asked for; only where the connection cannot
    ///     succeed without one (a must-staple leaf, a policy with `requireStapledOCSP`) by default.
    public init(
        adapter: ChallengeAdapter, offloadEvaluation: Bool = true, certificateCache: CertificateCache = .shared,
        staples: StapleRetrieval = .whenRequired
    ) {
        self.adapter = adapter
        self.offloadEvaluation = offloadEvaluation
        self.certificateCache = certificateCache
        self.staples = staples
    }

    /// A verifier applying one policy to every host. Distribution-point CRLs, when the policy
    /// checks them, come through the process's fetcher, which reaches no loopback address; for a
    /// lab CRL server give the fetcher: ``init(policy:revocationLists:now:reporter:logger:)``.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - now: The clock; tests inject a fixed time.
    ///   - reporter: Where pin failure reports go (deduplicated); none by default.
    ///   - logger: Where decisions are logged (swift-log, `.debug`); silent by default.
    public init(
        policy: TrustPolicy, now: @escaping @Sendable () -> Date = { Date() }, reporter: (any Reporter)? = nil,
        logger: Logger = TrustLogging.silent
    ) {
        self.init(adapter: ChallengeAdapter(trustManager: .single(policy), now: now, reporter: reporter, logger: logger))
    }

    /// A verifier applying one policy to every host, whose distribution-point CRLs (when the
    /// policy checks them) come through `revocationLists`, not the process's fetcher: the knob for
    /// a lab or private CRL server (`RevocationListFetcher.Limits.allowsLoopback`,
    /// `allowsPrivateNetworks`), a proxy, a cache directory or other limits.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - revocationLists: The fetcher for distribution-point CRLs.
    ///   - now: The clock; tests inject a fixed time.
    ///   - reporter: Where pin failure reports go (deduplicated); none by default.
    ///   - logger: Where decisions are logged (swift-log, `.debug`); silent by default.
    public init(
        policy: TrustPolicy, revocationLists: RevocationListFetcher, now: @escaping @Sendable () -> Date = { Date() },
        reporter: (any Reporter)? = nil, logger: Logger = TrustLogging.silent
    ) {
        var adapter = ChallengeAdapter(trustManager: .single(policy), now: now, reporter: reporter, logger: logger)
        adapter.revocationLists = revocationLists
        self.init(adapter: adapter)
    }

    /// A verifier applying a trust manager's per-host policies, whose distribution-point CRLs
    /// come through `revocationLists` (see ``init(policy:revocationLists:now:reporter:logger:)``).
    /// - Parameters:
    ///   - trustManager: Which policy applies to which host.
    ///   - revocationLists: The fetcher for distribution-point CRLs.
    ///   - now: The clock; tests inject a fixed time.
    ///   - reporter: Where the verdicts' pin failure reports go (deduplicated); none by default.
    ///   - logger: Where decisions, expired pin sets and undelivered reports are logged (swift-log); silent by default.
    public init(
        trustManager: TrustManager, revocationLists: RevocationListFetcher, now: @escaping @Sendable () -> Date = { Date() },
        reporter: (any Reporter)? = nil, logger: Logger = TrustLogging.silent
    ) {
        var adapter = ChallengeAdapter(trustManager: trustManager, now: now, reporter: reporter, logger: logger)
        adapter.revocationLists = revocationLists
        self.init(adapter: adapter)
    }

    /// A verifier applying a trust manager's per-host policies and unlisted-host rule.
    /// - Parameters:
    ///   - trustManager: Which policy applies to which host.
    ///   - now: The clock; tests inject a fixed time.
    ///   - reporter: Where the verdicts' pin failure reports go (deduplicated); none by default.
    ///   - logger: Where decisions, expired pin sets and undelivered reports are logged (swift-log); silent by default.
    public init(
        trustManager: TrustManager, now: @escaping @Sendable () -> Date = { Date() }, reporter: (any Reporter)? = nil,
        logger: Logger = TrustLogging.silent
    ) {
        self.init(adapter: ChallengeAdapter(trustManager: trustManager, now: now, reporter: reporter, logger: logger))
    }

    /// A verifier whose pins an app updates without a release: each handshake is judged by the
    /// manager `UpdatableTrustManager` has in force at that moment (one atomic load, no lock),
    /// so a handshake in flight finishes on the pins it started with.
    /// - Parameters:
    ///   - updatableTrustManager: The compiled-in configuration and the accepted signed update.
    ///   - now: The clock; `Date()` by default.
    ///   - reporter: Where pin failure reports go (deduplicated); none by default.
    ///   - logger: Where decisions are logged (swift-log); silent by default.
    public init(
        updatableTrustManager: UpdatableTrustManager, now: @escaping @Sendable () -> Date = { Date() },
        reporter: (any Reporter)? = nil, logger: Logger = TrustLogging.silent
    ) {
        self.init(adapter: ChallengeAdapter(updatableTrustManager: updatableTrustManager, now: now, reporter: reporter, logger: logger))
    }

    /// A verifier whose trust manager comes from a source at each handshake (an
    /// `UpdatableTrustManager`, or one of the app's own): a handshake in flight finishes under the
    /// manager it started with.
    /// - Parameters:
    ///   - trustManagerSource: Gives the manager in force at a moment.
    ///   - now: The clock; `Date()` by default.
    ///   - reporter: Where pin failure reports go (deduplicated); none by default.
    ///   - logger: Where decisions are logged (swift-log); silent by default.
    public init(
        trustManagerSource: any TrustManagerSource, now: @escaping @Sendable () -> Date = { Date() },
        reporter: (any Reporter)? = nil, logger: Logger = TrustLogging.silent
    ) {
        self.init(adapter: ChallengeAdapter(trustManagerSource: trustManagerSource, now: now, reporter: reporter, logger: logger))
    }

    /// Whether a decision lets the handshake complete.
    @available(*, deprecated, renamed: "ChallengeDecision.allowsConnection")
    public static func accepts(_ decision: ChallengeDecision) -> Bool { decision.allowsConnection }

    /// Evaluates a served chain for a host, as the callback does.
    /// - Parameters:
    ///   - derChain: The peer's chain, leaf first, as DER.
    ///   - host: The host connected to (DNS name or IP literal).
    ///   - port: The port connected to.
    ///   - address: The numeric address connected to, where a second connection for the stapled
    ///     OCSP response goes (``staples``); nil looks `host` up instead.
    ///   - completion: Receives the decision exactly once: at once, unless an override handler keeps
    ///     it or the stapled OCSP response is asked for (``staples``); unreadable certificates give a
    ///     cancel with `.evaluationFailed`.
    public func decide(
        derChain: [[UInt8]], host: String, port: Int, address: String? = nil,
        completion: @escaping @Sendable (ChallengeDecision) -> Void
    ) {
        let chain: [Certificate]
        do {
            chain = try certificateCache.chain(derEncoded: derChain)
        } catch {
            completion(
                ChallengeDecision(
                    .cancelAuthenticationChallenge, rule: .evaluationFailed,
                    error: ServerTrustError(.evaluationFailed, "the peer's certificates could not be read: \(error)", underlying: error)))
            return
        }
        let adapter = adapter
        // The trust manager in force is read once per handshake: it answers whether the staple
        // is wanted and judges the chain, so an update between the two cannot split them.
        let time = adapter.now()
        let manager = adapter.trustManager(at: time)
        let judge: @Sendable ([UInt8]?) -> Void = { staple in
            guard adapter.override != nil else {
                // NIOSSL's callback is asynchronous: the CRLs a policy asks for are fetched (with the
                // adapter's fetcher, else the process's), never skipped.
                adapter.judgeServerTrust(
                    chain, host: host, port: port, staple: staple, manager: manager, at: time,
                    defaultFetcher: .processWide, completion: completion)
                return
            }
            // An override handler is URLSession's: it is handed a challenge, and answers first.
            let challenge = Challenge(
                protectionSpace: ProtectionSpace(
                    host: host, port: port, protocol: "https", authenticationMethod: .serverTrust,
                    serverTrust: PeerTrust(servedChain: chain, stapledOCSPResponse: staple)))
            adapter.handle(challenge, completion: ChallengeCompletion(label: "TLS peer \(host):\(port)", deliver: completion))
        }
        guard let leaf = chain.first, wantsStaple(leaf: leaf, host: host, manager: manager) else {
            judge(nil)
            return
        }
        staples.staple(for: leaf, host: host, port: port, address: address, logger: adapter.logger, completion: judge)
    }

    /// Whether the evaluation of this connection is to have the server's stapled OCSP response:
    /// only when the chain is evaluated at all (not under "allow invalid certificates"), and as
    /// ``staples`` says, under the trust manager in force for this handshake.
    private func wantsStaple(leaf: Certificate, host: String, manager: TrustManager) -> Bool {
        guard staples.scope != .never, case .refuse = adapter.invalidCertificates else { return false }
        return staples.wanted(leaf: leaf, host: host, manager: manager)
    }

    /// Evaluates a served chain for a host, as the callback does.
    /// - Parameters:
    ///   - derChain: The peer's chain, leaf first, as DER.
    ///   - host: The host connected to (DNS name or IP literal).
    ///   - port: The port connected to.
    ///   - address: The numeric address connected to (see the other `decide`); nil looks `host` up.
    /// - Returns: The decision.
    public func decide(derChain: [[UInt8]], host: String, port: Int, address: String? = nil) async -> ChallengeDecision {
        await withCheckedContinuation { continuation in
            decide(derChain: derChain, host: host, port: port, address: address) { continuation.resume(returning: $0) }
        }
    }

    /// Waits until the failure reports of the handshakes judged so far have been delivered (see
    /// `ChallengeAdapter/reportsDelivered()`): call it before a short-lived process exits.
    public func reportsDelivered() async {
        await adapter.reportsDelivered()
    }

    /// Makes the NIOSSL callback for one connection. Build it inside the channel initializer.
    /// - Parameters:
    ///   - host: The host connected to; the leaf must carry it (unless the policy disables name checks).
    ///   - port: The port connected to (names the protection space).
    ///   - channel: The channel the handshake runs on: a second connection for the stapled OCSP
    ///     response (``staples``) goes to the address it is connected to. Without it, `host` is looked up.
    ///   - onDecision: Receives every decision, accepted or not, with the verdict and reasons.
    ///
    /// The closure is `@Sendable`, so it fits both NIOSSL's `NIOSSLCustomVerificationCallbackWithMetadata`
    /// and stacks that require a sendable callback (gRPC Swift 2's `customVerificationCallback`).
    public func callback(
        host: String, port: Int = 443, channel: (any Channel)? = nil,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    )
        -> SendableVerificationCallback
    {
        callback(host: host, port: port, peer: PeerAddress(channel), onDecision: onDecision)
    }

    private func callback(
        host: String, port: Int, peer: PeerAddress,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void
    ) -> SendableVerificationCallback {
        let verifier = self
        return { peerChain, promise in
            guard let der = Self.encoded(peerChain, whose: "peer's", onDecision: onDecision, promise: promise) else { return }
            // Read now, on the loop, while the handshake holds the connection open.
            let address = peer.address
            let evaluate: @Sendable () -> Void = {
                verifier.decide(derChain: der, host: host, port: port, address: address) { decision in
                    onDecision(decision)
                    // Promises may be completed from any thread; NIOSSL resumes the handshake on its loop.
                    guard decision.allowsConnection, let validated = Self.validatedChain(decision, presented: peerChain) else {
                        promise.succeed(.failed)
                        return
                    }
                    promise.succeed(.certificateVerified(VerificationMetadata(validated)))
                }
            }
            if verifier.offloadEvaluation {
                Task.detached { evaluate() }
            } else {
                evaluate()
            }
        }
    }

    /// The presented chain as DER; nil after refusing it (decision delivered, promise failed)
    /// when NIOSSL cannot encode it.
    static func encoded(
        _ presented: [NIOSSLCertificate], whose: String, onDecision: @Sendable (ChallengeDecision) -> Void,
        promise: EventLoopPromise<NIOSSLVerificationResultWithMetadata>
    ) -> [[UInt8]]? {
        do {
            return try presented.map { try $0.toDERBytes() }
        } catch {
            onDecision(
                ChallengeDecision(
                    .cancelAuthenticationChallenge, rule: .evaluationFailed,
                    error: ServerTrustError(.evaluationFailed, "the \(whose) certificates could not be encoded: \(error)")))
            promise.succeed(.failed)
            return nil
        }
    }

    /// What NIOSSL is told was validated (`peerValidatedCertificateChain`): the path Pincheck
    /// verified, leaf first, ending at the anchor (or the pinned certificate) — never the chain as
    /// presented, which may hold certificates nothing verified. A connection allowed without a
    /// verified path (an override handler's answer) validated nothing beyond the leaf it saw.
    /// Nil when there is nothing to name (no path and no certificate): the handshake then fails.
    static func validatedChain(_ decision: ChallengeDecision, presented: [NIOSSLCertificate]) -> ValidatedCertificateChain? {
        if let path = decision.verdict?.verifiedPath?.certificates, !path.isEmpty,
            let converted = try? path.map({ try NIOSSLCertificate(bytes: $0.derBytes, format: .der) })
        {
            return ValidatedCertificateChain(converted)
        }
        guard let leaf = presented.first else { return nil }
        return ValidatedCertificateChain([leaf])
    }

    /// Makes a client TLS handler whose verification is Pincheck's.
    /// - Parameters:
    ///   - context: A context from ``makeClientConfiguration()`` (or any with `certificateVerification` not `.none`).
    ///   - host: The host connected to; also sent as SNI unless it is an IP literal.
    ///   - port: The port connected to.
    ///   - channel: The channel the handler goes into, so a second connection for the stapled OCSP
    ///     response goes to the same address (see ``callback(host:port:channel:onDecision:)``).
    ///   - onDecision: Receives the decision, with the verdict and its reasons.
    /// - Throws: NIOSSL's errors for a bad context or host name.
    public func makeClientHandler(
        context: NIOSSLContext, host: String, port: Int = 443, channel: (any Channel)? = nil,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    ) throws -> NIOSSLClientHandler {
        try makeClientHandler(context: context, host: host, port: port, peer: PeerAddress(channel), onDecision: onDecision)
    }

    private func makeClientHandler(
        context: NIOSSLContext, host: String, port: Int, peer: PeerAddress,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void
    ) throws -> NIOSSLClientHandler {
        let isIPLiteral = HostName.isIPLiteral(host)
        return try NIOSSLClientHandler(
            context: context, serverHostname: isIPLiteral ? nil : host,
            customVerificationCallbackWithMetadata: callback(host: host, port: port, peer: peer, onDecision: onDecision))
    }

    /// Adds the TLS handler and, after it, the handler that turns Pincheck's refusal into a
    /// ``PincheckTrustError``: the error the channel's error path, pending writes and the returned
    /// future fail with, carrying the verdict. Call it in the channel initializer (on the loop).
    /// - Parameters:
    ///   - pipeline: The channel's synchronous pipeline operations.
    ///   - context: A context from ``makeClientConfiguration()``.
    ///   - host: The host connected to; also sent as SNI unless it is an IP literal.
    ///   - port: The port connected to.
    ///   - position: Where the two handlers go: `.last` (an empty pipeline) by default; `.first`
    ///     when other handlers were added before (gRPC's, say).
    ///   - onDecision: Receives the decision, with the verdict and its reasons.
    /// - Returns: A future that succeeds when the handshake completes and fails with a
    ///   ``PincheckTrustError`` when Pincheck refused the peer (or with the connection's own error).
    /// - Throws: NIOSSL's errors for a bad context or host name.
    @discardableResult
    public func addClientHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, context: NIOSSLContext,
        host: String, port: Int = 443, position: ChannelPipeline.SynchronousOperations.Position = .last,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    ) throws -> EventLoopFuture<Void> {
        let record = DecisionRecord()
        let peer = PeerAddress(nil)
        let tls = try makeClientHandler(context: context, host: host, port: port, peer: peer) { decision in
            record.record(decision)
            onDecision(decision)
        }
        try pipeline.addHandler(tls, position: position)
        peer.attach(try pipeline.context(handler: tls).channel)
        let translator = PincheckTrustErrorHandler(record: record)
        try pipeline.addHandler(translator, position: .after(tls))
        return translator.handshake(on: pipeline.eventLoop)
    }

    /// The handshake of a channel set up with `addClientHandlers(to:context:host:port:onDecision:)`:
    /// succeeds when it completes, fails with a ``PincheckTrustError`` when Pincheck refused the
    /// peer. Ask while the channel is open (the returned future of `addClientHandlers` works always).
    public static func handshakeCompleted(on channel: any Channel) -> EventLoopFuture<Void> {
        channel.eventLoop.flatSubmit {
            do {
                return try channel.pipeline.syncOperations.handler(type: PincheckTrustErrorHandler.self).handshake(on: channel.eventLoop)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
    }

    /// A client configuration suitable for the callback: Pincheck decides the chain *and* the
    /// name, so NIOSSL's own host check is off (`.noHostnameVerification`; NIOSSL skips custom
    /// callbacks only when verification is `.none`) — one name check, the policy's, against the
    /// host the callback was given, also for IP targets and name-validation-disabled policies.
    /// TLS 1.2 or newer.
    public static func makeClientConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .noHostnameVerification
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }

    /// `base` made suitable for the callback, as ``makeClientConfiguration()`` is: NIOSSL's host
    /// check off (Pincheck checks the name), TLS 1.2 or newer. Every other field of `base` is
    /// kept: the client's identity (certificate chain and private key, for servers that ask for
    /// one), TLS versions above 1.2, cipher suites, curves, ALPN, key logging.
    /// - Throws: `PincheckError` (`policy.invalid`) when `base` offers a pre-shared key: a PSK
    ///   handshake presents no certificate, so neither the chain nor the pins would be checked.
    public static func makeClientConfiguration(base: TLSConfiguration) throws -> TLSConfiguration {
        if base.pskClientProvider != nil {
            throw PincheckError(
                .invalidPolicy,
                "the TLS configuration offers a pre-shared key, and a PSK handshake presents no certificate to verify or pin; remove pskClientProvider to pin this client"
            )
        }
        var configuration = base
        configuration.certificateVerification = .noHostnameVerification
        switch configuration.minimumTLSVersion {
        case .tlsv1, .tlsv11: configuration.minimumTLSVersion = .tlsv12
        case .tlsv12, .tlsv13: break
        }
        if let maximum = configuration.maximumTLSVersion, maximum == .tlsv1 || maximum == .tlsv11 {
            configuration.maximumTLSVersion = nil
        }
        return configuration
    }
}

/// The address a channel is connected to, read when a handshake asks for it: by then the channel
/// is connected. The channel is held weakly (its pipeline holds the callback that holds this).
final class PeerAddress: Sendable {
    private struct Reference {
        weak var channel: (any Channel)?
    }

    private let reference: Locked<Reference>

    init(_ channel: (any Channel)?) {
        reference = Locked(Reference(channel: channel))
    }

    func attach(_ channel: any Channel) {
        reference.withLock { $0.channel = channel }
    }

    /// The numeric address, or nil when there is no channel (or it is not an IP connection).
    var address: String? {
        reference.withLock { $0.channel }?.remoteAddress?.ipAddress
    }
}
