import FoundationEssentials

/// Failures and warnings, each said once: a finding met on two paths (the anchors' and a pin
/// set's, say) is the same reason, evidence and all.
struct Findings {
    var failures: [Reason] = []
    var warnings: [Reason] = []

    mutating func fail(_ reason: Reason) {
        if !failures.contains(reason) { failures.append(reason) }
    }

    mutating func warn(_ reason: Reason) {
        if !warnings.contains(reason) { warnings.append(reason) }
    }
}

/// The state of one evaluation: what the plan's checks have established so far, and what they found.
struct EvaluationRun {
    /// What a check tells the run.
    enum Next { case next, stop }

    let plan: EvaluationPlan
    let served: [Certificate]
    let leaf: Certificate
    let time: Date
    /// The staple and its rules.
    let staple: StapledOCSPCheck
    /// The name the leaf must carry; nil when none was given or name validation is disabled.
    let peer: PeerName?
    /// The served certificates after the leaf, then the policy's intermediates.
    let untrusted: [Certificate]
    /// Whether to collect ``consulted`` (only a verdict cache needs it).
    let tracksConsulted: Bool

    /// What counts.
    var found = Findings()
    /// Pin mismatches of report-only pin sets: recorded, not counted.
    var reportOnly: [Reason] = []
    /// The plan's pin sets that have expired at the verification time (by index).
    var expiredPinSets: Set<Int> = []
    /// The path verified against the anchors (or, chain validation disabled, linked by signatures).
    var basePath: VerifiedPath?
    /// The path the verdict is about: the anchors' path, or the path re-anchored on pinned certificates.
    var path: VerifiedPath?
    var matches: [PinMatch] = []
    /// The path each pin set matched on, by the set's index (only sets that matched).
    var matchedPaths: [Int: VerifiedPath] = [:]
    /// Whether some pin set was compared with a path (false when the chain failed before).
    var pinsCompared = false
    /// Whether the chain verifies to Android's override anchors: asked once, and only when an
    /// enforced pin set failed on its pins alone.
    var pinsOverridden: Bool?
    /// CRLs fetched from distribution points for this evaluation (nil: none were fetched).
    var fetchedLists: FetchedRevocationLists?
    /// What the distribution points said.
    var revocationStatuses: [RevocationStatus] = []
    /// The path revocation and CT are judged on: the anchors' path, or the one linked by signatures.
    var revocationPath: VerifiedPath?
    /// The CT logs this evaluation judges with, read once from the requirement.
    var transparencyLogs: CertificateTransparency.Logs?
    /// Their generation, which a kept verdict is keyed by.
    var transparencyLogGeneration: UInt64 = 0
    /// The SCTs of the TLS extension alone (a verdict that relied on them is not kept).
    var presentedSCTsFromExtension: [SignedCertificateTimestamp] = []
    /// Whether a check stopped the run (later ones run only if they run regardless); kept across
    /// a pause for distribution-point CRLs.
    var stopped = false
    /// What the Certificate Transparency requirement found, when the policy has one.
    var transparency: CertificateTransparency.Assessment?
    /// What the root programs say of the anchor (``RootProgramDistrustCheck``).
    var rootProgramAnswer: Verdict.RootProgramAnswer?
    /// Instants at which a check's answer changes with the verification time alone (a root
    /// program's removal known from its data's date): a cached verdict is not reused across them.
    var timeBoundaries: [Date] = []
    /// SCTs the peer sent outside the certificate: the TLS extension's and the staple's.
    var presentedSCTs: [SignedCertificateTimestamp] = []
    /// Certificates the verifier built paths from (besides the served ones): the validity of each
    /// bounds how long the verdict may be reused.
    var consulted: [Certificate] = []
    /// The path checks' findings for paths already checked (while choosing one, say).
    private var checked: [(path: VerifiedPath, findings: PathFindings)] = []

    init(plan: EvaluationPlan, served: [Certificate], peer: PeerName?, time: Date, staple: StapledOCSPCheck, tracksConsulted: Bool) {
        self.plan = plan
        self.served = served
        self.leaf = served[0]
        self.peer = peer
        self.time = time
        self.staple = staple
        self.tracksConsulted = tracksConsulted
        self.untrusted = Array(served.dropFirst()) + plan.validation.additionalIntermediates
    }

    var policy: ValidationPolicy { plan.validation }

    var validatesChain: Bool { policy.validatesChain }

    /// The plan's pin sets that have not expired.
    var activePinSets: [PinSet] {
        plan.pinSets.enumerated().filter { !expiredPinSets.contains($0.offset) }.map(\.element)
    }

    /// Runs the plan's checks.
    mutating func decide() {
        EvaluationPlan.run(plan.checks[...], on: &self)
    }

    mutating func warn(_ code: Reason.Code, _ message: String, evidence: Evidence = Evidence(), requirement: Reason.Requirement) {
        found.warn(Reason(code, message, evidence: evidence, requirement: requirement))
    }

    func verdict() -> Verdict {
        let trusted = found.failures.isEmpty
        let allPinSetsExpired = !plan.pinSets.isEmpty && expiredPinSets.count == plan.pinSets.count
        return Verdict(
            failures: found.failures, warnings: found.warnings, verifiedPath: trusted ? path : nil,
            servedChain: served, checkedHost: peer?.text, pinsFound: matches,
            evaluationTime: time, reportOnlyFailures: reportOnly, builtPath: basePath ?? path,
            coverage: plan.coverage == .hostPolicy && allPinSetsExpired ? .pinSetExpired : plan.coverage,
            hostPolicy: plan.hostPolicy, revocationStatuses: revocationStatuses,
            revocationPath: revocationPath?.certificates, certificateTransparency: transparency, pinsCompared: pinsCompared,
            rootPrograms: rootProgramAnswer)
    }

    /// "pin set for PATTERN", or "pins" for a lone policy.
    var pinsNoun: String { plan.scope.map { "pin set for \($0)" } ?? "pins" }
    /// "the pin set for PATTERN", or "the pins".
    var pinsName: String { "the \(pinsNoun)" }

    /// With chain validation disabled: the path from the leaf linked by issuer signatures through
    /// everything the evaluation knows.
    func linkedBySignatures() -> VerifiedPath {
        let pool = untrusted + policy.anchors.certificates + plan.pinSets.flatMap(\.pinnedCertificates)
        return VerifiedPath(SignatureChain.path(from: leaf, through: pool, maximumDepth: policy.maximumChainDepth), anchoring: .signaturesOnly)
    }

    /// The path checks' findings for a path, computed once per path.
    mutating func pathFindings(_ path: VerifiedPath) -> PathFindings {
        if let known = checked.first(where: { $0.path.certificates == path.certificates && $0.path.anchoring == path.anchoring }) {
            return known.findings
        }
        var findings = PathFindings()
        let checks = plan.pathChecks
        guard !checks.isEmpty else { return findings }
        var input = PathCheckInput(path: path, servedChain: served, peer: peer, time: time)
        input.anchorIsPrivate =
            switch path.anchoring {
            case .trustAnchor: path.certificates.last.map { policy.anchors.isPrivateAnchor($0, programs: policy.rootPrograms.data) } ?? false
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

    /// Remembers the certificates a verification built paths from.
    mutating func consult(_ outcome: ChainVerification) {
        guard tracksConsulted else { return }
        consulted += outcome.builtChain
        for error in outcome.errors { if let certificate = error.certificate { consulted.append(certificate) } }
    }
}
