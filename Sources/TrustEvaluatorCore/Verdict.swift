import FoundationEssentials

/// What an evaluation found: trusted or not, every reason, the verified path, the served chain,
/// which rule applied and the reports that are due. The engine says what happened; what a TLS
/// stack does about it is decided in one place, `ServerTrust`'s `Disposition(for:)`.
///
/// ``isTrusted`` is true exactly when ``failures`` is empty, so a rejection always carries its reasons.
public struct Verdict: Sendable {
    /// Every reason the chain was rejected; empty when trusted.
    public var failures: [Reason] { judgement.failures }
    /// Things worth knowing that did not change the outcome.
    public var warnings: [Reason] { judgement.warnings }
    /// The path the decision was made on (and the only chain pins were matched against), when one was built.
    public var verifiedPath: VerifiedPath? { judgement.verifiedPath }
    /// The certificates the peer sent, in the order sent.
    public let servedChain: [Certificate]
    /// The normalised name or address that was checked; `nil` when no name was checked.
    public var checkedHost: String? { judgement.checkedHost }
    /// The pins that matched, with the depth of the certificate each matched in the verified path.
    public var matchedPins: [PinMatch] { isTrusted ? judgement.pinsFound : [] }
    /// The time the chain was judged at.
    public let evaluationTime: Date
    /// Pin mismatches of report-only pin sets: they did not count against the chain, and a
    /// report is due for each evaluation that has them.
    public var reportOnlyFailures: [Reason] { judgement.reportOnlyFailures }
    /// Which rule applied: a host policy, the one policy for every host, or an unlisted host's.
    public var coverage: Coverage { judgement.coverage }
    /// The host policy that applied (``Coverage/hostPolicy`` and ``Coverage/pinSetExpired``).
    public var hostPolicy: HostPolicy? { judgement.hostPolicy }
    /// Pin validation failure reports due to the host policy's report URIs (RFC 7469 §3).
    public let reports: [PinFailureReport]
    /// The path built to the anchors even when the verdict is a rejection (the report's validated chain).
    package var builtPath: VerifiedPath? { judgement.builtPath }
    /// The enforced pins found on the path, whatever the outcome: a chain refused for another
    /// reason (revoked, expired) still shows which pin holds it, for the tools that describe a
    /// configuration (`pincheck audit`, `plan`). Empty when no pin matched or the chain was
    /// refused before its pins were compared (``pinsCompared``).
    package var pinsFound: [PinMatch] { judgement.pinsFound }
    /// False when the chain was refused before any pin was compared with it (no path to the anchors).
    package var pinsCompared: Bool { isTrusted || judgement.pinsCompared }

    /// What was found about the certificates, shared by every reuse of the verdict (a verdict-cache
    /// hit copies one reference, not every reason, path and policy).
    private let judgement: Judgement

    private final class Judgement: Sendable {
        let failures: [Reason]
        let warnings: [Reason]
        let verifiedPath: VerifiedPath?
        let checkedHost: String?
        let pinsFound: [PinMatch]
        let reportOnlyFailures: [Reason]
        let builtPath: VerifiedPath?
        let coverage: Coverage
        let hostPolicy: HostPolicy?
        let revocationStatuses: [RevocationStatus]
        let revocationPath: [Certificate]?
        let certificateTransparency: CertificateTransparency.Assessment?
        let pinsCompared: Bool
        let rootPrograms: RootProgramAnswer?

        init(
            failures: [Reason], warnings: [Reason], verifiedPath: VerifiedPath?, checkedHost: String?,
            pinsFound: [PinMatch], reportOnlyFailures: [Reason], builtPath: VerifiedPath?, coverage: Coverage, hostPolicy: HostPolicy?,
            revocationStatuses: [RevocationStatus], revocationPath: [Certificate]?, certificateTransparency: CertificateTransparency.Assessment?,
            pinsCompared: Bool, rootPrograms: RootProgramAnswer?
        ) {
            self.pinsCompared = pinsCompared
            self.rootPrograms = rootPrograms
            self.revocationStatuses = revocationStatuses
            self.certificateTransparency = certificateTransparency
            self.revocationPath = revocationPath
            self.failures = failures
            self.warnings = warnings
            self.verifiedPath = verifiedPath
            self.checkedHost = checkedHost
            self.pinsFound = pinsFound
            self.reportOnlyFailures = reportOnlyFailures
            self.builtPath = builtPath
            self.coverage = coverage
            self.hostPolicy = hostPolicy
        }
    }

    /// Which rule of a ``TrustManager`` applied to the host.
    public enum Coverage: String, Sendable, Hashable {
        /// A host policy (``Verdict/hostPolicy``) matched and its pins applied.
        case hostPolicy
        /// One policy applies to every host (an ``Evaluator``, ``TrustManager/single(_:certificateCache:verdictCache:diagnostics:)``).
        case everyHost
        /// No policy matched and unlisted hosts are allowed: default validation ran.
        case unlistedDefaultValidation
        /// No policy matched and unlisted hosts are refused (``Reason/Code/hostNotListed``).
        case unlistedRefused
        /// A host policy matched, but all its pin sets have expired: default validation ran.
        case pinSetExpired
    }

    /// True when every check that counts passed.
    public var isTrusted: Bool { failures.isEmpty }

    /// What each CRL distribution point said about the certificates of the verified path, good
    /// answers included (empty when the policy checks none, or the chain was refused first).
    public var revocationStatuses: [RevocationStatus] { judgement.revocationStatuses }
    /// What the policy's Certificate Transparency requirement made of the leaf's SCTs: each SCT,
    /// verified or why not, and the policy's answer (`nil` when the policy requires no CT, or the
    /// chain was refused before CT was judged).
    public var certificateTransparency: CertificateTransparency.Assessment? { judgement.certificateTransparency }
    /// What the root programs say of the anchor the judged path ends at, and which data said it
    /// (`nil` when the chain was refused before it was judged).
    public var rootPrograms: RootProgramAnswer? { judgement.rootPrograms }

    /// The root programs' word on a verdict's anchor.
    public struct RootProgramAnswer: Sendable, Hashable {
        /// The program root the path ends at; nil when no program has it.
        public let anchor: RootPrograms.Root?
        /// Whether the anchor counted as public (Baseline Requirements rows and CT's
        /// `public-anchors` scope applied): by membership, unless the anchors were declared.
        public let anchorIsPublic: Bool
        /// The data the answer came from.
        public let sources: [RootPrograms.Source]
    }

    /// The path revocation was judged on: the anchors' path, or the one linked by signatures.
    var revocationPath: [Certificate]? { judgement.revocationPath }

    /// The same judgement of byte-equal certificates at another time inside its validity window.
    func reused(at time: Date, servedChain: [Certificate]) -> Verdict {
        Verdict(judgement: judgement, servedChain: servedChain, evaluationTime: time, reports: [])
    }

    /// This verdict with the failure reports that are due.
    func adding(reports: [PinFailureReport]) -> Verdict {
        Verdict(judgement: judgement, servedChain: servedChain, evaluationTime: evaluationTime, reports: reports)
    }

    private init(judgement: Judgement, servedChain: [Certificate], evaluationTime: Date, reports: [PinFailureReport]) {
        self.judgement = judgement
        self.servedChain = servedChain
        self.evaluationTime = evaluationTime
        self.reports = reports
    }

    init(
        failures: [Reason], warnings: [Reason], verifiedPath: VerifiedPath?, servedChain: [Certificate],
        checkedHost: String?, pinsFound: [PinMatch], evaluationTime: Date,
        reportOnlyFailures: [Reason] = [], builtPath: VerifiedPath? = nil, coverage: Coverage = .everyHost,
        hostPolicy: HostPolicy? = nil, reports: [PinFailureReport] = [], revocationStatuses: [RevocationStatus] = [],
        revocationPath: [Certificate]? = nil, certificateTransparency: CertificateTransparency.Assessment? = nil,
        pinsCompared: Bool = false, rootPrograms: RootProgramAnswer? = nil
    ) {
        judgement = Judgement(
            failures: failures, warnings: warnings, verifiedPath: verifiedPath, checkedHost: checkedHost,
            pinsFound: pinsFound, reportOnlyFailures: reportOnlyFailures,
            builtPath: builtPath ?? verifiedPath,
            coverage: coverage, hostPolicy: hostPolicy, revocationStatuses: revocationStatuses,
            revocationPath: revocationPath, certificateTransparency: certificateTransparency,
            pinsCompared: pinsCompared, rootPrograms: rootPrograms)
        self.servedChain = servedChain
        self.evaluationTime = evaluationTime
        self.reports = reports
    }
}

/// A pin that matched a certificate of the verified path.
public struct PinMatch: Sendable, Hashable {
    /// The pin as configured (for certificate pinning, the key pin of the pinned certificate).
    public let pin: PublicKeyPin
    /// Position in the verified path, 0 = leaf.
    public let depth: Int
    /// The certificate that matched.
    public let certificate: Certificate
}

/// A chain the evaluator built and verified. Only the evaluator can make one.
public struct VerifiedPath: Sendable, RandomAccessCollection {
    /// What ended the path.
    public enum Anchoring: String, Sendable, Hashable {
        /// A trust anchor of the policy (the system store or the caller's anchors).
        case trustAnchor = "trust-anchor"
        /// A pinned certificate (certificate pinning re-anchors the path on the pins).
        case pinnedCertificate = "pinned-certificate"
        /// Nothing: chain validation was disabled, and the path only follows issuer signatures from the leaf.
        case signaturesOnly = "signatures-only"
    }

    /// The certificates, leaf first.
    public let certificates: [Certificate]
    /// What ended the path.
    public let anchoring: Anchoring

    init(_ certificates: [Certificate], anchoring: Anchoring) {
        self.certificates = certificates
        self.anchoring = anchoring
    }

    public var startIndex: Int { certificates.startIndex }
    public var endIndex: Int { certificates.endIndex }
    public subscript(position: Int) -> Certificate { certificates[position] }
}

extension Verdict {
    /// The verdict of a road shown the leaf alone when the policy's CRLs must be checked and
    /// cannot be (`revocation.crl-unavailable`): the leaf's issuer, which a CRL is verified with,
    /// could not be found or did not verify to the anchors.
    package static func leafOnlyRevocationUnavailable(leaf: Certificate, why: String, at time: Date, road: String) -> Verdict {
        let reason = Reason(.crlUnavailable, "the revocation status of \(leaf.subject) is unavailable (\(road)): \(why)", requirement: .revocation)
        return Verdict(
            failures: [reason], warnings: [], verifiedPath: nil, servedChain: [leaf], checkedHost: nil,
            pinsFound: [], evaluationTime: time, pinsCompared: false)
    }
}
