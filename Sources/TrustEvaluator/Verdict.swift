import FoundationEssentials

/// What an evaluation found: trusted or not, every reason, the verified path and the served chain.
///
/// ``isTrusted`` is true exactly when ``failures`` is empty, so a rejection always carries its reasons.
public struct Verdict: Sendable {
    /// Every reason the chain was rejected; empty when trusted.
    public let failures: [Reason]
    /// Things worth knowing that did not change the outcome.
    public let warnings: [Reason]
    /// The path the decision was made on (and the only chain pins were matched against), when one was built.
    public let verifiedPath: VerifiedPath?
    /// The certificates the peer sent, in the order sent.
    public let servedChain: [Certificate]
    /// The normalised name or address that was checked; `nil` when no name was checked.
    public let checkedHost: String?
    /// The pins that matched, with the depth of the certificate each matched in the verified path.
    public let matchedPins: [PinMatch]
    /// The time the chain was judged at.
    public let evaluationTime: Date

    /// True when every check passed.
    public var isTrusted: Bool { failures.isEmpty }

    /// The same judgement of byte-equal certificates at another time inside its validity window.
    func reused(at time: Date, servedChain: [Certificate]) -> Verdict {
        Verdict(failures: failures, warnings: warnings, verifiedPath: verifiedPath, servedChain: servedChain,
                checkedHost: checkedHost, matchedPins: matchedPins, evaluationTime: time)
    }

    init(failures: [Reason], warnings: [Reason], verifiedPath: VerifiedPath?, servedChain: [Certificate],
         checkedHost: String?, matchedPins: [PinMatch], evaluationTime: Date) {
        self.failures = failures
        self.warnings = warnings
        self.verifiedPath = verifiedPath
        self.servedChain = servedChain
        self.checkedHost = checkedHost
        self.matchedPins = matchedPins
        self.evaluationTime = evaluationTime
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
