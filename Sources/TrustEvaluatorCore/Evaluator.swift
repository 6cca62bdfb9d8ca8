import FoundationEssentials

/// Something the evaluator did, for `--explain`-style tracing. The library itself never prints.
public enum DiagnosticEvent: Sendable {
    /// An evaluation started for this host (nil: no name checked) at this time.
    case evaluationStarted(host: String?, time: Date, servedCount: Int)
    /// OpenSSL verified a path against these anchors.
    case pathVerified(VerifiedPath)
    /// OpenSSL rejected the chain with these reasons.
    case pathRejected([Reason])
    /// A pin matched a certificate of the verified path.
    case pinMatched(PinMatch)
    /// The final outcome.
    case decided(trusted: Bool)
}

/// Evaluates served chains against one ``TrustPolicy``. Cheap to copy; safe to share across tasks.
///
/// Give it a ``CertificateCache`` and a ``VerdictCache`` when it judges the same servers over and
/// over (a client's connection pool, a proxy): certificates are then parsed once, and a chain it
/// has judged before is not verified again until a certificate's validity boundary is crossed.
///
/// An `Evaluator` is the one-policy case of ``TrustManager``: both take the same road (the path
/// verified once, each pin set a check over it) with the same caches.
public struct Evaluator: Sendable {
    /// The policy every evaluation applies.
    public let policy: TrustPolicy
    /// Where ``evaluate(derEncoded:host:at:)`` finds certificates parsed before, if anywhere.
    public let certificateCache: CertificateCache?
    /// Where verdicts are kept for reuse, if anywhere.
    public let verdictCache: VerdictCache?
    private let diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    /// The policy made ready: path checks assembled once, an identity for cached verdicts.
    private let plan: EvaluationPlan

    /// - Parameters:
    ///   - policy: The policy to apply.
    ///   - certificateCache: Parsed certificates to reuse in ``evaluate(derEncoded:host:at:)``.
    ///   - verdictCache: Verdicts to reuse while they still hold (see ``VerdictCache``).
    ///   - diagnostics: Called with each step of every evaluation, on the evaluating thread.
    public init(
        policy: TrustPolicy, certificateCache: CertificateCache? = nil, verdictCache: VerdictCache? = nil,
        diagnostics: (@Sendable (DiagnosticEvent) -> Void)? = nil
    ) {
        self.policy = policy
        self.certificateCache = certificateCache
        self.verdictCache = verdictCache
        self.diagnostics = diagnostics
        self.plan = EvaluationPlan(policy: policy)
    }

    /// Judges a served chain given as DER, as TLS stacks hand it over: each certificate comes from
    /// the ``certificateCache`` when it has been parsed before, and is parsed otherwise.
    /// - Parameters:
    ///   - chain: The peer's certificates, leaf first, one DER certificate each.
    ///   - host: As in ``evaluate(_:host:at:)``.
    ///   - time: As in ``evaluate(_:host:at:)``.
    /// - Throws: ``PincheckError`` when the chain is empty, a certificate does not parse, or the
    ///   host cannot be a certificate name.
    public func evaluate(derEncoded chain: [[UInt8]], host: String?, at time: Date) throws(PincheckError) -> Verdict {
        try evaluate(Certificate.chain(derEncoded: chain, cache: certificateCache), host: host, at: time)
    }

    /// Judges a served chain for a host at a given time.
    ///
    /// The steps are AFSecurityPolicy's `evaluateServerTrust:forDomain:` (<doc:PortingFromAFNetworking>), with
    /// two deliberate differences: pins are matched only against a path of certificates that
    /// really certify the leaf, and with chain validation disabled a requested host name is still
    /// checked in public-key mode.
    /// - Parameters:
    ///   - servedChain: What the peer sent, leaf first; it may contain junk.
    ///   - host: The DNS name or IP literal the leaf must carry; `nil` checks no name (a warning says so).
    ///   - time: The verification time. Pass `Date()` for now; tests pass a fixed time.
    /// - Returns: A verdict; untrusted chains are verdicts, not errors.
    /// - Throws: ``PincheckError`` only when the chain is empty or the host cannot be a certificate name.
    public func evaluate(_ servedChain: [Certificate], host: String?, at time: Date) throws(PincheckError) -> Verdict {
        try evaluate(servedChain, host: host, at: time, stapledOCSPResponse: nil)
    }

    /// Judges a served chain together with the OCSP response the server stapled for its leaf,
    /// as a TLS client that received it would: the response is checked against the verified path
    /// (its issuer may be the trust anchor, which the server never sends). A response that
    /// verifies and says *revoked* is `revocation.revoked` and the chain is not trusted; one that
    /// is unusable, stale or *unknown* is a warning, unless the leaf is must-staple.
    /// - Parameters:
    ///   - stapledOCSPResponse: The DER OCSP response, or nil when none was stapled.
    ///   - servedChain: As in ``evaluate(_:host:at:)``.
    ///   - host: As in ``evaluate(_:host:at:)``.
    ///   - time: As in ``evaluate(_:host:at:)``.
    /// - Throws: As ``evaluate(_:host:at:)``.
    public func evaluate(
        _ servedChain: [Certificate], host: String?, at time: Date,
        stapledOCSPResponse: [UInt8]?
    ) throws(PincheckError) -> Verdict {
        let peer = try EvaluationEntry.peer(of: servedChain, host: host)
        return plan.evaluate(
            servedChain, peer: peer, at: time, staple: stapledOCSPResponse,
            verdictCache: verdictCache, diagnostics: diagnostics)
    }
}

extension Evaluator {
    /// Judges a served chain as ``evaluate(_:host:at:stapledOCSPResponse:)`` does, and fetches the
    /// CRLs at the distribution points of its verified path when the policy checks them
    /// (``RevocationPolicy/distributionPointCRLs``): revoked, good, not covered, unavailable or
    /// stale, each named in ``Verdict/revocationStatuses`` and, but for *good*, in the reasons.
    ///
    /// The fetches run on their own threads; awaiting them holds no event loop. A chain refused
    /// for another reason fetches nothing.
    /// - Parameters:
    ///   - servedChain: As in ``evaluate(_:host:at:)``.
    ///   - host: As in ``evaluate(_:host:at:)``.
    ///   - time: As in ``evaluate(_:host:at:)``.
    ///   - stapledOCSPResponse: As in ``evaluate(_:host:at:stapledOCSPResponse:)``.
    ///   - fetcher: Fetches and keeps the CRLs; share one per process.
    /// - Throws: As ``evaluate(_:host:at:)``.
    public func evaluate(
        _ servedChain: [Certificate], host: String?, at time: Date, stapledOCSPResponse: [UInt8]? = nil,
        fetchingRevocationListsWith fetcher: RevocationListFetcher
    ) async throws(PincheckError) -> Verdict {
        let peer = try EvaluationEntry.peer(of: servedChain, host: host)
        return await plan.evaluate(
            servedChain, peer: peer, at: time, staple: stapledOCSPResponse, fetcher: fetcher,
            verdictCache: verdictCache, diagnostics: diagnostics)
    }

    /// The same, blocking the calling thread while CRLs are fetched (none when `fetcher` is nil):
    /// for a command-line tool's own thread, never an event loop or Swift's cooperative pool.
    /// - Parameter presentedSCTs: SCTs the server sent in the TLS extension, for the CT policy.
    package func evaluate(
        _ servedChain: [Certificate], host: String?, at time: Date, stapledOCSPResponse: [UInt8]? = nil,
        presentedSCTs: [SignedCertificateTimestamp] = [],
        waitingForRevocationListsFrom fetcher: RevocationListFetcher?
    ) throws(PincheckError) -> Verdict {
        let peer = try EvaluationEntry.peer(of: servedChain, host: host)
        guard let fetcher else {
            return plan.evaluate(
                servedChain, peer: peer, at: time, staple: stapledOCSPResponse, presentedSCTs: presentedSCTs,
                verdictCache: verdictCache, diagnostics: diagnostics)
        }
        return plan.evaluateWaiting(
            servedChain, peer: peer, at: time, staple: stapledOCSPResponse, presentedSCTs: presentedSCTs,
            fetcher: fetcher, verdictCache: verdictCache, diagnostics: diagnostics)
    }
}

extension Certificate {
    /// A served chain from DER: each certificate from `cache` when given (parsed and kept on a miss).
    /// - Throws: ``PincheckError`` when the chain is empty or a certificate does not parse.
    static func chain(derEncoded chain: [[UInt8]], cache: CertificateCache?) throws(PincheckError) -> [Certificate] {
        try EvaluationEntry.requireServed(chain)
        if let cache { return try cache.chain(derEncoded: chain) }
        var parsed: [Certificate] = []
        parsed.reserveCapacity(chain.count)
        for (position, der) in chain.enumerated() {
            parsed.append(try Certificate(derEncoded: der, source: "served certificate \(position)"))
        }
        return parsed
    }
}
