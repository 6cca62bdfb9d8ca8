import FoundationEssentials

/// Why a chain was rejected, or what deserves a warning, with the evidence behind it.
public struct Reason: Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable code such as `chain.expired` or `pin.mismatch`.
    /// New codes may be added in later versions.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable, Hashable, CaseIterable {
            // Chain verification (OpenSSL).
            case expired = "chain.expired"
            case notYetValid = "chain.not-yet-valid"
            case selfSigned = "chain.self-signed"
            case untrustedRoot = "chain.untrusted-root"
            case unknownIssuer = "chain.unknown-issuer"
            case invalidCA = "chain.invalid-ca"
            case pathLengthExceeded = "chain.path-length-exceeded"
            case wrongPurpose = "chain.wrong-purpose"
            case badSignature = "chain.bad-signature"
            case tooLong = "chain.too-long"
            case nameConstraints = "chain.name-constraints"
            case invalid = "chain.invalid"
            case unsupportedAlgorithm = "chain.unsupported-algorithm"
            case revoked = "revocation.revoked"
            case revocationUnknown = "revocation.unknown"
            case keyUsage = "chain.key-usage"
            case profileViolation = "chain.profile-violation"
            case chainNotValidated = "chain.not-validated"
            case rootDistrusted = "chain.root-distrusted"
            // Names.
            case hostMismatch = "host.mismatch"
            case ipAddressMismatch = "host.ip-mismatch"
            case identityMismatch = "identity.mismatch"
            case trustDomainMissing = "identity.trust-domain-missing"
            case trustDomainUnknown = "identity.trust-domain-unknown"
            case trustDomainMismatch = "identity.trust-domain-mismatch"
            case hostNotChecked = "host.not-checked"
            // Pins.
            case pinMismatch = "pin.mismatch"
            case noUsablePins = "pin.none-usable"
            case pinOutsideVerifiedPath = "pin.outside-verified-path"
            case weakPin = "pin.weak-algorithm"
            // Policy.
            case selfSignedRequiresPinning = "policy.self-signed-requires-pinning"
            // Per-host policies.
            case hostNotListed = "policy.host-not-listed"
            case pinSetExpired = "pin.set-expired"
            case noBackupPin = "pin.no-backup"
            case reportOnlyFailure = "pin.report-only-failure"
            case leafPinExpiring = "pin.leaf-expiring"
            // How the peer is set up (advisories a caller asks for).
            case incompleteChain = "served.incomplete-chain"
            case notStapled = "ocsp.not-stapled"
            case publicClientAnchor = "anchor.public-client-root"
            // Revocation.
            case ocspStatusUnknown = "revocation.ocsp-unknown"
            case stapleUnusable = "revocation.staple-unusable"
            case stapleMissing = "revocation.staple-missing"
            case crlNotCovered = "revocation.crl-not-covered"
            case crlUnavailable = "revocation.crl-unavailable"
            case crlStale = "revocation.crl-stale"
            case crlPointsIgnored = "revocation.crl-points-ignored"
            // Certificate Transparency.
            case ctNotCompliant = "ct.not-compliant"
            case ctUnenforceable = "ct.unenforceable"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// Every code there is (the Reason codes article's list is checked against it).
        static var all: [Code] { Base.allCases.map(Code.init) }

        public var description: String { base.rawValue }

        /// A certificate of the path is past its notAfter date.
        public static let expired = Code(.expired)
        /// A certificate of the path is before its notBefore date.
        public static let notYetValid = Code(.notYetValid)
        /// The leaf is self-signed and not a trust anchor.
        public static let selfSigned = Code(.selfSigned)
        /// The path ends at a self-signed root that is not a trust anchor.
        public static let untrustedRoot = Code(.untrustedRoot)
        /// No path to a trust anchor (an intermediate missing, or a foreign CA).
        public static let unknownIssuer = Code(.unknownIssuer)
        /// A certificate acting as a CA is not allowed to (basicConstraints, keyUsage).
        public static let invalidCA = Code(.invalidCA)
        /// A CA's pathLenConstraint is violated.
        public static let pathLengthExceeded = Code(.pathLengthExceeded)
        /// A certificate is not valid for TLS server authentication (extendedKeyUsage).
        public static let wrongPurpose = Code(.wrongPurpose)
        /// A signature in the path does not verify.
        public static let badSignature = Code(.badSignature)
        /// The path is longer than the policy's maximum depth.
        public static let tooLong = Code(.tooLong)
        /// A name is outside a CA's name constraints.
        public static let nameConstraints = Code(.nameConstraints)
        /// A certificate of the path is revoked: listed on a supplied CRL, or by a stapled OCSP response that verifies.
        public static let revoked = Code(.revoked)
        /// CRLs were supplied but none covers a certificate, or one could not be used.
        public static let revocationUnknown = Code(.revocationUnknown)
        /// A certificate of the path breaks the strict Web PKI profile (``ValidationPolicy/Profile``).
        public static let profileViolation = Code(.profileViolation)
        /// The leaf's keyUsage does not allow a usage the policy requires.
        public static let keyUsage = Code(.keyUsage)
        /// Any other verification error; the evidence carries OpenSSL's code and text.
        public static let invalid = Code(.invalid)
        /// A key or signature algorithm of the chain that the linked OpenSSL cannot verify (ML-DSA
        /// or SLH-DSA before OpenSSL 3.5): the message names it and the OpenSSL version.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The path ends at a root a browser's root program no longer trusts for this certificate:
        /// issued after the program's distrust date, or under a root the program removed. The
        /// evidence names the program, the date and the time compared (``RootProgramPolicy``).
        public static let rootDistrusted = Code(.rootDistrusted)
        /// Warning: chain validation was disabled by the policy.
        public static let chainNotValidated = Code(.chainNotValidated)
        /// The leaf does not carry the requested DNS name.
        public static let hostMismatch = Code(.hostMismatch)
        /// The leaf does not carry the requested IP address.
        public static let ipAddressMismatch = Code(.ipAddressMismatch)
        /// A client's leaf carries none of the identities a server requires (a URI such as a
        /// SPIFFE ID, or a DNS name): `ClientIdentity`.
        public static let identityMismatch = Code(.identityMismatch)
        /// A server judging clients by SPIFFE trust domain: the client's leaf carries no SPIFFE ID,
        /// several, or a malformed one, so no domain's bundle can judge it.
        public static let trustDomainMissing = Code(.trustDomainMissing)
        /// A server judging clients by SPIFFE trust domain: the client's SPIFFE ID names a trust
        /// domain the server holds no bundle for.
        public static let trustDomainUnknown = Code(.trustDomainUnknown)
        /// A server judging clients by SPIFFE trust domain: the client's SPIFFE ID names one
        /// domain, but its chain ends at another domain's CA (a CA issuing outside its domain).
        public static let trustDomainMismatch = Code(.trustDomainMismatch)
        /// Warning: no name was checked (none given, or name validation disabled).
        public static let hostNotChecked = Code(.hostNotChecked)
        /// No certificate of the verified path matches a pin.
        public static let pinMismatch = Code(.pinMismatch)
        /// A pinning mode with no usable pins: rejected, fail closed.
        public static let noUsablePins = Code(.noUsablePins)
        /// Warning: a pin matches a served certificate that is not on the verified path.
        public static let pinOutsideVerifiedPath = Code(.pinOutsideVerifiedPath)
        /// Warning: a SHA-1 pin is configured.
        public static let weakPin = Code(.weakPin)
        /// A host name check was asked for with chain validation off and nothing pinned (AFNetworking's guard).
        public static let selfSignedRequiresPinning = Code(.selfSignedRequiresPinning)
        /// The host matches no policy and the trust manager requires every host to have one.
        public static let hostNotListed = Code(.hostNotListed)
        /// Warning: the host's pin set has expired; only default validation applied.
        public static let pinSetExpired = Code(.pinSetExpired)
        /// Warning: an enforced pin set has no backup pin (RFC 7469 §2.5: two pins, one not in the current chain).
        public static let noBackupPin = Code(.noBackupPin)
        /// Warning: a report-only pin set failed; the connection is allowed and a report is due.
        public static let reportOnlyFailure = Code(.reportOnlyFailure)
        /// Warning (a live check's): only the leaf's key matched and the leaf expires within 30
        /// days; a renewal with a new key locks clients out.
        public static let leafPinExpiring = Code(.leafPinExpiring)
        /// Warning (a live check's): the peer did not send an intermediate of the verified path, or
        /// sent a chain from which no path could be built.
        public static let incompleteChain = Code(.incompleteChain)
        /// Warning (a live check's): the peer stapled no OCSP response.
        public static let notStapled = Code(.notStapled)
        /// Warning (`verify --purpose client`): a client anchor is a public root, or the system store.
        public static let publicClientAnchor = Code(.publicClientAnchor)
        /// The stapled OCSP response does not know the leaf (a failure only when stapling is required).
        public static let ocspStatusUnknown = Code(.ocspStatusUnknown)
        /// The stapled OCSP response is malformed, stale, not about the leaf, or wrongly signed.
        public static let stapleUnusable = Code(.stapleUnusable)
        /// Stapling is required (policy or must-staple leaf) and nothing was stapled.
        public static let stapleMissing = Code(.stapleMissing)
        /// No CRL from the certificate's distribution points covers it (none named, or a shard of a
        /// partitioned CRL, or another issuer's CRL): its status is not known, never "not revoked".
        public static let crlNotCovered = Code(.crlNotCovered)
        /// A distribution point's CRL could not be had or relied on: unreachable, too large, too
        /// slow, wrongly signed, or with a critical extension Pincheck does not process.
        public static let crlUnavailable = Code(.crlUnavailable)
        /// The distribution point's CRL is past its nextUpdate.
        public static let crlStale = Code(.crlStale)
        /// A certificate names more http CRL distribution points than Pincheck reads
        /// (``RevocationListFetcher/maximumDistributionPointsPerCertificate``): the first ones were
        /// consulted, the rest were not fetched. A warning.
        public static let crlPointsIgnored = Code(.crlPointsIgnored)
        /// The leaf's SCTs do not meet the host's Certificate Transparency policy (too few verified
        /// SCTs, too few operators, logs not approved at the time; ``Verdict/certificateTransparency``
        /// lists each SCT and why it did or did not count).
        public static let ctNotCompliant = Code(.ctNotCompliant)
        /// The Certificate Transparency policy cannot be judged: the newest log list is older than the
        /// policy allows (Chrome: 70 days), or no list carries its date.
        public static let ctUnenforceable = Code(.ctUnenforceable)
    }

    /// Which requirement of the policy a reason is about: the part of the evaluation that produced it.
    public enum Requirement: String, Sendable, Hashable, CaseIterable {
        /// The path to the anchors: OpenSSL's verification, the chain's length, disabled validation.
        case chain
        /// The host name or IP address the leaf must carry, or the identity a client must prove.
        case name
        /// The certificate profile (the strict Web PKI rules) and required key usages.
        case profile
        /// A pin set: its pins, expiry, backup pins, report-only failures.
        case pins
        /// Revocation: the stapled OCSP response, supplied CRLs, CRLs from distribution points.
        case revocation
        /// The Certificate Transparency requirement.
        case certificateTransparency = "certificate-transparency"
        /// Which rule applies to the host: an unlisted host, AFNetworking's pinning guard.
        case hostPolicy = "host-policy"
    }

    /// What happened.
    public let code: Code
    /// A sentence a person can act on.
    public let message: String
    /// The facts behind the reason.
    public let evidence: Evidence
    /// The requirement that produced the reason.
    public let requirement: Requirement

    package init(_ code: Code, _ message: String, evidence: Evidence = Evidence(), requirement: Requirement) {
        self.code = code
        self.message = message
        self.evidence = evidence
        self.requirement = requirement
    }

    /// The same finding said otherwise (a warning's wording for a failure that does not count).
    package func rephrased(_ message: String) -> Reason {
        Reason(code, message, evidence: evidence, requirement: requirement)
    }

    public var description: String { "\(code): \(message)" }
}

/// The facts behind a ``Reason``; each field is set where it applies.
public struct Evidence: Sendable, Hashable {
    /// An OpenSSL verification error.
    public struct OpenSSLError: Sendable, Hashable {
        /// The `X509_V_ERR_*` code.
        public let code: Int
        /// OpenSSL's text for it.
        public let text: String
        /// The position in the chain (0 = leaf).
        public let depth: Int
        /// The subject of the certificate at that depth, when known.
        public let subject: String?
    }

    /// The OpenSSL error, for chain failures.
    public var openSSLError: OpenSSLError?
    /// The name or address asked for.
    public var hostRequested: String?
    /// The names (DNS and IP SANs) the leaf carries.
    public var namesPresented: [String]?
    /// The pins configured for the host (for certificate pinning: the pinned certificates' key pins).
    public var pinsConfigured: [PublicKeyPin]?
    /// The SPKI pins of the path pins were matched against, leaf first.
    public var pinsOfPath: [PublicKeyPin]?
    /// The CRL a revocation finding is about: where it came from and its dates.
    public var revocationList: RevocationListEvidence?
    /// The root program behind a `chain.root-distrusted` finding.
    public var rootProgram: RootProgramEvidence?

    public init() {}

    init(rootProgram: RootProgramEvidence) {
        self.rootProgram = rootProgram
    }
}

/// A root program's refusal: which program, which root, and what was compared with its date.
public struct RootProgramEvidence: Sendable, Hashable {
    /// What time of the leaf was compared with the program's date.
    public enum Compared: String, Sendable, Hashable {
        /// The leaf's notBefore (Mozilla's rule; Chrome's when no SCT verified).
        case notBefore = "not-before"
        /// The earliest SCT whose log signature verified (Chrome's rule).
        case earliestVerifiedSCT = "earliest-verified-sct"

        var words: String { self == .notBefore ? "notBefore" : "earliest verified SCT" }
    }

    /// The program that refuses.
    public let program: RootPrograms.Program
    /// The root's name in the program's data.
    public let root: String
    /// The program's status for the root.
    public let status: RootPrograms.Membership.Status
    /// The program's distrust date; nil for a removed root.
    public let distrustAfter: Date?
    /// What was compared with it, and its value; nil for a removed root.
    public let compared: Compared?
    public let comparedTime: Date?
}

/// A CRL behind a revocation finding.
public struct RevocationListEvidence: Sendable, Hashable {
    /// The distribution point it was fetched from.
    public let url: String
    /// Its thisUpdate and nextUpdate, when it could be read.
    public let thisUpdate: Date?
    public let nextUpdate: Date?
    /// For a revoked certificate: when, and the CRLReason code if the entry has one.
    public let revocationDate: Date?
    public let reasonCode: Int?
}
