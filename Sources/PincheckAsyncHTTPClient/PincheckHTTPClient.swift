#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO

/// A `TrustPolicy` made into what AsyncHTTPClient can enforce: its TLS trust roots, and a check
/// of the peer's leaf in both of its connection initializers.
///
/// AsyncHTTPClient builds its own `NIOSSLClientHandler` and takes no verification callback. What
/// it offers is `http1_1ConnectionDebugInitializer` and `http2ConnectionDebugInitializer`: they run
/// after the TLS handshake and before the pool hands the connection to a request, and a failed
/// future fails the connection and the requests waiting for it. There Pincheck sees the peer's
/// **leaf only** (AsyncHTTPClient 1.37 sets no validated chain, and the initializer is not told the
/// host), so on this road:
///
/// - the chain, its dates and the host name are checked by NIOSSL (BoringSSL) against the
///   policy's anchors, which must be self-signed roots;
/// - a public-key pin is checked on the leaf in the initializer; a pin whose key is one of the
///   anchors' is enforced by trusting only the pinned roots;
/// - what cannot be enforced here is refused when the configuration is made
///   (``PincheckHTTPClient/Limit``): pins of intermediates and leaves together with root pins,
///   pinned intermediates or leaves in certificate pinning, a required stapled OCSP response,
///   CRLs given to the policy, disabled chain validation, client-authentication purposes,
///   required key usages and Certificate Transparency. The road never weakens a policy silently.
///
/// CRLs from distribution points are checked in the initializers: the leaf's issuer comes from
/// the policy (an anchor, an additional intermediate) or from the leaf's caIssuers URL, the
/// engine verifies the path it makes to the anchors (the host name is NIOSSL's to check), and
/// the CRLs of that path are fetched, verified and kept as on the other asynchronous roads
/// (``revocationLists``). A revoked certificate refuses the connection, soft or hard; an
/// unavailable status refuses it only when the policy fails hard, an issuer that cannot be
/// found or verified included.
///
/// Pincheck's strict Web PKI profile runs over a verified path, which this road never sees: the
/// chain is held to BoringSSL's checks instead, with BoringSSL's longest chain (100) rather than
/// the policy's `maximumChainDepth`, and without the policy's `additionalIntermediates` (the
/// road table in docs/integrations.md says so).
public struct PincheckHTTPClient: Sendable {
    /// A part of a policy that AsyncHTTPClient's hooks cannot enforce.
    public enum Limit: String, Sendable, Hashable, CaseIterable {
        /// Pins that may match at different depths (a leaf's and a root's key): the initializer
        /// sees the leaf only, and the root is enforced by the trust roots, so "either" cannot be checked.
        case pinsAtSeveralDepths = "pins-at-several-depths"
        /// Pins that are only allowed above the leaf and match none of the anchors: intermediates,
        /// which AsyncHTTPClient never shows.
        case intermediatePins = "intermediate-pins"
        /// Certificate pinning of an intermediate or a leaf (only self-signed roots can be anchored).
        case pinnedCertificateNotRoot = "pinned-certificate-not-a-root"
        /// Anchors that are not self-signed (BoringSSL ends a path at a root only).
        case anchorNotRoot = "anchor-not-a-root"
        /// `chainValidation: .disabled`: NIOSSL's verification cannot be turned off for the chain alone.
        case chainValidationDisabled = "chain-validation-disabled"
        /// A required stapled OCSP response, or CRLs given to the policy: no staple reaches this
        /// road, and CRLs given are not checked on it (distribution-point CRLs are).
        case revocation = "revocation"
        /// Client authentication or required key usages: NIOSSL checks a server's leaf its own way.
        case leafRequirements = "leaf-requirements"
        /// A Certificate Transparency requirement: an embedded SCT is signed over the issuer's key,
        /// and the initializer sees the leaf alone.
        case certificateTransparency = "certificate-transparency"
    }

    /// The policy as given.
    public let policy: TrustPolicy
    /// The pins of the policy's own pinning checked on the leaf in the connection initializers
    /// (nil: none; pin sets given with `init(validation:pinSets:now:onReportOnlyFailure:)` are in ``pinSets``).
    public let leafPins: Set<PublicKeyPin>?
    /// Pin sets checked on the leaf, each with its enforcement and expiry, as a host's are on the
    /// other roads: an enforced set that does not match refuses the connection, a report-only one
    /// is handed to ``onReportOnlyFailure`` and the connection goes on, an expired one is skipped.
    public private(set) var pinSets: [PinSet] = []
    /// Receives the verdict of a connection whose leaf a report-only pin set did not match (the
    /// initializer is not told the host, so no RFC 7469 report can be addressed from here).
    public private(set) var onReportOnlyFailure: (@Sendable (Verdict) -> Void)? = nil
    /// The roots NIOSSL trusts: the policy's anchors, or only the pinned ones among them.
    public let trustRoots: [Certificate]
    /// Fetches the distribution-point CRLs the policy asks for, and the leaf's issuer from its
    /// caIssuers URL when the policy does not hold it; nil: the process's own fetcher (default
    /// limits, memory only). Share one per process.
    public var revocationLists: RevocationListFetcher? = nil
    /// Judges the path made above the leaf when the policy checks distribution-point CRLs: the
    /// policy's validation without the name check (NIOSSL's) and without pins (checked on the leaf).
    private let revocationEvaluator: Evaluator?
    /// Judges the leaf's pins in the connection initializers.
    private var leafPlan: LeafPinPlan?

    private let now: @Sendable () -> Date

    /// Checks that the policy can be enforced on AsyncHTTPClient's road and prepares it.
    /// - Parameters:
    ///   - policy: The anchors, pinning and checks; one policy for every host the client calls.
    ///   - now: The clock the leaf's verdicts are dated with.
    /// - Throws: `PincheckError` (`policy.invalid`) naming the ``Limit`` the policy runs into.
    public init(policy: TrustPolicy, now: @escaping @Sendable () -> Date = { Date() }) throws(PincheckError) {
        self.policy = policy
        self.now = now
        try Self.checkEnforceable(policy.validation)
        if policy.validation.revocation.distributionPointCRLs != nil {
            var validation = policy.validation
            validation.nameValidation = .disabled(because: "NIOSSL checks the host name; this evaluation judges the path above the leaf for its CRLs")
            revocationEvaluator = Evaluator(policy: TrustPolicy(pinning: .none, validation: validation))
        } else {
            revocationEvaluator = nil
        }
        (leafPins, trustRoots) = try Self.enforcement(of: policy.pinning, validation: policy.validation)
        if trustRoots.isEmpty, case .certificates = policy.validation.anchors.origin {
            throw PincheckError(.invalidPolicy, "AsyncHTTPClient needs at least one trust root; the policy has no anchor")
        }
        leafPlan = Self.leafPlan(leafPins: leafPins, pinSets: [])
    }

    private static func refuse(_ limit: Limit, _ detail: String) -> PincheckError {
        PincheckError(.invalidPolicy, "AsyncHTTPClient cannot enforce this policy (\(limit.rawValue)): \(detail)")
    }

    /// Refuses the validation settings this road cannot enforce, naming the ``Limit``.
    private static func checkEnforceable(_ validation: ValidationPolicy) throws(PincheckError) {
        if case .disabled = validation.chainValidation {
            throw refuse(.chainValidationDisabled, "NIOSSL verifies every chain it is given; use the NIO verifier for test servers")
        }
        if validation.purpose != .serverAuthentication || !validation.requiredKeyUsages.isEmpty {
            throw refuse(.leafRequirements, "only a server's leaf with NIOSSL's own purpose checks can be required here")
        }
        if validation.revocation.requireStapledOCSP {
            throw refuse(
                .revocation,
                "no stapled OCSP response reaches the connection initializers, so a policy that requires one would refuse every server; check distribution-point CRLs instead, or use the NIO verifier"
            )
        }
        if !validation.revocationLists.isEmpty {
            throw refuse(
                .revocation,
                "CRLs given to the policy are not checked on this road; let the policy fetch them from the distribution points (RevocationPolicy(distributionPointCRLs:)), or use the NIO verifier"
            )
        }
        if let transparency = validation.certificateTransparency {
            throw refuse(
                .certificateTransparency,
                "the \(transparency.policy.rawValue) CT policy needs the leaf's issuer, whose key its embedded SCTs are signed over, and the connection initializers see the leaf alone; use the NIO verifier"
            )
        }
        if let notRoot = validation.anchors.certificates.first(where: { !$0.isSelfSigned }) {
            throw refuse(.anchorNotRoot, "\(notRoot.subject) is not a self-signed root, and BoringSSL ends a path only at a root")
        }
    }

    /// How the pinning is enforced here: pins checked on the leaf, and the trust roots NIOSSL is given.
    private static func enforcement(
        of pinning: TrustPolicy.Pinning,
        validation: ValidationPolicy
    ) throws(PincheckError) -> (Set<PublicKeyPin>?, [Certificate]) {
        let anchors = validation.anchors.certificates
        switch pinning {
        case .none:
            return (nil, anchors)
        case .certificates(let pinned):
            if let other = pinned.certificates.first(where: { !$0.isSelfSigned }) {
                throw refuse(
                    .pinnedCertificateNotRoot,
                    "\(other.subject) is pinned, and only a pinned self-signed root can be enforced (as the only trust root)")
            }
            return (nil, pinned.certificates)
        case .publicKeys(let pinned):
            let rootPins = Set(anchors.map(\.publicKeyPin)).intersection(pinned.pins)
            let otherPins = pinned.pins.subtracting(rootPins)
            let caPins = knownCertificateAuthorityPins(pinned, validation: validation).intersection(otherPins)
            if !caPins.isEmpty {
                throw refuse(
                    .intermediatePins,
                    "\(caPins.count) of the pins are the keys of CA certificates that are not anchors (intermediates), which AsyncHTTPClient never shows Pincheck; pin the server's leaf, or the root among the anchors"
                )
            }
            switch pinned.scope {
            case .leaf:
                return (pinned.pins, anchors)
            case .certificateAuthorities where !otherPins.isEmpty:
                throw refuse(
                    .intermediatePins,
                    "\(otherPins.count) of the pins allowed above the leaf match no anchor: intermediates, which AsyncHTTPClient never shows Pincheck"
                )
            case .certificateAuthorities, .anyCertificate:
                if !rootPins.isEmpty && !otherPins.isEmpty {
                    throw refuse(
                        .pinsAtSeveralDepths,
                        "\(rootPins.count) pin(s) match an anchor and \(otherPins.count) do not; the leaf is checked in the initializer and the root by the trust roots, and a chain matching either cannot be recognised"
                    )
                }
                return rootPins.isEmpty ? (otherPins, anchors) : (nil, anchors.filter { rootPins.contains($0.publicKeyPin) })
            }
        }
    }

    /// A client whose leaf is checked against pin sets, with their enforcement and expiry.
    /// - Parameters:
    ///   - validation: Anchors and checks, as for ``init(policy:now:)``.
    ///   - pinSets: Public-key pin sets of the server's leaf. A set of certificates, of pins that
    ///     may match above the leaf, or of an anchor's key, is refused (``Limit``): those would be
    ///     enforced through the trust roots, which cannot be report-only or expire.
    ///   - now: The clock pin sets expire by and verdicts are dated with.
    ///   - onReportOnlyFailure: Receives the verdict when a report-only set does not match.
    /// - Throws: `PincheckError` (`policy.invalid`), naming the ``Limit`` a set runs into.
    public init(
        validation: ValidationPolicy, pinSets: [PinSet], now: @escaping @Sendable () -> Date = { Date() },
        onReportOnlyFailure: (@Sendable (Verdict) -> Void)? = nil
    ) throws(PincheckError) {
        try self.init(policy: TrustPolicy(pinning: .none, validation: validation), now: now)
        let anchorPins = Set(validation.anchors.certificates.map(\.publicKeyPin))
        for set in pinSets {
            let limit: Limit?
            switch set.pins {
            case .certificates: limit = .pinnedCertificateNotRoot
            case .publicKeys(let pinned) where !pinned.pins.isDisjoint(with: anchorPins): limit = .pinsAtSeveralDepths
            case .publicKeys(let pinned) where pinned.scope == .certificateAuthorities: limit = .intermediatePins
            case .publicKeys(let pinned) where !Self.knownCertificateAuthorityPins(pinned, validation: validation).isDisjoint(with: pinned.pins):
                limit = .intermediatePins
            case .publicKeys: limit = nil
            }
            if let limit {
                throw PincheckError(
                    .invalidPolicy,
                    "AsyncHTTPClient cannot enforce this pin set (\(limit.rawValue)): only public-key pins of the server's leaf are checked per connection on this road"
                )
            }
        }
        self.pinSets = pinSets
        self.onReportOnlyFailure = onReportOnlyFailure
        leafPlan = Self.leafPlan(leafPins: leafPins, pinSets: pinSets)
    }

    /// A client with pin sets, its validation given as a `TrustPolicy`.
    /// - Throws: `PincheckError` (`policy.invalid`) when `validation` pins too (its pins would not
    ///   be checked as a pin set), or naming the ``Limit`` a set runs into.
    @available(*, deprecated, message: "give the validation as a ValidationPolicy: validation: policy.validation")
    @_disfavoredOverload
    public init(
        validation: TrustPolicy, pinSets: [PinSet], now: @escaping @Sendable () -> Date = { Date() },
        onReportOnlyFailure: (@Sendable (Verdict) -> Void)? = nil
    ) throws(PincheckError) {
        guard case .none = validation.pinning else {
            throw PincheckError(
                .invalidPolicy, "the validation policy pins too; give every pin as a pin set (its own pins would not be checked as one)")
        }
        try self.init(validation: validation.validation, pinSets: pinSets, now: now, onReportOnlyFailure: onReportOnlyFailure)
    }

    /// The keys known to be a CA's: pins taken from CA certificates, and the policy's additional
    /// intermediates. A pin given as a bare hash cannot be told apart from a leaf's: it is checked
    /// on the leaf, and a mismatch says that this road sees the leaf alone.
    private static func knownCertificateAuthorityPins(_ pinned: PinnedPublicKeys, validation: ValidationPolicy) -> Set<PublicKeyPin> {
        pinned.certificateAuthorityPins.union(validation.additionalIntermediates.filter(\.isCertificateAuthority).map(\.publicKeyPin))
    }

    /// NIOSSL's client configuration: the trust roots, NIOSSL's host check as the policy asks.
    public func tlsConfiguration() throws -> TLSConfiguration {
        try tlsConfiguration(base: nil)
    }

    /// `base` (a fresh client configuration when nil) with what the policy decides put in: the
    /// trust roots (and no additional ones) and the certificate verification. Every other field
    /// is kept as given: the client's identity (certificate chain and key), TLS versions, cipher
    /// suites, curves, signature algorithms, ALPN protocols, renegotiation, key logging, timeouts.
    /// - Throws: `PincheckError` (`policy.invalid`) when `base` offers a pre-shared key: a PSK
    ///   handshake presents no certificate, so neither the anchors nor the pins would be checked.
    ///   NIOSSL's error when an anchor cannot be converted.
    public func tlsConfiguration(base: TLSConfiguration?) throws -> TLSConfiguration {
        var configuration = base ?? TLSConfiguration.makeClientConfiguration()
        if configuration.pskClientProvider != nil {
            throw PincheckError(
                .invalidPolicy,
                "the TLS configuration offers a pre-shared key, and a PSK handshake presents no certificate to verify or pin; remove pskClientProvider to pin this client"
            )
        }
        switch policy.validation.anchors.origin {
        case .system where trustRoots.count == policy.validation.anchors.certificates.count:
            configuration.trustRoots = .default
        default:
            configuration.trustRoots = .certificates(try trustRoots.map { try NIOSSLCertificate(bytes: $0.derBytes, format: .der) })
        }
        configuration.additionalTrustRoots = []
        if case .disabled = policy.validation.nameValidation {
            configuration.certificateVerification = .noHostnameVerification
        } else {
            configuration.certificateVerification = .fullVerification
        }
        return configuration
    }

    /// What this road says of the leaf in its verdicts.
    private static let road = "AsyncHTTPClient shows Pincheck the leaf only"

    /// The leaf a connection presented, from the shared certificate cache; a connection whose leaf
    /// is missing or does not parse is refused.
    private static func presentedLeaf(_ der: [UInt8]?) -> Result<Certificate, PincheckTrustError> {
        guard let der, let leaf = try? CertificateCache.shared.chain(derEncoded: [der]).first else {
            let error = ServerTrustError(.evaluationFailed, "AsyncHTTPClient's connection showed no readable peer certificate")
            return .failure(
                PincheckTrustError(
                    decision: ChallengeDecision(.cancelAuthenticationChallenge, rule: .evaluationFailed, error: error),
                    underlying: nil))
        }
        return .success(leaf)
    }

    /// A connection refused with `verdict`, the error saying `message`.
    private static func refused(_ verdict: Verdict, _ message: String) -> PincheckTrustError {
        let error = ServerTrustError(.untrusted, message, verdict: verdict)
        return PincheckTrustError(
            decision: ChallengeDecision(.cancelAuthenticationChallenge, rule: .untrusted, error: error, verdict: verdict),
            underlying: nil)
    }

    /// The revocation status of the leaf a connection presented, when the policy checks
    /// distribution-point CRLs. Nil when it passes: good, or unavailable under soft failure.
    func revocationRefusal(leafDER: [UInt8]) async -> PincheckTrustError? {
        guard let revocationEvaluator, let settings = policy.validation.revocation.distributionPointCRLs else { return nil }
        let time = now()
        let leaf: Certificate
        switch Self.presentedLeaf(leafDER) {
        case .success(let parsed): leaf = parsed
        case .failure(let refusal): return refusal
        }
        let fetcher = revocationLists ?? .processWide
        func unavailable(_ why: String) -> PincheckTrustError? {
            guard settings.failure == .hard else { return nil }
            return Self.refused(
                Verdict.leafOnlyRevocationUnavailable(leaf: leaf, why: why, at: time, road: Self.road),
                "the server's revocation status is unavailable and the policy fails hard: \(why)")
        }
        let validation = policy.validation
        let issuers: [IssuerLookup.Fetched]
        // Anchors from the system's store: a public-facing server, whose issuers are public, so
        // no caIssuers URL of its (not yet verified) leaf is fetched from a private network.
        let publicFacing = if case .system = validation.anchors.origin { true } else { false }
        switch await fetcher.issuers.certificates(
            above: leaf, anchoredBy: validation.anchors,
            intermediates: validation.additionalIntermediates, publicFacing: publicFacing)
        {
        case .success(let found): issuers = found
        case .failure(let problem): return unavailable("the leaf's issuer, which its CRL is verified with, was not found: \(problem.text)")
        }
        let verdict: Verdict
        do {
            verdict = try await revocationEvaluator.evaluate(
                [leaf] + issuers.map(\.certificate), host: nil, at: time,
                fetchingRevocationListsWith: fetcher)
        } catch {
            return unavailable("the path above the leaf could not be evaluated: \(error.message)")
        }
        if verdict.failures.contains(where: { $0.requirement == .revocation }) {
            return Self.refused(verdict, "the server's certificate is refused: \(verdict.failures.map(\.message).joined(separator: "; "))")
        }
        guard verdict.isTrusted else {
            // BoringSSL verified the chain the server sent; the path made here from the policy and
            // caIssuers did not verify, so the CRLs had no issuer to be checked against.
            return unavailable("the path made above the leaf did not verify: \(verdict.failures.first?.message ?? "refused")")
        }
        fetcher.issuers.keep(issuers)
        return nil
    }

    /// Judges the leaf a connection presented, with the pin sets' plan (the checks and the
    /// decider of every road). Nil when it passes.
    func refusal(leafDER: [UInt8]?) -> PincheckTrustError? {
        guard let leafPlan else { return nil }
        let leaf: Certificate
        switch Self.presentedLeaf(leafDER) {
        case .success(let parsed): leaf = parsed
        case .failure(let refusal): return refusal
        }
        let verdict = leafPlan.evaluate(leaf, at: now())
        guard Disposition(serverTrust: verdict).allowsConnection else {
            return Self.refused(verdict, "the server's leaf matches none of the pins (\(Self.leafRoad))")
        }
        if let onReportOnlyFailure, !verdict.reportOnlyFailures.isEmpty { onReportOnlyFailure(verdict) }
        return nil
    }

    /// What the leaf's plan says this road verifies itself.
    private static let leafRoad = "\(road): NIOSSL verified the chain and the host name; a pin of an intermediate never matches on this road"

    /// The plan of the leaf's pins: the policy's own (enforced) and the pin sets; nil when none.
    private static func leafPlan(leafPins: Set<PublicKeyPin>?, pinSets: [PinSet]) -> LeafPinPlan? {
        var sets = pinSets
        if let leafPins, let pinned = try? PinnedPublicKeys(pins: leafPins) { sets.insert(PinSet(.publicKeys(pinned)), at: 0) }
        return sets.isEmpty ? nil : LeafPinPlan(pinSets: sets, road: leafRoad)
    }

    /// The connection initializer for both HTTP versions: a refused connection is closed (AsyncHTTPClient
    /// 1.37 would otherwise keep its file descriptor open) and fails with a ``PincheckTrustError``.
    /// A revocation check waits for its fetches off the event loop (they run on threads of the fetcher's own).
    @Sendable func initialize(_ channel: any Channel) -> EventLoopFuture<Void> {
        guard leafPins != nil || !pinSets.isEmpty || revocationEvaluator != nil else { return channel.eventLoop.makeSucceededVoidFuture() }
        @Sendable func close(refusing refusal: any Error) -> EventLoopFuture<Void> {
            channel.close().flatMapError { _ in channel.eventLoop.makeSucceededVoidFuture() }.flatMapThrowing { throw refusal }
        }
        return channel.nioSSL_peerCertificate().flatMap { certificate in
            let der = try? certificate?.toDERBytes()
            if let refusal = self.refusal(leafDER: der) { return close(refusing: refusal) }
            guard self.revocationEvaluator != nil else { return channel.eventLoop.makeSucceededVoidFuture() }
            let judged = channel.eventLoop.makePromise(of: PincheckTrustError?.self)
            judged.completeWithTask { await self.revocationRefusal(leafDER: der ?? []) }
            return judged.futureResult.flatMap { refusal in
                refusal.map { close(refusing: $0) } ?? channel.eventLoop.makeSucceededVoidFuture()
            }
        }
    }
}

extension HTTPClient.Configuration {
    /// Pins this configuration's connections with Pincheck: the TLS trust roots and host check
    /// from the policy, and the leaf checked in both connection initializers (any initializers set
    /// before run first). The rest of the TLS configuration is kept (a client certificate, TLS
    /// versions, cipher suites, ALPN…: ``PincheckHTTPClient/tlsConfiguration(base:)``).
    ///
    /// A refused connection fails the requests waiting for it with a `PincheckTrustError` at
    /// once: connection establishment is no longer retried (`connectionPool.retryConnectionEstablishment`
    /// becomes false), since a server that served an unpinned key would serve it again until the
    /// connect timeout. The same then holds for other connection failures (refused, unreachable),
    /// which reach the caller at once too.
    /// - Throws: `PincheckError` when the TLS configuration offers a pre-shared key; NIOSSL's
    ///   error when an anchor cannot be converted.
    public mutating func pin(with pinning: PincheckHTTPClient) throws {
        tlsConfiguration = try pinning.tlsConfiguration(base: tlsConfiguration)
        connectionPool.retryConnectionEstablishment = false
        let earlierHTTP1 = http1_1ConnectionDebugInitializer
        let earlierHTTP2 = http2ConnectionDebugInitializer
        http1_1ConnectionDebugInitializer = { channel in
            (earlierHTTP1?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()).flatMap { pinning.initialize(channel) }
        }
        http2ConnectionDebugInitializer = { channel in
            (earlierHTTP2?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()).flatMap { pinning.initialize(channel) }
        }
    }

    /// A copy of `base` pinned by `policy` (see ``pin(with:)``; distribution-point CRLs through the
    /// process's fetcher, or ``pinned(by:revocationLists:now:base:)``'s): every field of `base` is kept but
    /// the TLS trust roots and certificate verification, the connection initializers (which still
    /// run, before Pincheck's check) and the retry of failed connection establishments.
    /// - Throws: `PincheckError` (`policy.invalid`) naming what AsyncHTTPClient cannot enforce.
    public static func pinned(by policy: TrustPolicy, base: HTTPClient.Configuration = HTTPClient.Configuration()) throws -> HTTPClient.Configuration
    {
        var configuration = base
        try configuration.pin(with: try PincheckHTTPClient(policy: policy))
        return configuration
    }

    /// A copy of `base` pinned by `policy`, whose distribution-point CRLs come through
    /// `revocationLists` rather than the process's fetcher (which reaches no loopback address):
    /// the knob for a lab or private CRL server, a proxy or a cache directory.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - revocationLists: The fetcher for distribution-point CRLs.
    ///   - now: The clock; `Date()` by default (tests inject a fixed time).
    ///   - base: The configuration to pin; every field but those ``pin(with:)`` sets is kept.
    /// - Throws: `PincheckError` (`policy.invalid`) naming what AsyncHTTPClient cannot enforce.
    public static func pinned(
        by policy: TrustPolicy, revocationLists: RevocationListFetcher, now: @escaping @Sendable () -> Date = { Date() },
        base: HTTPClient.Configuration = HTTPClient.Configuration()
    ) throws -> HTTPClient.Configuration {
        var pinning = try PincheckHTTPClient(policy: policy, now: now)
        pinning.revocationLists = revocationLists
        var configuration = base
        try configuration.pin(with: pinning)
        return configuration
    }
}
#endif  // AsyncHTTPClient trait
