import FoundationEssentials
import Synchronization

/// One policy made ready for evaluation: the validation, the pin sets and the rules around them,
/// assembled once into a list of checks (``EvaluationCheck``). ``Evaluator`` makes one for its
/// ``TrustPolicy``; ``TrustManager`` makes one per host policy. Both evaluate through
/// ``evaluate(_:peer:at:staple:revocationLists:presentedSCTs:verdictCache:diagnostics:)``: the
/// chain is verified once against the anchors, and every pin set is a check over that path
/// (certificate pinning adds the one re-anchored verification it needs).
///
/// A class: a trust manager hands its plans out on every evaluation, and copying one would retain
/// every reference it holds.
final class EvaluationPlan: Sendable {
    /// Anchors, switches, intermediates, profile, revocation, CT.
    let validation: ValidationPolicy
    /// The pin sets; an expired one is skipped with a warning.
    let pinSets: [PinSet]
    /// Android's `overridePins`: chains that verify to these anchors need not match the pins.
    let pinOverrideAnchors: TrustAnchors?
    /// What the pins are called in messages ("the pin set for *.example.com"); nil for a lone policy.
    let scope: String?
    /// The warnings about the peer's set-up this plan adds (a host policy's always include
    /// ``EvaluationAdvisories/backupPins``).
    let advisories: EvaluationAdvisories
    /// Which rule of a trust manager this plan is (``Verdict/Coverage/pinSetExpired`` is decided
    /// per evaluation, for a host policy whose pin sets have all expired).
    let coverage: Verdict.Coverage
    /// The host policy this plan applies, if it is one.
    let hostPolicy: HostPolicy?
    /// Whether failures are reported (the host policy has report URIs).
    let reports: Bool
    /// Tells this plan's cached verdicts from every other's (never reused in a process).
    let identity: UInt64
    /// The policy's path checks (profile rows and the policy's own), run on every path judged.
    let pathChecks: PathChecks
    /// The requirements, in the order they are judged.
    let checks: [any EvaluationCheck]
    /// Where ``RevocationCheck`` is among them: an evaluation that fetches distribution-point
    /// CRLs pauses there for the lists its verified path names.
    let revocationCheckIndex: Int?

    /// - Parameter verifiedByRoad: Set by a road whose TLS library verified the chain and the
    ///   name and shows Pincheck less (the leaf alone): the plan then judges only what it is shown,
    ///   and does not warn that its own chain and name checks are off.
    init(
        validation: ValidationPolicy, pinSets: [PinSet], pinOverrideAnchors: TrustAnchors? = nil, scope: String? = nil,
        advisories: EvaluationAdvisories = [],
        coverage: Verdict.Coverage = .everyHost, hostPolicy: HostPolicy? = nil, judgesRevocation: Bool = true,
        verifiedByRoad: Bool = false
    ) {
        self.coverage = coverage
        self.hostPolicy = hostPolicy
        self.reports = !(hostPolicy?.reportURIs.isEmpty ?? true)
        self.validation = validation
        self.pinSets = pinSets
        self.pinOverrideAnchors = pinOverrideAnchors
        self.scope = scope
        let advisories = advisories.union(validation.advisories)
        self.advisories = advisories
        self.pathChecks = validation.pathChecks
        self.identity = planIdentities.wrappingAdd(1, ordering: .relaxed).newValue
        // Android's override is decided here, once: the chain must verify to the override anchors
        // under the same validation, with no pins (a plan of its own, made with this one).
        let pinOverride = pinOverrideAnchors.map { anchors in
            var overriding = validation
            overriding.anchors = anchors
            overriding.chainValidation = .required
            overriding.advisories = []
            overriding.clientIdentity = ClientIdentityRequirement()
            return EvaluationPlan(validation: overriding, pinSets: [], judgesRevocation: false)
        }
        self.checks = Self.checks(
            validation: validation, pinSets: pinSets, pinOverride: pinOverride,
            judgesRevocation: judgesRevocation, coverage: coverage, advisories: advisories
        )
        .filter { !verifiedByRoad || !($0 is ValidationSwitchesCheck) }
        self.revocationCheckIndex = checks.firstIndex { $0 is RevocationCheck }
    }

    /// One ``TrustPolicy`` for every host: its pins (if any) as one enforced pin set.
    convenience init(policy: TrustPolicy) {
        let sets: [PinSet] = PinSet.Pins(policy.pinning).map { [PinSet($0)] } ?? []
        self.init(validation: policy.validation, pinSets: sets)
    }

    /// The requirements of a policy, in the order they are judged: where a new check goes.
    /// - Parameter judgesRevocation: False for the override plan, whose caller judges revocation itself.
    static func checks(
        validation: ValidationPolicy, pinSets: [PinSet], pinOverride: EvaluationPlan?,
        judgesRevocation: Bool, coverage: Verdict.Coverage, advisories: EvaluationAdvisories
    ) -> [any EvaluationCheck] {
        var checks: [any EvaluationCheck] = [ValidationSwitchesCheck()]
        if validation.revocationLists.contains(where: { !$0.hasNumber }) { checks.append(SuppliedCRLNumberCheck()) }
        if !pinSets.isEmpty { checks.append(PinSetExpiryCheck()) }
        checks.append(UnpinnedNameCheck())
        checks.append(AnchorsPathCheck())
        for (index, set) in pinSets.enumerated() {
            checks.append(PinSetEnforcementCheck(index: index, pinOverride: set.enforcement == .enforce ? pinOverride : nil))
            if advisories.contains(.backupPins), set.enforcement == .enforce { checks.append(BackupPinCheck(index: index)) }
        }
        checks.append(JudgedPathsCheck())
        if judgesRevocation {
            checks.append(RevocationCheck())
            if validation.certificateTransparency != nil { checks.append(TransparencyCheck()) }
            checks.append(RootProgramDistrustCheck())
        }
        if coverage == .unlistedRefused { checks.append(UnlistedHostCheck()) }
        if let rule = validation.clientIdentity.trustDomains { checks.append(TrustDomainCheck(rule: rule)) }
        if !validation.clientIdentity.identities.isEmpty { checks.append(ClientIdentityCheck(identities: validation.clientIdentity.identities)) }
        if advisories.contains(.leafPinRenewal), !pinSets.isEmpty { checks.append(LeafPinRenewalCheck()) }
        if advisories.contains(.servedChain) { checks.append(ServedChainCheck()) }
        if advisories.contains(.clientAnchors) { checks.append(ClientAnchorCheck()) }
        return checks
    }

    /// Judges a served chain. Untrusted chains are verdicts; nothing here throws.
    /// - Parameters:
    ///   - served: What the peer sent, leaf first (not empty).
    ///   - peer: The normalised name the leaf must carry, if one was asked for.
    ///   - staple: The stapled OCSP response, if one was received.
    ///   - revocationLists: The CRLs fetched from distribution points, when this road fetches them.
    ///   - presentedSCTs: SCTs the peer sent outside the certificate (the TLS extension).
    func evaluate(
        _ served: [Certificate], peer requested: PeerName?, at time: Date, staple: [UInt8]?,
        revocationLists: FetchedRevocationLists? = nil, presentedSCTs: [SignedCertificateTimestamp] = [],
        verdictCache: VerdictCache?, diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    ) -> Verdict {
        switch start(
            served, peer: requested, at: time, staple: staple, revocationLists: revocationLists, presentedSCTs: presentedSCTs,
            verdictCache: verdictCache, diagnostics: diagnostics)
        {
        case .judged(let verdict):
            return verdict
        case .started(var run, let cacheKey):
            run.decide()
            return finish(&run, cacheKey: cacheKey, verdictCache: verdictCache, diagnostics: diagnostics)
        }
    }

    /// An evaluation begun: judged already (a chain too long, a cached verdict), or a run to decide.
    enum Start {
        case judged(Verdict)
        case started(EvaluationRun, cacheKey: VerdictCache.Key?)
    }

    /// Everything before the checks: the resource limit, the staple, the CT logs' snapshot, the
    /// verdict cache (looked up only when `revocationLists` are known: a verdict is kept per CRL).
    func start(
        _ served: [Certificate], peer requested: PeerName?, at time: Date, staple: [UInt8]?,
        revocationLists: FetchedRevocationLists?, presentedSCTs: [SignedCertificateTimestamp],
        verdictCache: VerdictCache?, looksUpCache: Bool = true, diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    ) -> Start {
        diagnostics?(.evaluationStarted(host: requested?.text, time: time, servedCount: served.count))
        guard served.count <= Limits.maximumServedChainLength else {
            // A resource limit, checked before any verification work.
            let reason = Reason(
                .tooLong,
                "the peer served \(served.count) certificates; chains of more than \(Limits.maximumServedChainLength) are refused without being verified",
                requirement: .chain)
            diagnostics?(.decided(trusted: false))
            return .judged(
                Verdict(
                    failures: [reason], warnings: [], verifiedPath: nil, servedChain: served,
                    checkedHost: requested?.text, pinsFound: [], evaluationTime: time, coverage: coverage, hostPolicy: hostPolicy))
        }
        // Every road judges the staple (and its absence, for a must-staple leaf) the same way.
        let stapleCheck = StapledOCSPCheck(response: staple, policy: validation.revocation)
        // The CT logs are read once: an update of their store during this evaluation is not seen
        // by it, and the verdict is kept under the generation it was judged with.
        let transparencyLogs = validation.certificateTransparency?.logSnapshot
        var cacheKey: VerdictCache.Key? = nil
        if let verdictCache {
            cacheKey = self.cacheKey(
                served, peer: requested, staple: stapleCheck, revocationLists: revocationLists ?? FetchedRevocationLists(),
                presentedSCTs: presentedSCTs,
                logGeneration: transparencyLogs?.generation ?? 0)
            if looksUpCache, let cacheKey, let known = verdictCache.verdict(for: cacheKey, at: Timestamp.seconds(time)) {
                let verdict = known.reused(at: time, servedChain: served)
                report(verdict, to: diagnostics)
                return .judged(verdict)
            }
        }
        let peer: PeerName? = if case .required = validation.nameValidation { requested } else { nil }
        var run = EvaluationRun(plan: self, served: served, peer: peer, time: time, staple: stapleCheck, tracksConsulted: cacheKey != nil)
        run.fetchedLists = revocationLists
        run.transparencyLogs = transparencyLogs?.logs
        run.transparencyLogGeneration = transparencyLogs?.generation ?? 0
        run.presentedSCTsFromExtension = presentedSCTs
        if validation.certificateTransparency != nil {
            run.presentedSCTs = presentedSCTs + (staple.map { SignedCertificateTimestamp.stapled(in: $0, for: served[0]) } ?? [])
        }
        return .started(run, cacheKey: cacheKey)
    }

    /// The verdict of a decided run, kept in the cache under `cacheKey` and reported.
    func finish(
        _ run: inout EvaluationRun, cacheKey: VerdictCache.Key?, verdictCache: VerdictCache?,
        diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    ) -> Verdict {
        let verdict = run.verdict()
        if let cacheKey, let verdictCache { remember(verdict, of: run, under: cacheKey, in: verdictCache) }
        report(verdict, to: diagnostics)
        return verdict
    }

    /// Runs the checks `range` of the plan in order; after one stops the run, only those that run
    /// regardless (the stop holds across a pause: ``EvaluationRun/stopped``).
    static func run(_ checks: ArraySlice<any EvaluationCheck>, on run: inout EvaluationRun) {
        for check in checks where !run.stopped || check.runsAfterStop {
            if check.apply(to: &run) == .stop { run.stopped = true }
        }
    }

    /// The key a verdict for this chain, host, CRLs and log generation is kept under; nil when
    /// it is not kept. SCTs from the TLS extension change with each handshake: such verdicts are
    /// not kept. CT's dependence on the time (log states, list age, SCT timestamps) bounds the
    /// window instead.
    func cacheKey(
        _ served: [Certificate], peer: PeerName?, staple: StapledOCSPCheck, revocationLists: FetchedRevocationLists,
        presentedSCTs: [SignedCertificateTimestamp], logGeneration: UInt64
    ) -> VerdictCache.Key? {
        guard !pathChecks.dependsOnVerificationTime, !staple.dependsOnVerificationTime,
            validation.certificateTransparency == nil || presentedSCTs.isEmpty
        else { return nil }
        // A verdict that relied on fetched CRLs is kept apart from one that did not, and per CRL.
        return VerdictCache.key(
            evaluator: identity, chain: served, host: peer?.text, revocationLists: revocationLists.lists,
            logGeneration: logGeneration)
    }

    /// Keeps a verdict for as long as everything that decided it holds.
    private func remember(_ verdict: Verdict, of run: EvaluationRun, under key: VerdictCache.Key, in cache: VerdictCache) {
        var window = validityWindow(at: Timestamp.seconds(run.time), served: run.served, consulted: run.consulted)
        for instant in run.timeBoundaries { window.add(Timestamp.seconds(instant)) }
        // A verdict never outlives a CRL it relied on.
        for list in run.fetchedLists?.lists ?? [] { window.add(list) }
        // Nor a log state, a log list's age limit or an SCT timestamp that decided CT.
        if let requirement = validation.certificateTransparency, let logs = run.transparencyLogs, let assessment = run.transparency {
            for instant in CertificateTransparency.timeBoundaries(requirement.policy, logs: logs, of: assessment) { window.add(instant) }
        }
        cache.insert(verdict, for: key, from: window.from, until: window.until)
    }

    /// Every certificate, CRL and pin-set expiry that could have decided the verdict bounds its reuse.
    private func validityWindow(at second: Int64, served: [Certificate], consulted: [Certificate]) -> ValidityWindow {
        var window = ValidityWindow(at: second)
        for certificate in served { window.add(certificate) }
        for certificate in consulted { window.add(certificate) }
        for certificate in validation.additionalIntermediates { window.add(certificate) }
        for certificate in validation.anchors.certificates { window.add(certificate) }
        for certificate in pinOverrideAnchors?.certificates ?? [] { window.add(certificate) }
        for set in pinSets {
            for certificate in set.pinnedCertificates { window.add(certificate) }
            if let expires = set.expires { window.add(Timestamp.seconds(expires)) }
        }
        for list in validation.revocationLists { window.add(list) }
        return window
    }

    private func report(_ verdict: Verdict, to diagnostics: (@Sendable (DiagnosticEvent) -> Void)?) {
        guard let diagnostics else { return }
        if let path = verdict.verifiedPath { diagnostics(.pathVerified(path)) }
        let chainFailures = verdict.failures.filter { $0.evidence.openSSLError != nil }
        if !chainFailures.isEmpty { diagnostics(.pathRejected(chainFailures)) }
        verdict.matchedPins.forEach { diagnostics(.pinMatched($0)) }
        diagnostics(.decided(trusted: verdict.isTrusted))
    }
}

/// Source of ``EvaluationPlan`` identities.
private let planIdentities = Atomic<UInt64>(0)
