import FoundationEssentials

/// A judgement over a path that has been built and verified, run after OpenSSL's verification:
/// the place for checks OpenSSL does not make (a stricter Web PKI profile, revocation, …).
///
/// One check per file; a policy's checks compose all-of (every check runs, every failure counts).
/// Adding a check is one file and one line where the policy assembles its checks.
protocol PathCheck: Sendable {
    /// Adds failures and warnings about `input.path` to `findings`.
    func check(_ input: PathCheckInput, into findings: inout PathFindings)

    /// True when the outcome can change with the verification time in ways certificate and CRL
    /// validity do not capture; verdicts of such policies are never cached (``VerdictCache``).
    var dependsOnVerificationTime: Bool { get }

    /// The requirement the check serves: every reason it gives carries it.
    var requirement: Reason.Requirement { get }
}

extension PathCheck {
    var dependsOnVerificationTime: Bool { false }
    var requirement: Reason.Requirement { .profile }

    /// Runs the check with findings that carry its requirement, and adds them to `findings`.
    func run(_ input: PathCheckInput, into findings: inout PathFindings) {
        var own = PathFindings(requirement: requirement)
        check(input, into: &own)
        findings.failures += own.failures
        findings.warnings += own.warnings
    }
}

/// What a ``PathCheck`` looks at: plain values, so most checks need no OpenSSL.
struct PathCheckInput {
    /// The verified path, leaf first.
    let path: VerifiedPath
    /// What the peer sent.
    let servedChain: [Certificate]
    /// The name the leaf had to carry, if one was checked.
    let peer: PeerName?
    /// The verification time.
    let time: Date
    /// Whether the path ends at a private anchor (one in no root program, unless the anchors were
    /// declared; a pinned certificate): Baseline Requirements rows that no verifier enforces
    /// are warnings there (``TrustAnchors/Classification``).
    var anchorIsPrivate: Bool = false

    /// Where a Baseline Requirements finding that no verifier enforces goes: a failure on the Web
    /// PKI, a warning under a private anchor.
    func baselineRequirement(_ code: Reason.Code, _ message: String, into findings: inout PathFindings) {
        if anchorIsPrivate {
            findings.warn(code, "\(message) (a warning: the path ends at a private anchor, where the CA/Browser Forum's rules do not apply)")
        } else {
            findings.fail(code, message)
        }
    }
}

/// What the checks found, each reason carrying the requirement of the check that found it.
struct PathFindings {
    var failures: [Reason] = []
    var warnings: [Reason] = []
    /// The requirement of the check these findings are for (``PathCheck/run(_:into:)`` sets it).
    let requirement: Reason.Requirement

    init(requirement: Reason.Requirement = .profile) {
        self.requirement = requirement
    }

    mutating func fail(_ code: Reason.Code, _ message: String, evidence: Evidence = Evidence()) {
        failures.append(Reason(code, message, evidence: evidence, requirement: requirement))
    }

    mutating func warn(_ code: Reason.Code, _ message: String, evidence: Evidence = Evidence()) {
        warnings.append(Reason(code, message, evidence: evidence, requirement: requirement))
    }
}

/// A policy's path checks in their two kinds.
struct PathChecks: Sendable {
    /// The certificate profile's checks (``ValidationPolicy/Profile``): with chain validation disabled
    /// their failures are warnings, since the pins decide then.
    var profile: [any PathCheck]
    /// Checks the policy asked for, which decide whatever the chain validation.
    var policy: [any PathCheck]

    var isEmpty: Bool { profile.isEmpty && policy.isEmpty }
    var dependsOnVerificationTime: Bool {
        profile.contains { $0.dependsOnVerificationTime } || policy.contains { $0.dependsOnVerificationTime }
    }
}
