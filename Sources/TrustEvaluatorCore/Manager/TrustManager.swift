import FoundationEssentials

/// Maps hosts to policies and judges served chains with them (Alamofire's `ServerTrustManager`,
/// TrustKit's pinned domains).
///
/// The most specific matching pattern wins. A host no pattern matches is rejected when
/// ``allHostsMustBeEvaluated`` (the default); otherwise it gets default validation — chain and
/// name are still checked: "not pinned" never means "not checked".
///
/// Every host policy takes the ``Evaluator``'s road: the chain is verified once against the
/// policy's anchors, and each pin set (enforced, report-only, expired) is a check over that path.
/// Give it a ``CertificateCache`` and a ``VerdictCache`` as you would an evaluator.
public struct TrustManager: Sendable {
    public let policies: [HostPolicy]
    public let allHostsMustBeEvaluated: Bool
    /// The validation unlisted hosts get when they are allowed (chain and name always required).
    public let defaultValidationPolicy: ValidationPolicy
    /// The validation unlisted hosts get, as a ``TrustPolicy`` without pins.
    @available(*, deprecated, renamed: "defaultValidationPolicy")
    public var defaultValidation: TrustPolicy { TrustPolicy(pinning: .none, validation: defaultValidationPolicy) }
    /// Where ``evaluate(derEncoded:host:port:at:stapledOCSPResponse:)`` finds certificates parsed before.
    public let certificateCache: CertificateCache?
    /// Where verdicts are kept for reuse (see ``VerdictCache``).
    public let verdictCache: VerdictCache?
    private let diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    /// The host policies made ready, in the order of ``policies``, and the other rules' plans.
    private let plans: Plans

    /// Which host policies apply to a host that several patterns match.
    public enum PatternMatching: Sendable, Hashable {
        /// The most specific pattern's policy alone (TrustKit, Android, Alamofire). The default.
        case mostSpecific
        /// The pins of every matching pattern together: a chain matching any of them is accepted
        /// (OkHttp's `CertificatePinner.findMatchingPins`). Every policy must hold one enforced
        /// public-key pin set without expiry; the most specific pattern's other settings apply.
        case allMatching
    }

    /// How a host that several patterns match is judged; ``PatternMatching/mostSpecific`` by default.
    public var patternMatching: PatternMatching = .mostSpecific

    /// One policy for every host: what a client talking to a single upstream usually wants.
    public static func single(
        _ policy: TrustPolicy, certificateCache: CertificateCache? = nil, verdictCache: VerdictCache? = nil,
        diagnostics: (@Sendable (DiagnosticEvent) -> Void)? = nil
    ) -> TrustManager {
        TrustManager(
            policies: [], allHostsMustBeEvaluated: true, defaultValidation: policy.validation, everyHost: policy,
            certificateCache: certificateCache, verdictCache: verdictCache, diagnostics: diagnostics)
    }

    /// - Parameters:
    ///   - policies: The host policies; the most specific matching pattern wins.
    ///   - allHostsMustBeEvaluated: Reject hosts no pattern matches (the default); when false they
    ///     get ``defaultValidationPolicy`` (``Verdict/Coverage/unlistedDefaultValidation``).
    ///   - defaultValidation: The anchors and checks for unlisted hosts (chain and name validation
    ///     are required there whatever it says).
    ///   - certificateCache: Parsed certificates to reuse in ``evaluate(derEncoded:host:port:at:stapledOCSPResponse:)``.
    ///   - verdictCache: Verdicts to reuse while they still hold.
    ///   - diagnostics: Called with each evaluation's steps.
    public init(
        policies: [HostPolicy] = [], allHostsMustBeEvaluated: Bool = true, defaultValidation: ValidationPolicy = ValidationPolicy(),
        certificateCache: CertificateCache? = nil, verdictCache: VerdictCache? = nil,
        diagnostics: (@Sendable (DiagnosticEvent) -> Void)? = nil
    ) {
        self.init(
            policies: policies, allHostsMustBeEvaluated: allHostsMustBeEvaluated, defaultValidation: defaultValidation,
            everyHost: nil, certificateCache: certificateCache, verdictCache: verdictCache, diagnostics: diagnostics)
    }

    /// A trust manager whose default validation is given as a ``TrustPolicy`` whose pinning is not used.
    @available(
        *, deprecated,
        message: "give the default validation as a ValidationPolicy (a TrustPolicy's pins were ignored here): defaultValidation: policy.validation"
    )
    @_disfavoredOverload
    public init(
        policies: [HostPolicy] = [], allHostsMustBeEvaluated: Bool = true, defaultValidation: TrustPolicy = TrustPolicy(),
        certificateCache: CertificateCache? = nil, verdictCache: VerdictCache? = nil,
        diagnostics: (@Sendable (DiagnosticEvent) -> Void)? = nil
    ) {
        self.init(
            policies: policies, allHostsMustBeEvaluated: allHostsMustBeEvaluated, defaultValidation: defaultValidation.validation,
            everyHost: nil, certificateCache: certificateCache, verdictCache: verdictCache, diagnostics: diagnostics)
    }

    private init(
        policies: [HostPolicy], allHostsMustBeEvaluated: Bool, defaultValidation: ValidationPolicy, everyHost: TrustPolicy?,
        certificateCache: CertificateCache?, verdictCache: VerdictCache?, diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    ) {
        self.policies = policies
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        var validation = defaultValidation
        validation.chainValidation = .required
        validation.nameValidation = .required
        self.defaultValidationPolicy = validation
        self.certificateCache = certificateCache
        self.verdictCache = verdictCache
        self.diagnostics = diagnostics
        self.plans = Plans(policies: policies, defaultValidation: validation, everyHost: everyHost)
    }

    /// This manager with every policy that does not say which CRL distribution points it checks
    /// checking them as `settings` says: what a diagnostic command does by default, while a
    /// configuration's own `"distributionPoints"` still decides for its hosts.
    package func consultingDistributionPoints(_ settings: DistributionPointCRLs) -> TrustManager {
        mappingValidation { validation in
            var validation = validation
            if validation.revocation.distributionPointCRLs == nil { validation.revocation.distributionPointCRLs = settings }
            return validation
        }
    }

    /// The same manager with every validation policy (hosts', every-host, unlisted) changed by
    /// `change`: what a command's option applies to a whole configuration.
    package func mappingValidation(_ change: (ValidationPolicy) -> ValidationPolicy) -> TrustManager {
        let hosts = policies.map { policy in
            var copy = HostPolicy(
                pattern: policy.pattern, pinSets: policy.pinSets, validation: change(policy.validationPolicy),
                reportURIs: policy.reportURIs)
            copy.pinOverrideAnchors = policy.pinOverrideAnchors
            return copy
        }
        let everyHost = plans.everyHostPolicy.map { TrustPolicy(pinning: $0.pinning, validation: change($0.validation)) }
        var manager = TrustManager(
            policies: hosts, allHostsMustBeEvaluated: allHostsMustBeEvaluated,
            defaultValidation: change(defaultValidationPolicy), everyHost: everyHost,
            certificateCache: certificateCache, verdictCache: verdictCache, diagnostics: diagnostics)
        manager.patternMatching = patternMatching
        return manager
    }

    /// The policy for `host`, or nil: the most specific matching pattern's, with, under
    /// ``PatternMatching/allMatching``, the pins of every other matching pattern added.
    /// - Throws: ``PincheckError`` (`host.invalid`) when `host` cannot be a certificate name.
    public func policy(for host: String) throws(PincheckError) -> HostPolicy? {
        try lookUp(HostName.peerName(for: host).text)?.hostPolicy
    }

    /// Whether the policy that applies to `host` requires a stapled OCSP response
    /// (``RevocationPolicy/requireStapledOCSP``). False for unlisted hosts, and for a host that
    /// cannot be a name (its evaluation fails anyway). A must-staple leaf requires one whatever
    /// the policy says (``Certificate/requiresStapledOCSP``).
    public func requiresStapledOCSP(for host: String) -> Bool {
        guard let peer = try? HostName.peerName(for: host) else { return false }
        return lookUp(peer.text)?.validation.revocation.requireStapledOCSP == true
    }

    /// The plan of the policy for a normalised name (its ``EvaluationPlan/hostPolicy`` is the policy).
    private func lookUp(_ name: String) -> EvaluationPlan? {
        var best: (index: Int, score: Int)? = nil
        var matches = 0
        // The patterns alone, not the policies: copying a HostPolicy out of the array would retain
        // everything it holds, on every evaluation.
        let patterns = plans.patterns
        for index in patterns.indices {
            guard let score = patterns[index].specificity(for: name) else { continue }
            matches += 1
            if best == nil || score > best!.score { best = (index, score) }
        }
        guard let chosen = best?.index else { return nil }
        guard patternMatching == .allMatching, matches > 1 else { return plans.hosts[chosen] }
        let matching = policies.indices.filter { policies[$0].pattern.specificity(for: name) != nil }
        return plans.union(of: matching, chosen: chosen, policies: policies) ?? plans.hosts[chosen]
    }

    /// Judges a served chain given as DER, as TLS stacks hand it over (see ``certificateCache``).
    /// - Throws: As ``evaluate(_:host:port:at:stapledOCSPResponse:)``, and when a certificate does not parse.
    public func evaluate(
        derEncoded chain: [[UInt8]], host: String, port: Int = 443, at time: Date,
        stapledOCSPResponse: [UInt8]? = nil
    ) throws(PincheckError) -> Verdict {
        try evaluate(
            Certificate.chain(derEncoded: chain, cache: certificateCache), host: host, port: port, at: time,
            stapledOCSPResponse: stapledOCSPResponse)
    }

    /// Judges a served chain for a host: which rule applies (``Verdict/coverage``), what was found,
    /// and the failure reports that are due (``Verdict/reports``).
    /// - Parameters:
    ///   - servedChain: What the peer sent, leaf first.
    ///   - host: The host connected to (DNS name, IDN in either form, or IP literal).
    ///   - port: The port, for reports.
    ///   - time: The verification time.
    ///   - stapledOCSPResponse: The OCSP response the server stapled (DER), if any.
    /// - Throws: ``PincheckError`` when the chain is empty or the host cannot be a name.
    public func evaluate(
        _ servedChain: [Certificate], host: String, port: Int = 443, at time: Date,
        stapledOCSPResponse: [UInt8]? = nil
    ) throws(PincheckError) -> Verdict {
        try evaluate(servedChain, host: host, port: port, at: time, stapledOCSPResponse: stapledOCSPResponse, revocationLists: nil)
    }

    /// Judges a served chain as ``evaluate(_:host:port:at:stapledOCSPResponse:)`` does, and fetches
    /// the CRLs at the distribution points of its verified path when the host's policy checks them
    /// (``RevocationPolicy/distributionPointCRLs``); see ``Evaluator/evaluate(_:host:at:stapledOCSPResponse:fetchingRevocationListsWith:)``.
    /// - Parameters:
    ///   - servedChain: What the peer sent, leaf first.
    ///   - host: The host connected to (DNS name, IDN in either form, or IP literal).
    ///   - port: The port, for reports.
    ///   - time: The verification time.
    ///   - stapledOCSPResponse: The OCSP response the server stapled (DER), if any.
    ///   - fetcher: Fetches and keeps the CRLs; share one per process.
    /// - Throws: As ``evaluate(_:host:port:at:stapledOCSPResponse:)``.
    public func evaluate(
        _ servedChain: [Certificate], host: String, port: Int = 443, at time: Date,
        stapledOCSPResponse: [UInt8]? = nil,
        fetchingRevocationListsWith fetcher: RevocationListFetcher
    ) async throws(PincheckError) -> Verdict {
        let peer = try EvaluationEntry.peer(of: servedChain, host: host)
        let plan = plan(for: peer)
        let verdict = await plan.evaluate(
            servedChain, peer: peer, at: time, staple: stapledOCSPResponse, fetcher: fetcher,
            verdictCache: verdictCache, diagnostics: diagnostics)
        return withReports(verdict, of: plan, served: servedChain, peer: peer, port: port, at: time)
    }

    /// Whether the policy for `host` asks for the CRLs at the certificates' distribution points
    /// (a road that can fetch then does so before judging; one that cannot says so in the verdict).
    package func fetchesDistributionPointCRLs(host: String) -> Bool {
        guard let peer = try? HostName.peerName(for: host) else { return false }
        return plan(for: peer).validation.revocation.distributionPointCRLs != nil
    }

    /// The same as ``evaluate(_:host:port:at:stapledOCSPResponse:fetchingRevocationListsWith:)``,
    /// blocking the calling thread while CRLs are fetched: for a command-line tool's own thread,
    /// never an event loop or Swift's cooperative pool.
    /// - Parameter presentedSCTs: SCTs the server sent in the TLS extension, for the CT policy.
    package func evaluate(
        _ servedChain: [Certificate], host: String, port: Int = 443, at time: Date,
        stapledOCSPResponse: [UInt8]? = nil, presentedSCTs: [SignedCertificateTimestamp] = [],
        waitingForRevocationListsFrom fetcher: RevocationListFetcher?
    ) throws(PincheckError) -> Verdict {
        try judge(servedChain, host: host, port: port, at: time) { plan, peer in
            guard let fetcher else {
                return plan.evaluate(
                    servedChain, peer: peer, at: time, staple: stapledOCSPResponse, revocationLists: nil,
                    presentedSCTs: presentedSCTs, verdictCache: verdictCache, diagnostics: diagnostics)
            }
            return plan.evaluateWaiting(
                servedChain, peer: peer, at: time, staple: stapledOCSPResponse, presentedSCTs: presentedSCTs,
                fetcher: fetcher, verdictCache: verdictCache, diagnostics: diagnostics)
        }
    }

    /// `judgement`'s verdict on `servedChain` by the plan of its host's policy, with the failure
    /// reports that policy is due.
    private func judge(
        _ servedChain: [Certificate], host: String, port: Int, at time: Date, _ judgement: (EvaluationPlan, PeerName) -> Verdict
    ) throws(PincheckError) -> Verdict {
        let peer = try EvaluationEntry.peer(of: servedChain, host: host)
        let plan = plan(for: peer)
        return withReports(judgement(plan, peer), of: plan, served: servedChain, peer: peer, port: port, at: time)
    }

    /// Judges a served chain with CRLs already fetched for it.
    package func evaluate(
        _ servedChain: [Certificate], host: String, port: Int = 443, at time: Date,
        stapledOCSPResponse: [UInt8]?, revocationLists: FetchedRevocationLists?,
        presentedSCTs: [SignedCertificateTimestamp] = []
    ) throws(PincheckError) -> Verdict {
        // The plans know which rule they are (the verdict's coverage), so a cached verdict is
        // returned as it is; only failure reports are made per evaluation.
        try judge(servedChain, host: host, port: port, at: time) { plan, peer in
            plan.evaluate(
                servedChain, peer: peer, at: time, staple: stapledOCSPResponse, revocationLists: revocationLists,
                presentedSCTs: presentedSCTs, verdictCache: verdictCache, diagnostics: diagnostics)
        }
    }

    /// The verdict with the failure reports its host policy's report URIs are due (made per evaluation).
    private func withReports(
        _ verdict: Verdict, of plan: EvaluationPlan, served servedChain: [Certificate], peer: PeerName, port: Int,
        at time: Date
    ) -> Verdict {
        guard plan.reports, !verdict.isTrusted || !verdict.reportOnlyFailures.isEmpty, let policy = plan.hostPolicy else { return verdict }
        let active = policy.pinSets.filter { $0.isActive(at: time) }
        return verdict.adding(reports: [
            PinFailureReport(
                time: time, host: peer.text, port: port, policy: policy, active: active,
                served: servedChain, validated: verdict.builtPath?.certificates ?? [])
        ])
    }

    /// The plan that judges `peer`: its host policy's, or the rule for every host or unlisted ones.
    private func plan(for peer: PeerName) -> EvaluationPlan {
        if let plan = lookUp(peer.text) { return plan }
        if let everyHost = plans.everyHost { return everyHost }
        return allHostsMustBeEvaluated ? plans.unlistedRefused : plans.defaultValidation
    }
}

/// A trust manager's plans: one per host policy, made once, so that each keeps its identity in
/// the verdict cache; unions of patterns (``TrustManager/PatternMatching/allMatching``) are made
/// on first use and kept.
private final class Plans: Sendable {
    let hosts: [EvaluationPlan]
    /// The host policies' patterns, in the same order.
    let patterns: [HostPattern]
    let defaultValidation: EvaluationPlan
    let unlistedRefused: EvaluationPlan
    let everyHost: EvaluationPlan?
    /// The one policy of ``TrustManager/single(_:certificateCache:verdictCache:diagnostics:)``, pins included.
    let everyHostPolicy: TrustPolicy?
    private let unions = Locked<[[Int]: EvaluationPlan]>([:])

    init(policies: [HostPolicy], defaultValidation: ValidationPolicy, everyHost: TrustPolicy?) {
        hosts = policies.map(Plans.plan(for:))
        patterns = policies.map(\.pattern)
        self.defaultValidation = EvaluationPlan(validation: defaultValidation, pinSets: [], coverage: .unlistedDefaultValidation)
        self.unlistedRefused = EvaluationPlan(validation: defaultValidation, pinSets: [], coverage: .unlistedRefused)
        self.everyHost = everyHost.map { EvaluationPlan(policy: $0) }
        self.everyHostPolicy = everyHost
    }

    static func plan(for policy: HostPolicy) -> EvaluationPlan {
        EvaluationPlan(
            validation: policy.validationPolicy, pinSets: policy.pinSets, pinOverrideAnchors: policy.pinOverrideAnchors,
            scope: "\(policy.pattern)", advisories: .backupPins,
            coverage: .hostPolicy, hostPolicy: policy)
    }

    /// OkHttp's union: the pins of every matching pattern as one enforced set, the chosen pattern's other settings.
    func union(of matching: [Int], chosen: Int, policies: [HostPolicy]) -> EvaluationPlan? {
        if let known = unions.withLock({ $0[matching] }) { return known }
        var pins = Set<PublicKeyPin>()
        for index in matching {
            for set in policies[index].pinSets { if case .publicKeys(let pinned) = set.pinning { pins.formUnion(pinned.pins) } }
        }
        guard !pins.isEmpty, let keys = try? PinnedPublicKeys(pins: pins) else { return nil }
        let base = policies[chosen]
        var union = HostPolicy(
            pattern: base.pattern, pinSets: [PinSet(.publicKeys(keys))], validation: base.validationPolicy,
            reportURIs: base.reportURIs)
        union.pinOverrideAnchors = base.pinOverrideAnchors
        let made = Plans.plan(for: union)
        return unions.withLock { known in
            if let existing = known[matching] { return existing }
            known[matching] = made
            return made
        }
    }
}
