import Foundation
import Logging
import NIOCore
import NIOSSL
import ServerTrust
import TrustEvaluator

extension ChallengeDecision {
    /// The identities (subjectAltName URIs and DNS names) of the client certificate this decision
    /// let in, from the verified path's leaf; empty when the client was refused. What a route
    /// reads to know who is calling.
    public var clientIdentities: [ClientIdentity] {
        guard disposition.allowsConnection, let leaf = verdict?.verifiedPath?.certificates.first else { return [] }
        return leaf.subjectAlternativeNames.compactMap { name in
            switch name {
            case .uri(let uri): .uri(uri)
            case .dnsName(let dnsName): .dnsName(dnsName)
            default: nil
            }
        }
    }
}

/// Judges the certificates TLS clients present to a NIOSSL server (mutual TLS) with Pincheck:
/// anchors (a private CA), SPKI or certificate pins on the client's key or its CA, revocation
/// (CRLs given to the policy, or fetched from distribution points), and the identities a client
/// must carry. NIOSSL is told the **verified path** as the validated chain — never the chain as
/// presented, which may hold certificates nothing verified.
///
/// ```swift
/// let verifier = try PincheckClientCertificateVerifier(policy: TrustPolicy(anchors: try TrustAnchors(certificates: [clientCA])),
///                                                      requiredIdentities: [.uri("spiffe://example.org/ns/prod/sa/api")])
/// // in the server's child channel initializer:
/// try verifier.addServerHandlers(to: channel.pipeline.syncOperations, context: serverContext)
/// // in a handler: PincheckClientCertificateVerifier.decision(on: channel) → the verdict
/// ```
public struct PincheckClientCertificateVerifier: Sendable {
    /// The policy clients are judged by: the one given, for client authentication (purpose
    /// sslclient) and without a host name (a client certificate names no host it is reached at).
    public let policy: TrustPolicy
    /// The identities of which the client's leaf must carry one; empty: any identity.
    public let requiredIdentities: [ClientIdentity]
    /// Fetches CRLs from distribution points when the policy asks for them.
    public let revocationLists: RevocationListFetcher
    private let certificateCache: CertificateCache
    private let now: @Sendable () -> Date
    private let offloadEvaluation: Bool
    /// The trusted decisions of recent handshakes, by the client's leaf (shared by copies).
    private let accepted = AcceptedClients()
    /// What judges a client now: one anchor set, or an evaluator per trust domain; swapped as a
    /// whole when watched files change (shared by copies).
    private let trust: ClientTrustSource

    /// The trust domains clients are judged by now, by name; empty when the verifier has one anchor set.
    public var trustDomains: [String: SPIFFETrustDomain] { trust.current.trustDomains }
    /// What a server should log when it starts: client anchors that are public roots (or the
    /// system store), whose clients lose clientAuth at their next renewal
    /// (`TrustAnchors.clientAuthenticationWarnings(rootPrograms:)`). Vapor's wiring and the
    /// bundle-folder watcher log them.
    public var startupWarnings: [String] {
        let trust = trust.current
        guard trust.router != nil else { return policy.validation.anchors.clientAuthenticationWarnings() }
        return trust.trustDomains.keys.sorted().flatMap { name in
            trust.trustDomains[name]!.anchors.clientAuthenticationWarnings().map { "trust domain \(name): \($0)" }
        }
    }
    /// How many times the trust in force was replaced since the verifier was made (0: never);
    /// watched files (a bundle folder, anchor files) that changed and parsed raise it.
    public var trustGeneration: Int { trust.current.generation }

    /// - Parameters:
    ///   - policy: Anchors, pinning and revocation for clients. Its purpose becomes client
    ///     authentication and its name check is off (there is no host to check).
    ///   - requiredIdentities: The client's leaf must carry one of these (none: no identity rule).
    ///   - revocationLists: The fetcher for distribution-point CRLs (a fresh one by default).
    ///   - now: The clock verdicts are judged at.
    ///   - offloadEvaluation: Evaluate in a detached task, off the event loop (the default). False
    ///     starts the evaluation at once in a task that inherits the caller's context (it stays
    ///     asynchronous: a policy may fetch CRLs); the handshake waits for it either way.
    ///   - certificateCache: Parsed certificates to reuse across handshakes.
    ///   - verdictCache: Verdicts to reuse while they still hold (a client reconnecting with the
    ///     same chain is judged once per validity window); nil judges every handshake afresh.
    /// - Throws: `PincheckError` (`policy.invalid`) when the policy does not validate chains:
    ///   a server must not let any certificate in.
    public init(
        policy: TrustPolicy, requiredIdentities: [ClientIdentity] = [],
        revocationLists: RevocationListFetcher = RevocationListFetcher(), now: @escaping @Sendable () -> Date = { Date() },
        offloadEvaluation: Bool = true, certificateCache: CertificateCache = .shared,
        verdictCache: VerdictCache? = VerdictCache()
    ) throws(PincheckError) {
        if case .disabled = policy.validation.chainValidation {
            throw PincheckError(.invalidPolicy, "a server must validate its clients' chains: chainValidation cannot be disabled here")
        }
        var clients = policy.judgingClients
        clients.validation.clientIdentity.identities = requiredIdentities
        self.policy = clients
        self.requiredIdentities = requiredIdentities
        self.revocationLists = revocationLists
        self.trust = ClientTrustSource(
            ClientTrust(
                evaluator: Evaluator(policy: clients, certificateCache: certificateCache, verdictCache: verdictCache),
                router: nil, trustDomains: [:], generation: 0))
        self.certificateCache = certificateCache
        self.now = now
        self.offloadEvaluation = offloadEvaluation
    }

    /// A verifier for several SPIFFE trust domains, each with its own CA bundle (Envoy's
    /// `trust_bundle_map`): a client is judged against the bundle of the one trust domain its
    /// leaf's SPIFFE ID names, and only that one. A client naming no domain, several, or one without
    /// a bundle is refused (`identity.trust-domain-missing`, `identity.trust-domain-unknown`); a
    /// client whose chain ends at another domain's CA is refused with
    /// `identity.trust-domain-mismatch` besides its chain failure.
    /// - Parameters:
    ///   - trustDomains: The domains and their bundles; at least one, each name once.
    ///   - policy: Pinning, revocation and the other settings clients are judged by. Its anchors
    ///     are not used: each domain's bundle stands in for them, and the domain's CRLs are added
    ///     to its revocation lists.
    ///   - requiredIdentities: The client's leaf must carry one of these (none: any identity of a known domain).
    ///   - revocationLists: The fetcher for distribution-point CRLs (a fresh one by default).
    ///   - now: The clock verdicts are judged at.
    ///   - offloadEvaluation: Evaluate in a detached task, off the event loop (the default).
    ///   - certificateCache: Parsed certificates to reuse across handshakes.
    ///   - verdictCache: Verdicts to reuse while they still hold; nil judges every handshake afresh.
    /// - Throws: `PincheckError` (`policy.invalid`) for no domain, a domain given twice, or a
    ///   policy that does not validate chains.
    public init(
        trustDomains: [SPIFFETrustDomain], policy: TrustPolicy = TrustPolicy(), requiredIdentities: [ClientIdentity] = [],
        revocationLists: RevocationListFetcher = RevocationListFetcher(), now: @escaping @Sendable () -> Date = { Date() },
        offloadEvaluation: Bool = true, certificateCache: CertificateCache = .shared,
        verdictCache: VerdictCache? = VerdictCache()
    ) throws(PincheckError) {
        try self.init(
            policy: ClientTrust.placeholderPolicy(policy, trustDomains), requiredIdentities: requiredIdentities,
            revocationLists: revocationLists, now: now, offloadEvaluation: offloadEvaluation,
            certificateCache: certificateCache, verdictCache: verdictCache)
        trust.replace(
            with: try ClientTrust(
                trustDomains: trustDomains, clients: self.policy, certificateCache: certificateCache,
                verdictCache: verdictCache, generation: 0))
    }

    /// A verifier for the trust domains of a SPIFFE bundle folder (``SPIFFETrustDomain/bundles(inFolder:)``),
    /// re-read while the server runs: SPIRE and cert-manager rotate bundles on disk.
    ///
    /// The folder is read every `interval`; when its files changed and parse, the new domains
    /// replace the old ones at once (``trustGeneration`` goes up, logged at `.notice`). A handshake
    /// already being judged finishes under the bundles it started with. A change that does not
    /// parse (a malformed bundle, an empty folder) is refused with an `.error` log line and the
    /// bundles in force are kept: the trust set is never emptied by a bad write. Watching stops
    /// when the last copy of the verifier is gone.
    /// - Parameters:
    ///   - folder: The SPIFFE bundle folder (`DOMAIN.trust-bundle.pem`, optionally `DOMAIN.crl.pem`).
    ///   - interval: How often the folder is read (5 seconds by default).
    ///   - logger: Where reloads and refused changes are logged.
    ///   - policy: Pinning, revocation and the other settings clients are judged by; its anchors are
    ///     replaced by each domain's bundle.
    ///   - requiredIdentities: The client's leaf must carry one of these (none: any identity of a known domain).
    ///   - revocationLists: The fetcher for distribution-point CRLs (a fresh one by default).
    ///   - now: The clock verdicts are judged at.
    ///   - offloadEvaluation: Evaluate in a detached task, off the event loop (the default).
    ///   - certificateCache: Parsed certificates to reuse across handshakes.
    ///   - verdictCache: Verdicts to reuse while they still hold; nil judges every handshake afresh.
    /// - Throws: `PincheckError` when the folder cannot be read now: a server does not start without trust.
    public init(
        watchingBundleFolder folder: String, interval: Duration = .seconds(5), logger: Logger = Logger(label: "pincheck.trust-bundles"),
        policy: TrustPolicy = TrustPolicy(), requiredIdentities: [ClientIdentity] = [],
        revocationLists: RevocationListFetcher = RevocationListFetcher(), now: @escaping @Sendable () -> Date = { Date() },
        offloadEvaluation: Bool = true, certificateCache: CertificateCache = .shared,
        verdictCache: VerdictCache? = VerdictCache()
    ) throws(PincheckError) {
        let snapshot = try BundleFolderSnapshot(folder: folder)
        try self.init(
            trustDomains: try snapshot.domains(), policy: policy, requiredIdentities: requiredIdentities,
            revocationLists: revocationLists, now: now, offloadEvaluation: offloadEvaluation,
            certificateCache: certificateCache, verdictCache: verdictCache)
        logger.notice("client trust in force", metadata: ClientTrust.metadata(trust.current, source: folder))
        for warning in startupWarnings { logger.warning("\(warning)") }
        let clients = self.policy
        trust.watch(folder, from: snapshot, every: interval, logger: logger) { () throws(PincheckError) in
            try BundleFolderSnapshot(folder: folder)
        } make: { snapshot, generation throws(PincheckError) in
            try ClientTrust(
                trustDomains: try snapshot.domains(), clients: clients, certificateCache: certificateCache,
                verdictCache: verdictCache, generation: generation)
        }
    }

    /// A verifier of one anchor set (no trust domains) read from files, re-read while the server
    /// runs, as ``init(watchingBundleFolder:interval:logger:policy:requiredIdentities:revocationLists:now:offloadEvaluation:certificateCache:verdictCache:)``
    /// re-reads a bundle folder: a change that parses is put in force whole, one that does not
    /// (an empty or truncated file) is logged and refused, a handshake in flight keeps what it started with.
    /// - Parameters:
    ///   - anchorFiles: PEM or DER files of the client CAs; at least one certificate in all.
    ///   - crlFiles: CRL files of those CAs, re-read with them.
    ///   - interval: How often the files are read (5 seconds by default).
    ///   - logger: Where reloads and refused changes are logged.
    ///   - policy: Pinning, revocation and the other settings clients are judged by; its anchors
    ///     and revocation lists are replaced by the files'.
    ///   - requiredIdentities: The client's leaf must carry one of these (none: no identity rule).
    ///   - revocationLists: The fetcher for distribution-point CRLs (a fresh one by default).
    ///   - now: The clock verdicts are judged at.
    ///   - offloadEvaluation: Evaluate in a detached task, off the event loop (the default).
    ///   - certificateCache: Parsed certificates to reuse across handshakes.
    ///   - verdictCache: Verdicts to reuse while they still hold; nil judges every handshake afresh.
    /// - Throws: `PincheckError` when the files cannot be read now, or hold no certificate.
    public init(
        watchingAnchorFiles anchorFiles: [String], crlFiles: [String] = [], interval: Duration = .seconds(5),
        logger: Logger = Logger(label: "pincheck.trust-bundles"),
        policy: TrustPolicy = TrustPolicy(), requiredIdentities: [ClientIdentity] = [],
        revocationLists: RevocationListFetcher = RevocationListFetcher(), now: @escaping @Sendable () -> Date = { Date() },
        offloadEvaluation: Bool = true, certificateCache: CertificateCache = .shared,
        verdictCache: VerdictCache? = VerdictCache()
    ) throws(PincheckError) {
        let paths = anchorFiles + crlFiles
        @Sendable func judged(_ files: WatchedFiles, _ base: TrustPolicy) throws(PincheckError) -> TrustPolicy {
            var clients = base
            var certificates: [Certificate] = []
            for (path, bytes) in zip(anchorFiles, files.contents) { certificates += try Certificate.parseBundle(bytes, source: path) }
            clients.validation.anchors = try TrustAnchors(certificates: certificates)
            clients.validation.revocationLists = []
            for (path, bytes) in zip(crlFiles, files.contents.dropFirst(anchorFiles.count)) {
                clients.validation.revocationLists += try CertificateRevocationList.parse(bytes, source: path)
            }
            return clients
        }
        let first = try WatchedFiles(paths)
        try self.init(
            policy: try judged(first, policy), requiredIdentities: requiredIdentities, revocationLists: revocationLists, now: now,
            offloadEvaluation: offloadEvaluation, certificateCache: certificateCache, verdictCache: verdictCache)
        let what = paths.joined(separator: ", ")
        logger.notice("client trust in force", metadata: ClientTrust.metadata(trust.current, source: what))
        for warning in startupWarnings { logger.warning("\(warning)") }
        let clients = self.policy
        trust.watch(what, from: first, every: interval, logger: logger) { () throws(PincheckError) in
            try WatchedFiles(paths)
        } make: { files, generation throws(PincheckError) in
            ClientTrust(
                evaluator: Evaluator(policy: try judged(files, clients), certificateCache: certificateCache, verdictCache: verdictCache),
                router: nil, trustDomains: [:], generation: generation)
        }
    }

    /// Judges a presented chain (leaf first, DER): the verdict, with `identity.mismatch` added when
    /// the leaf carries none of ``requiredIdentities``.
    public func verdict(derChain: [[UInt8]]) async -> Result<Verdict, PincheckError> {
        do throws(PincheckError) {
            let chain = try certificateCache.chain(derEncoded: derChain)
            let time = now()
            // With trust domains, the domain the leaf names chooses the evaluator; a leaf that
            // names none is judged against every domain's CAs for the record, and refused.
            let trust = trust.current  // this handshake's, whatever a reload does meanwhile
            // With trust domains, the domain the leaf names chooses the evaluator (the plan's
            // TrustDomainCheck refuses a leaf no domain can judge); identities are its ClientIdentityCheck.
            let judge = chain.first.flatMap { trust.router?.evaluator(for: $0) } ?? trust.evaluator
            let verdict =
                policy.validation.revocation.distributionPointCRLs == nil
                ? try judge.evaluate(chain, host: nil, at: time)
                : try await judge.evaluate(chain, host: nil, at: time, fetchingRevocationListsWith: revocationLists)
            return .success(verdict)
        } catch {
            return .failure(error)
        }
    }

    /// The decision for a presented chain, as the server's callback reaches it.
    func decide(derChain: [[UInt8]]) async -> ChallengeDecision {
        switch await verdict(derChain: derChain) {
        case .success(let verdict) where Disposition(serverTrust: verdict).allowsConnection:
            return ChallengeDecision(.performDefaultHandling, rule: .trusted, verdict: verdict)
        case .success(let verdict):
            return ChallengeDecision(
                .cancelAuthenticationChallenge, rule: .untrusted,
                error: ServerTrustError(.untrusted, "the client certificate is not trusted", verdict: verdict))
        case .failure(let error):
            return ChallengeDecision(
                .cancelAuthenticationChallenge, rule: .evaluationFailed,
                error: ServerTrustError(.evaluationFailed, "the client's certificates could not be read: \(error)", underlying: error))
        }
    }

    /// NIOSSL's server-side callback: Pincheck's decision, and the verified path as the validated chain.
    /// - Parameter onDecision: Receives every decision, accepted or not.
    public func callback(onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in })
        -> PincheckNIOVerifier.SendableVerificationCallback
    {
        let verifier = self
        return { presented, promise in
            guard let der = PincheckNIOVerifier.encoded(presented, whose: "client's", onDecision: onDecision, promise: promise) else { return }
            let evaluate: @Sendable () async -> Void = {
                let decision = await verifier.decide(derChain: der)
                onDecision(decision)
                // Trusted always comes with a verified path: that is what NIOSSL is told was validated.
                guard decision.allowsConnection, decision.verdict?.verifiedPath != nil,
                    let validated = PincheckNIOVerifier.validatedChain(decision, presented: presented)
                else {
                    promise.succeed(.failed)
                    return
                }
                if let leaf = der.first { verifier.accepted.record(decision, leaf: leaf) }
                promise.succeed(.certificateVerified(VerificationMetadata(validated)))
            }
            if verifier.offloadEvaluation {
                Task.detached { await evaluate() }
            } else {
                // Still asynchronous (the evaluation may fetch CRLs), but started at once.
                Task { await evaluate() }
            }
        }
    }

    /// A server configuration that asks every client for a certificate and fails the handshake
    /// without one (NIOSSL's `.noHostnameVerification`: the custom callback replaces its checks).
    public static func makeServerConfiguration(
        certificateChain: [NIOSSLCertificateSource],
        privateKey: NIOSSLPrivateKeySource
    ) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: certificateChain, privateKey: privateKey)
        configuration.certificateVerification = .noHostnameVerification
        return configuration
    }

    /// Adds the server's TLS handler with Pincheck's callback, and after it the handler that keeps
    /// the decision for ``decision(on:)``. Call it in the child channel initializer (on the loop).
    /// - Parameters:
    ///   - pipeline: The child channel's synchronous pipeline operations.
    ///   - context: A context from ``makeServerConfiguration(certificateChain:privateKey:)``.
    ///   - onDecision: Receives each decision, with the verdict and its reasons.
    public func addServerHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, context: NIOSSLContext,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    ) throws {
        let keeper = ClientDecisionHandler()
        try pipeline.addHandler(
            NIOSSLServerHandler(
                context: context,
                customVerificationCallbackWithMetadata: callback { decision in
                    keeper.record(decision)
                    onDecision(decision)
                }))
        try pipeline.addHandler(keeper)
    }

    /// The decision that let in the client whose validated chain this is: for code that sees
    /// NIOSSL's validated chain but not the channel.
    /// The verifier keeps the decisions of the last ``acceptedDecisionLimit`` clients it let in, by
    /// their leaf; nil for a chain it did not accept (or no longer remembers).
    public func decision(forValidatedChain chain: ValidatedCertificateChain) -> ChallengeDecision? {
        guard let leaf = try? chain.first?.toDERBytes() else { return nil }
        return accepted.decision(leaf: leaf)
    }

    /// The decision that let in the client presenting this leaf (`channel.nioSSL_peerCertificate()`):
    /// for frameworks that use NIOSSL's callback without a validated chain (Hummingbird).
    public func decision(forLeaf leaf: NIOSSLCertificate) -> ChallengeDecision? {
        guard let der = try? leaf.toDERBytes() else { return nil }
        return accepted.decision(leaf: der)
    }

    /// The decision that let in the client of a connection (its TLS handler's peer certificate):
    /// for frameworks that give a request handler the channel but use NIOSSL's callback without a
    /// validated chain (Hummingbird's `TLSChannelConfiguration`). Nil for a connection this
    /// verifier did not let in.
    public func decision(forConnection channel: any Channel) async -> ChallengeDecision? {
        guard let leaf = try? await channel.nioSSL_peerCertificate().get() else { return nil }
        return decision(forLeaf: leaf)
    }

    /// NIOSSL's server-side callback without metadata, for servers that take only that form
    /// (Hummingbird's `TLSChannelConfiguration`): the same decision as ``callback(onDecision:)``,
    /// but NIOSSL keeps no validated chain (`nioSSL_peerValidatedCertificateChain()` is nil);
    /// ``decision(forConnection:)`` gives the verified path instead.
    /// - Parameter onDecision: Receives every decision, accepted or not.
    public func callbackWithoutMetadata(onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in })
        -> @Sendable ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResult>) -> Void
    {
        let withMetadata = callback(onDecision: onDecision)
        return { presented, promise in
            let detailed = promise.futureResult.eventLoop.makePromise(of: NIOSSLVerificationResultWithMetadata.self)
            detailed.futureResult.whenComplete { result in
                switch result {
                case .success(.certificateVerified): promise.succeed(.certificateVerified)
                case .success(.failed): promise.succeed(.failed)
                case .failure(let error): promise.fail(error)
                }
            }
            withMetadata(presented, detailed)
        }
    }

    /// The decision that let in the client whose leaf certificate this is (DER).
    public func decision(forLeaf der: [UInt8]) -> ChallengeDecision? {
        accepted.decision(leaf: der)
    }

    /// How many accepted clients' decisions are kept for ``decision(forValidatedChain:)``.
    public static let acceptedDecisionLimit = 1024

    /// The decision on the client's certificate of a connection set up with
    /// ``addServerHandlers(to:context:onDecision:)``: its verdict has the verified path. Nil before
    /// the handshake has been judged, or on another kind of channel.
    public static func decision(on channel: any Channel) -> EventLoopFuture<ChallengeDecision?> {
        channel.eventLoop.submit {
            try? channel.pipeline.syncOperations.handler(type: ClientDecisionHandler.self).decision
        }
    }
}

/// The decisions that let clients in, by leaf (DER), the least recently used forgotten first.
final class AcceptedClients: Sendable {
    private let decisions = Locked<(byLeaf: [[UInt8]: ChallengeDecision], order: [[UInt8]])>(([:], []))

    func record(_ decision: ChallengeDecision, leaf: [UInt8]) {
        decisions.withLock { state in
            if state.byLeaf.updateValue(decision, forKey: leaf) == nil { state.order.append(leaf) }
            if state.order.count > PincheckClientCertificateVerifier.acceptedDecisionLimit {
                state.byLeaf[state.order.removeFirst()] = nil
            }
        }
    }

    func decision(leaf: [UInt8]) -> ChallengeDecision? {
        decisions.withLock { $0.byLeaf[leaf] }
    }
}

/// Keeps a connection's decision on its client certificate, for the request handlers.
final class ClientDecisionHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny
    private let box = Locked<ChallengeDecision?>(nil)
    func record(_ decision: ChallengeDecision) { box.withLock { $0 = decision } }
    var decision: ChallengeDecision? { box.withLock { $0 } }
}
