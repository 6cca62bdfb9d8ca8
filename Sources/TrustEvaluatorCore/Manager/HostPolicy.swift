import FoundationEssentials

/// One pin set of a host: pins, how a mismatch is handled, and until when it applies.
public struct PinSet: Sendable {
    /// Whether a mismatch rejects the connection.
    public enum Enforcement: Sendable, Hashable {
        /// A mismatch rejects.
        case enforce
        /// A mismatch on a valid chain is recorded, warned about and reported, but the connection
        /// is allowed. An invalid chain is still rejected.
        case reportOnly
    }

    /// The pinning mode and pins (never `.none`: a host without pins has no pin set).
    public let pinning: TrustPolicy.Pinning
    public let enforcement: Enforcement
    /// The instant the pin set stops applying (00:00:00 UTC of the configured day), if any.
    public let expires: Date?

    /// - Throws: ``PincheckError`` (`policy.invalid`) when `pinning` is `.none`.
    public init(_ pinning: TrustPolicy.Pinning, enforcement: Enforcement = .enforce, expires: Date? = nil) throws(PincheckError) {
        if case .none = pinning {
            throw PincheckError(.invalidPolicy, "a pin set needs pins; a host without pins is declared with no pin set")
        }
        self.pinning = pinning
        self.enforcement = enforcement
        self.expires = expires
    }

    /// A pin set from pins already known not to be `.none`.
    init(unchecked pinning: TrustPolicy.Pinning) {
        self.pinning = pinning
        self.enforcement = .enforce
        self.expires = nil
    }

    /// The pinned certificates of a certificate-pinning set (none for other sets).
    var pinnedCertificates: [Certificate] {
        if case .certificates(let pinned) = pinning { pinned.certificates } else { [] }
    }

    /// The number of distinct pins (keys or certificates).
    package var pinCount: Int {
        switch pinning {
        case .none: 0
        case .certificates(let pinned): pinned.certificates.count
        case .publicKeys(let pinned): pinned.pins.count
        }
    }

    /// An enforced public-key set without expiry: what OkHttp's union of pins can hold.
    package var isUnionable: Bool {
        guard case .publicKeys(let pinned) = pinning, pinned.scope == .anyCertificate, enforcement == .enforce, expires == nil else { return false }
        return true
    }

    /// True until the set's expiry (always, without one).
    package func isActive(at time: Date) -> Bool { expires.map { time < $0 } ?? true }

    /// The key pins the set holds: its public-key pins, or the keys of its pinned certificates.
    package var keyPins: [PublicKeyPin] {
        switch pinning {
        case .none: []
        case .publicKeys(let pinned): pinned.pins.sorted()
        case .certificates(let pinned): pinned.certificates.map(\.publicKeyPin)
        }
    }

    /// True when every pin of the set matches some certificate of `path`.
    func matchesAll(of path: [Certificate]) -> Bool {
        switch pinning {
        case .none: false
        case .certificates(let pinned): pinned.certificates.allSatisfy(path.contains)
        case .publicKeys(let pinned): pinned.pins.allSatisfy { pin in path.contains { pin.matches($0) } }
        }
    }

    /// Parses `yyyy-MM-dd` as 00:00:00 UTC of that day (TrustKit's reading).
    public static func expiryDate(_ text: String) -> Date? {
        Timestamp.parseDay(text)
    }
}

/// Everything a trust manager knows about the hosts one pattern matches.
public struct HostPolicy: Sendable {
    /// Which hosts.
    public let pattern: HostPattern
    /// The pin sets; all that apply must pass. Empty: default validation only (also how a
    /// subdomain is excluded from its parent's pins).
    public let pinSets: [PinSet]
    /// The anchors, validation switches and extra intermediates.
    public let validationPolicy: ValidationPolicy
    /// Where failure reports go (RFC 7469 `report-uri`).
    public let reportURIs: [URL]
    /// What stapled OCSP responses must provide: the validation's (one place for every road).
    public var revocation: RevocationPolicy { validationPolicy.revocation }
    /// Anchors whose chains need not match the pins (Android's `overridePins="true"`): a chain
    /// that verifies to one of them is accepted on its validation alone, with a warning.
    public var pinOverrideAnchors: TrustAnchors?

    /// A host pinned by one ``TrustPolicy``: its pins become one enforced pin set (expiring at
    /// `expires`, if given), its validation the host's.
    /// - Parameters:
    ///   - pattern: The host pattern (`api.example.com`, `*.example.com`, `**.example.com`).
    ///   - policy: The pins, anchors and validation switches.
    ///   - expires: When the pins stop applying (the host is then validated unpinned).
    /// - Throws: ``PincheckError`` for a malformed pattern.
    public init(_ pattern: String, policy: TrustPolicy, expires: Date? = nil) throws(PincheckError) {
        let pinSets: [PinSet]
        if case .none = policy.pinning { pinSets = [] } else { pinSets = [try PinSet(policy.pinning, expires: expires)] }
        self.init(pattern: try HostPattern(pattern, publicSuffixes: PublicSuffixList.system), pinSets: pinSets, validation: policy.validation)
    }

    /// A host's policy from its parts, as the configuration file spells them.
    /// - Parameters:
    ///   - pattern: The hosts it applies to.
    ///   - pinSets: Its pin sets (enforced, report-only, expiring); none pins nothing.
    ///   - validation: Anchors and validation.
    ///   - reportURIs: Where RFC 7469 failure reports for these hosts go.
    ///   - revocation: Replaces `validation.revocation` when given.
    public init(pattern: HostPattern, pinSets: [PinSet], validation: ValidationPolicy = ValidationPolicy(), reportURIs: [URL] = [],
                revocation: RevocationPolicy? = nil) {
        self.pattern = pattern
        self.pinSets = pinSets
        var validation = validation
        if let revocation { validation.revocation = revocation }
        self.validationPolicy = validation
        self.reportURIs = reportURIs
    }

    /// A host's policy from its parts, its validation given as a ``TrustPolicy`` whose pinning is
    /// not used.
    @available(*, deprecated, message: "give the validation as a ValidationPolicy (a TrustPolicy's pins were ignored here): validation: policy.validation")
    @_disfavoredOverload
    public init(pattern: HostPattern, pinSets: [PinSet], validation: TrustPolicy = TrustPolicy(), reportURIs: [URL] = [],
                revocation: RevocationPolicy? = nil) {
        self.init(pattern: pattern, pinSets: pinSets, validation: validation.validation, reportURIs: reportURIs, revocation: revocation)
    }

    /// The validation as a ``TrustPolicy`` without pins.
    @available(*, deprecated, renamed: "validationPolicy")
    public var validation: TrustPolicy { TrustPolicy(pinning: .none, validation: validationPolicy) }
}
