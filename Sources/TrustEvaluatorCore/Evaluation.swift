import FoundationEssentials
import Synchronization

/// One policy made ready for evaluation: the validation, the pin sets and the rules around them,
/// with its path checks assembled once. ``Evaluator`` makes one for its ``TrustPolicy``;
/// ``TrustManager`` makes one per host policy. Both evaluate through ``evaluate(_:peer:at:staple:verdictCache:diagnostics:)``:
/// the chain is verified once against the anchors, and every pin set is a check over that path
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
    /// Whether a trusted enforced pin set without a backup pin is warned about (RFC 7469 §2.5).
    let warnsWithoutBackupPin: Bool
    /// Which rule of a trust manager this plan is (``Verdict/Coverage/pinSetExpired`` is decided
    /// per evaluation, for a host policy whose pin sets have all expired).
    let coverage: Verdict.Coverage
    /// The host policy this plan applies, if it is one.
    let hostPolicy: HostPolicy?
    /// Whether failures are reported (the host policy has report URIs).
    let reports: Bool
    /// Tells this plan's cached verdicts from every other's (never reused in a process).
    let identity: UInt64
    fileprivate let checks: PathChecks

    init(validation: ValidationPolicy, pinSets: [PinSet], pinOverrideAnchors: TrustAnchors? = nil, scope: String? = nil,
         warnsWithoutBackupPin: Bool = false,
         coverage: Verdict.Coverage = .everyHost, hostPolicy: HostPolicy? = nil) {
        self.coverage = coverage
        self.hostPolicy = hostPolicy
        self.reports = !(hostPolicy?.reportURIs.isEmpty ?? true)
        self.validation = validation
        self.pinSets = pinSets
        self.pinOverrideAnchors = pinOverrideAnchors
        self.scope = scope
        self.warnsWithoutBackupPin = warnsWithoutBackupPin
        self.checks = validation.pathChecks
        self.identity = planIdentities.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// One ``TrustPolicy`` for every host: its pins (if any) as one enforced pin set.
    convenience init(policy: TrustPolicy) {
        let sets: [PinSet] = if case .none = policy.pinning { [] } else { [PinSet(unchecked: policy.pinning)] }
        self.init(validation: policy.validation, pinSets: sets)
    }

    /// Judges a served chain. Untrusted chains are verdicts; nothing here throws.
    /// - Parameters:
    ///   - served: What the peer sent, leaf first (not empty).
    ///   - peer: The normalised name the leaf must carry, if one was asked for.
    ///   - staple: The stapled OCSP response, if one was received.
    ///   - revocationLists: The CRLs fetched from distribution points, when this road fetches them.
    ///   - presentedSCTs: SCTs the peer sent outside the certificate (the TLS extension).
    func evaluate(_ served: [Certificate], peer requested: PeerName?, at time: Date, staple: [UInt8]?,
                  revocationLists: FetchedRevocationLists? = nil, presentedSCTs: [SignedCertificateTimestamp] = [],
                  verdictCache: VerdictCache?, diagnostics: (@Sendable (DiagnosticEvent) -> Void)?) -> Verdict {
        let leaf = served[0]
        diagnostics?(.evaluationStarted(host: requested?.text, time: time, servedCount: served.count))
        guard served.count <= Limits.maximumServedChainLength else {
            // A resource limit, checked before any verification work.
            let reason = Reason(.tooLong, "the peer served \(served.count) certificates; chains of more than \(Limits.maximumServedChainLength) are refused without being verified", requirement: .chain)
            diagnostics?(.decided(trusted: false))
            return Verdict(failures: [reason], warnings: [], verifiedPath: nil, servedChain: served,
                           checkedHost: requested?.text, pinsFound: [], evaluationTime: time, coverage: coverage, hostPolicy: hostPolicy)
        }
        // Every road judges the staple (and its absence, for a must-staple leaf) the same way.
        let stapleCheck = StapledOCSPCheck(response: staple, policy: validation.revocation)

        // The same rounding as the verifier's: OpenSSL judges whole seconds.
        let second = Timestamp.seconds(time)
        var cacheKey: VerdictCache.Key? = nil
        let fetchedLists = revocationLists?.lists ?? []
        // The CT logs are read once: an update of their store during this evaluation is not seen
        // by it, and the verdict is kept under the generation it was judged with.
        let transparencyLogs = validation.certificateTransparency?.logSnapshot
        // SCTs from the TLS extension change with each handshake: such verdicts are not kept. CT's
        // dependence on the time (log states, list age, SCT timestamps) bounds the window below.
        if let verdictCache, !checks.dependsOnVerificationTime, !stapleCheck.dependsOnVerificationTime,
           validation.certificateTransparency == nil || presentedSCTs.isEmpty {
            // A verdict that relied on fetched CRLs is kept apart from one that did not, and per CRL.
            let key = VerdictCache.key(evaluator: identity, chain: served, host: requested?.text, revocationLists: fetchedLists,
                                       logGeneration: transparencyLogs?.generation ?? 0)
            if let known = verdictCache.verdict(for: key, at: second) {
                let verdict = known.reused(at: time, servedChain: served)
                report(verdict, to: diagnostics)
                return verdict
            }
            cacheKey = key
        }

        var run = Run(plan: self, served: served, leaf: leaf, time: time, staple: stapleCheck, tracksConsulted: cacheKey != nil)
        run.fetchedLists = revocationLists
        run.transparencyLogs = transparencyLogs?.logs
        if validation.certificateTransparency != nil {
            run.presentedSCTs = presentedSCTs + (staple.map { SignedCertificateTimestamp.stapled(in: $0, for: leaf) } ?? [])
        }
        switch (validation.nameValidation, requested) {
        case (.required, let peer?):
            run.peer = peer
        case (.required, nil):
            run.warn(.hostNotChecked, "no host name was given, so the certificate was not checked against any name", requirement: .name)
        case (.disabled(let because), _):
            run.warn(.hostNotChecked, "host name validation is disabled (\(because)): a valid certificate for any host is accepted", requirement: .name)
        }
        if case .disabled(let because) = validation.chainValidation {
            run.warn(.chainNotValidated, "chain validation is disabled (\(because))", requirement: .chain)
        }
        run.decide()

        let verdict = run.verdict()
        if let cacheKey, let verdictCache {
            var window = validityWindow(at: second, served: served, consulted: run.consulted)
            // A verdict never outlives a CRL it relied on.
            for list in fetchedLists { window.add(list) }
            // Nor a log state, a log list's age limit or an SCT timestamp that decided CT.
            if let requirement = validation.certificateTransparency, let logs = transparencyLogs?.logs, let assessment = run.transparency {
                for instant in CertificateTransparency.timeBoundaries(requirement.policy, logs: logs, of: assessment) { window.add(instant) }
            }
            verdictCache.insert(verdict, for: cacheKey, from: window.from, until: window.until)
        }
        report(verdict, to: diagnostics)
        return verdict
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

/// Failures and warnings, each said once: a finding met on two paths (the anchors' and a pin
/// set's, say) is the same reason, evidence and all.
private struct Findings {
    var failures: [Reason] = []
    var warnings: [Reason] = []

    mutating func fail(_ reason: Reason) {
        if !failures.contains(reason) { failures.append(reason) }
    }

    mutating func warn(_ reason: Reason) {
        if !warnings.contains(reason) { warnings.append(reason) }
    }
}

/// The state of one evaluation.
private struct Run {
    let plan: EvaluationPlan
    let served: [Certificate]
    let leaf: Certificate
    let time: Date
    /// The staple and its rules; nil in a nested run whose caller judges revocation itself.
    let staple: StapledOCSPCheck?
    var peer: PeerName?
    /// What counts.
    var found = Findings()
    /// Pin mismatches of report-only pin sets: recorded, not counted.
    var reportOnly: [Reason] = []
    /// The path the verdict is about: the anchors' path, or the path re-anchored on pinned certificates.
    var path: VerifiedPath?
    /// The path verified against the anchors (or, chain validation disabled, linked by signatures).
    var basePath: VerifiedPath?
    var matches: [PinMatch] = []
    /// CRLs fetched from distribution points for this evaluation (nil: none were fetched).
    var fetchedLists: FetchedRevocationLists?
    /// What the distribution points said.
    var revocationStatuses: [RevocationStatus] = []
    /// The path revocation was judged on (the anchors' path, or the one linked by signatures).
    var revocationPath: [Certificate]?
    /// The CT logs this evaluation judges with, read once from the requirement.
    var transparencyLogs: CertificateTransparency.Logs?
    /// What the Certificate Transparency requirement found, when the policy has one.
    var transparency: CertificateTransparency.Assessment?
    /// SCTs the peer sent outside the certificate: the TLS extension's and the staple's.
    var presentedSCTs: [SignedCertificateTimestamp] = []
    /// True when the plan has pin sets and every one has expired.
    var allPinSetsExpired = false
    /// Whether some pin set was compared with a path (false when the chain failed before).
    var pinsCompared = false
    /// Certificates the verifier built paths from (besides the served ones): the validity of each
    /// bounds how long the verdict may be reused.
    var consulted: [Certificate] = []
    /// Whether to collect ``consulted`` (only a verdict cache needs it).
    private let tracksConsulted: Bool
    /// The path checks' findings for paths already checked (while choosing one, say).
    private var checked: [(path: VerifiedPath, findings: PathFindings)] = []
    /// The served certificates after the leaf, then the policy's intermediates.
    private let untrusted: [Certificate]

    init(plan: EvaluationPlan, served: [Certificate], leaf: Certificate, time: Date, staple: StapledOCSPCheck?, tracksConsulted: Bool) {
        self.plan = plan
        self.served = served
        self.leaf = leaf
        self.time = time
        self.staple = staple
        self.tracksConsulted = tracksConsulted
        self.untrusted = Array(served.dropFirst()) + plan.validation.additionalIntermediates
    }

    private var policy: ValidationPolicy { plan.validation }

    private var validatesChain: Bool { policy.validatesChain }

    mutating func warn(_ code: Reason.Code, _ message: String, evidence: Evidence = Evidence(), requirement: Reason.Requirement) {
        found.warn(Reason(code, message, evidence: evidence, requirement: requirement))
    }

    func verdict() -> Verdict {
        let trusted = found.failures.isEmpty
        return Verdict(failures: found.failures, warnings: found.warnings, verifiedPath: trusted ? path : nil,
                       servedChain: served, checkedHost: peer?.text, pinsFound: matches,
                       evaluationTime: time, reportOnlyFailures: reportOnly, builtPath: basePath ?? path,
                       coverage: plan.coverage == .hostPolicy && allPinSetsExpired ? .pinSetExpired : plan.coverage,
                       hostPolicy: plan.hostPolicy, revocationStatuses: revocationStatuses,
                       revocationPath: revocationPath, certificateTransparency: transparency, pinsCompared: pinsCompared)
    }

    // MARK: The steps

    mutating func decide() {
        decideTrust()
        if plan.coverage == .unlistedRefused, let peer {
            found.fail(Reason(.hostNotListed, "\(peer.text) matches no pinning policy, and every host must be evaluated by one (allHostsMustBeEvaluated)", requirement: .hostPolicy))
        }
    }

    private mutating func decideTrust() {
        // A CRL without a cRLNumber cannot be ordered against a newer one (RFC 5280 §5.2.3): refuse
        // to rely on it rather than let a stale list vouch for a certificate.
        for (index, crl) in policy.revocationLists.enumerated() where !crl.hasNumber {
            found.fail(Reason(.revocationUnknown, "supplied CRL #\(index + 1) has no cRLNumber extension (RFC 5280 §5.2.3), so it cannot be used", requirement: .revocation))
        }
        let active = plan.pinSets.filter { set in
            guard let expires = set.expires, time >= expires else { return true }
            warn(.pinSetExpired, "\(pinsName) expired on \(Timestamp.day(expires)); only default validation applied", requirement: .pins)
            return false
        }
        allPinSetsExpired = !plan.pinSets.isEmpty && active.isEmpty
        // 1. AFNetworking's guard: checking a name on a chain nobody validates means nothing
        //    unless something is pinned.
        if peer != nil, !validatesChain, active.isEmpty {
            found.fail(Reason(.selfSignedRequiresPinning, "validating a host name with chain validation disabled requires pinning: without pins anyone can make a certificate for any name", requirement: .hostPolicy))
            return
        }
        // 2–3. The path to the anchors, verified once for every pin set.
        if validatesChain {
            guard let verified = verifyAgainstAnchors() else { return }
            basePath = verified
        } else if active.contains(where: { $0.check.matchesOnAnchorsPath }) {
            // Chain validation off: only certificates that certify the leaf by signature may match
            // a key pin (AFNetworking would count any served certificate), and a requested name
            // must still be on the leaf.
            if let peer, !HostCheck.matches(leaf, peer) {
                found.fail(ChainReasons.nameMismatch(leaf, peer))
                return
            }
            let linked = SignatureChain.path(from: leaf, through: untrusted + policy.anchors.certificates, maximumDepth: policy.maximumChainDepth)
            basePath = VerifiedPath(linked, anchoring: .signaturesOnly)
        }
        path = basePath

        // 4–6. Each pin set is a check over that path.
        var overridesPins: Bool? = nil
        let input = PinCheckInput(anchorsPath: basePath, leaf: leaf, served: served, untrusted: untrusted, peer: peer, time: time,
                                  validation: policy)
        for set in active {
            let outcome = set.check.check(input)
            if tracksConsulted { consulted += outcome.consulted }
            if outcome.compared { pinsCompared = true }
            outcome.warnings.forEach { found.warn($0) }
            // A broken chain or name is rejected whatever the pin set's enforcement.
            outcome.failures.forEach { found.fail($0) }
            if !outcome.mismatches.isEmpty {
                switch set.enforcement {
                case .enforce where outcome.failures.isEmpty && pinsOverridden(&overridesPins):
                    warn(.pinMismatch, "\(pinsName) did not match, but the chain ends at a trust anchor that overrides pins (Android overridePins); accepted on its validation", requirement: .pins)
                case .enforce:
                    outcome.mismatches.forEach { found.fail($0) }
                case .reportOnly:
                    reportOnly += outcome.mismatches
                    warn(.reportOnlyFailure, "the report-only \(pinsNoun) did not match; the connection is allowed and a report is due", requirement: .pins)
                }
                continue
            }
            guard outcome.failures.isEmpty else { continue }
            matches += outcome.matches
            if let own = outcome.path, own.anchoring == .pinnedCertificate { path = own }
            if plan.warnsWithoutBackupPin, set.enforcement == .enforce, let setPath = outcome.path,
               set.pinCount < 2 || set.matchesAll(of: setPath.certificates) {
                warn(.noBackupPin, "\(pinsName) has no backup pin: \(set.pinCount < 2 ? "only one pin" : "every pin matches the current chain"); a key rotation would lock clients out (RFC 7469 §2.5)", requirement: .pins)
            }
        }

        // Every path that was judged also goes through the policy's own checks.
        var judged: [VerifiedPath] = []
        if let basePath { judged.append(basePath) }
        if let path, !judged.contains(where: { $0.certificates == path.certificates && $0.anchoring == path.anchoring }) { judged.append(path) }
        for candidate in judged {
            let findings = pathFindings(candidate)
            findings.failures.forEach { found.fail($0) }
            findings.warnings.forEach { found.warn($0) }
        }
        if let staple {
            let anchorsPath = basePath ?? linkedBySignatures()
            judgeRevocation(staple, on: anchorsPath)
            if let requirement = policy.certificateTransparency, let logs = transparencyLogs {
                judgeTransparency(requirement, logs: logs, on: anchorsPath)
            }
        }
    }

    /// With chain validation disabled: the path from the leaf linked by issuer signatures through
    /// everything the evaluation knows.
    private func linkedBySignatures() -> VerifiedPath {
        let pool = untrusted + policy.anchors.certificates + plan.pinSets.flatMap(\.pinnedCertificates)
        return VerifiedPath(SignatureChain.path(from: leaf, through: pool, maximumDepth: policy.maximumChainDepth), anchoring: .signaturesOnly)
    }

    /// Certificate Transparency is judged, as revocation is, on the path verified against the
    /// anchors whatever the pinning mode: a pin says nothing about whether a CA logged the
    /// certificate, and the leaf's issuer (whose key hash a log signed) is the anchors' path's.
    /// A path to a private anchor (or, chain validation disabled, to no anchor) is exempt unless
    /// the requirement's scope says every anchor.
    private mutating func judgeTransparency(_ requirement: CertificateTransparency.Requirement, logs: CertificateTransparency.Logs,
                                            on anchorsPath: VerifiedPath) {
        let issuer = anchorsPath.certificates.count > 1 ? anchorsPath.certificates[1] : nil
        var assessment = CertificateTransparency.assess(leaf: leaf, issuer: issuer, additionalSCTs: presentedSCTs,
                                                        policy: requirement.policy, logs: logs, at: time)
        if requirement.scope == .publiclyTrustedAnchors {
            let exemption: String? = switch anchorsPath.anchoring {
            case .trustAnchor: anchorsPath.certificates.last.flatMap { policy.anchors.isPrivateAnchor($0) ? "the path ends at a private anchor (\($0.subject)), which browsers do not hold to CT" : nil }
            case .pinnedCertificate, .signaturesOnly: "the chain was not verified against the anchors, so no public anchor makes CT apply"
            }
            if let exemption { assessment = assessment.exempt(exemption) }
        }
        transparency = assessment
        let policyName = requirement.policy.rawValue
        switch assessment.compliance {
        case .compliant, .notApplicable: break
        case .notCompliant(let why):
            let reason = Reason(.ctNotCompliant, "not compliant with the \(policyName) CT policy: \(why)", requirement: .certificateTransparency)
            if requirement.enforcement == .enforce { found.fail(reason) } else { warn(.ctNotCompliant, reason.message + " (report-only)", requirement: .certificateTransparency) }
        case .unenforceable(let why):
            let reason = Reason(.ctUnenforceable, "the \(policyName) CT policy cannot be enforced: \(why)", requirement: .certificateTransparency)
            if requirement.enforcement == .enforce, requirement.whenUnenforceable == .fail { found.fail(reason) }
            else { warn(.ctUnenforceable, reason.message + " (allowed)", requirement: .certificateTransparency) }
        }
    }

    /// Revocation is judged on the path verified against the anchors, whatever the pinning mode:
    /// a certificate-pinned leaf is a path of one, which names no issuer to check a staple or a
    /// CRL against, and a pin says nothing about revocation. With chain validation disabled the
    /// path linked by signatures stands in (OpenSSL has applied no CRL to it, so that is done here).
    private mutating func judgeRevocation(_ staple: StapledOCSPCheck, on revocationPath: VerifiedPath) {
        if revocationPath.anchoring != .trustAnchor, !policy.revocationLists.isEmpty {
            checkRevocationLists(on: revocationPath.certificates)
        }
        var findings = PathFindings()
        staple.run(PathCheckInput(path: revocationPath, servedChain: served, peer: peer, time: time), into: &findings)
        if let settings = policy.revocation.distributionPointCRLs {
            DistributionPointCheck(settings: settings, maximumAge: policy.revocation.maximumResponseAge, fetched: fetchedLists)
                .check(path: revocationPath.certificates, time: time, into: &findings.failures, warnings: &findings.warnings,
                       statuses: &revocationStatuses)
        }
        self.revocationPath = revocationPath.certificates
        findings.failures.forEach { found.fail($0) }
        findings.warnings.forEach { found.warn($0) }
    }

    /// The supplied CRLs over a path OpenSSL did not verify (chain validation disabled): the path
    /// is verified once more, ending at its own top, and only the revocation findings count.
    private mutating func checkRevocationLists(on linked: [Certificate]) {
        guard let top = linked.last, let only = try? TrustAnchors(certificates: [top]) else { return }
        let outcome = ChainVerifier.verify(ChainVerificationRequest(
            leaf: leaf, untrusted: Array(linked.dropFirst().dropLast()), anchors: only, peer: nil, time: time,
            allowPartialChain: true, maximumDepth: policy.maximumChainDepth,
            purpose: policy.purpose, revocationLists: policy.revocationLists, revocationScope: policy.revocationScope,
            strictRules: .warningsOnly))
        for error in outcome.errors {
            switch error.kind {
            case .revoked, .revocationUnknown: found.fail(error.reason(at: time, purpose: policy.purpose))
            default: break
            }
        }
    }

    /// "pin set for PATTERN", or "pins" for a lone policy.
    private var pinsNoun: String { plan.scope.map { "pin set for \($0)" } ?? "pins" }
    /// "the pin set for PATTERN", or "the pins".
    private var pinsName: String { "the \(pinsNoun)" }

    /// Whether the chain verifies to one of the pin-override anchors (asked once, and only when
    /// an enforced pin set failed on its pins alone).
    private mutating func pinsOverridden(_ known: inout Bool?) -> Bool {
        if let known { return known }
        guard let anchors = plan.pinOverrideAnchors else { known = false; return false }
        var overriding = plan.validation
        overriding.anchors = anchors
        overriding.chainValidation = .required
        var nested = Run(plan: EvaluationPlan(validation: overriding, pinSets: []), served: served, leaf: leaf, time: time,
                         staple: nil, tracksConsulted: tracksConsulted)
        nested.peer = peer
        nested.decide()
        consulted += nested.consulted
        known = nested.found.failures.isEmpty
        return known!
    }

    /// The path checks' findings for a path, computed once per path.
    private mutating func pathFindings(_ path: VerifiedPath) -> PathFindings {
        if let known = checked.first(where: { $0.path.certificates == path.certificates && $0.path.anchoring == path.anchoring }) {
            return known.findings
        }
        var findings = PathFindings()
        let checks = plan.checks
        guard !checks.isEmpty else { return findings }
        var input = PathCheckInput(path: path, servedChain: served, peer: peer, time: time)
        input.anchorIsPrivate = switch path.anchoring {
        case .trustAnchor: path.certificates.last.map(policy.anchors.isPrivateAnchor) ?? false
        case .pinnedCertificate, .signaturesOnly: true
        }
        for check in checks.profile { check.run(input, into: &findings) }
        if !validatesChain, !findings.failures.isEmpty {
            // Chain validation is disabled: the pins (and the name) decide, and the profile only informs.
            findings.warnings += findings.failures.map {
                $0.rephrased("\($0.message) (not counted: chain validation is disabled)")
            }
            findings.failures = []
        }
        for check in checks.policy { check.run(input, into: &findings) }
        checked.append((path, findings))
        return findings
    }

    /// Runs the path checks on a candidate path.
    private mutating func passesPathChecks(_ chain: [Certificate]) -> Bool {
        plan.checks.isEmpty || pathFindings(VerifiedPath(chain, anchoring: .trustAnchor)).failures.isEmpty
    }

    private mutating func consult(_ outcome: ChainVerification) {
        guard tracksConsulted else { return }
        consulted += outcome.builtChain
        for error in outcome.errors { if let certificate = error.certificate { consulted.append(certificate) } }
    }

    /// OpenSSL's strict-rule findings on a chosen path, as warnings.
    private mutating func tolerate(_ outcome: ChainVerification) {
        ChainReasons.tolerated(outcome).forEach { found.warn($0) }
    }

    /// Steps 2–3: OpenSSL verification against the policy's anchors. Records failures; returns the path.
    private mutating func verifyAgainstAnchors() -> VerifiedPath? {
        let request = ChainVerificationRequest(
            leaf: leaf, untrusted: untrusted, anchors: policy.anchors, peer: peer, time: time,
            allowPartialChain: false, maximumDepth: policy.maximumChainDepth,
            purpose: policy.purpose, revocationLists: policy.revocationLists, revocationScope: policy.revocationScope)
        let outcome = ChainVerifier.verify(request)
        consult(outcome)
        if outcome.succeeded, passesPathChecks(outcome.builtChain) {
            tolerate(outcome)
            return VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
        }
        // OpenSSL stops at the first path it builds. When that one fails (or fails the policy's
        // own checks), try the other paths to the caller's anchors, each forced on OpenSSL by
        // offering only its intermediates and its anchor. The system store cannot be enumerated.
        var reachedAnchor: [ChainVerificationError]? = nil
        if let alternate = alternatePath(request, avoiding: outcome.builtChain, reachedAnchor: &reachedAnchor) { return alternate }
        guard outcome.succeeded else {
            // OpenSSL's path reached no anchor but a path forced onto one did: that one's errors
            // say why (an intermediate anchor for the wrong host is a name mismatch, not an unknown issuer).
            let reachedNone = outcome.errors.contains(where: \.isMissingIssuer)
            recordChainErrors(reachedNone ? reachedAnchor ?? outcome.errors : outcome.errors)
            return nil
        }
        // The path verified but fails the policy's checks: they say why, after the pins.
        tolerate(outcome)
        return VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
    }

    /// The first path to one of the caller's anchors that verifies and passes the path checks.
    /// `reachedAnchor` gets the errors of the first forced path that reached its anchor and failed.
    private mutating func alternatePath(_ request: ChainVerificationRequest, avoiding chosen: [Certificate],
                                        reachedAnchor: inout [ChainVerificationError]?) -> VerifiedPath? {
        guard !policy.anchors.certificates.isEmpty else { return nil }
        let candidates = PathCandidates.enumerate(
            leaf: leaf, pool: untrusted, anchors: policy.anchors.certificates, maximumDepth: policy.maximumChainDepth)
        for candidate in candidates {
            guard let anchor = candidate.last, let only = try? TrustAnchors(certificates: [anchor]) else { continue }
            // Any certificate the caller trusts ends a path, as in Chromium, Firefox, Go and
            // rustls: an intermediate given as anchor needs no root above it. The store holds only
            // this anchor, so a partial chain can end nowhere else. A root goes through OpenSSL's
            // own checks, which refuse one whose authorityKeyIdentifier names another issuer.
            let partial = !anchor.handle.isRoot
            // OpenSSL's own choice, run again the same way, would fail the same way, unless
            // another anchor has the same name: OpenSSL looks issuers up by name and stops at the
            // first (two developers' CN=localhost certificates in one bundle), so with only this
            // anchor in the store the same path can verify.
            let sameNamed = policy.anchors.certificates.contains { $0 != anchor && $0.subject == anchor.subject }
            if candidate == chosen, !partial, !sameNamed { continue }
            var forced = request
            forced.untrusted = Array(candidate.dropFirst().dropLast())
            forced.anchors = only
            forced.allowPartialChain = partial
            let outcome = ChainVerifier.verify(forced)
            consult(outcome)
            if outcome.succeeded, passesPathChecks(outcome.builtChain) {
                tolerate(outcome)
                return VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
            }
            if reachedAnchor == nil, !outcome.succeeded, !outcome.errors.contains(where: \.isMissingIssuer) {
                reachedAnchor = outcome.errors
            }
        }
        return nil
    }

    // MARK: Reasons

    private mutating func recordChainErrors(_ errors: [ChainVerificationError]) {
        ChainReasons.failures(errors, leaf: leaf, peer: peer, time: time, purpose: policy.purpose).forEach { found.fail($0) }
    }
}
