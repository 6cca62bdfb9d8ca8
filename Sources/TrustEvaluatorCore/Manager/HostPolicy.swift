import FoundationEssentials

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
        let pinSets = PinSet.Pins(policy.pinning).map { [PinSet($0, expires: expires)] } ?? []
        self.init(pattern: try HostPattern(pattern, publicSuffixes: PublicSuffixList.system), pinSets: pinSets, validation: policy.validation)
    }

    /// A host's policy from its parts, as the configuration file spells them.
    /// - Parameters:
    ///   - pattern: The hosts it applies to.
    ///   - pinSets: Its pin sets (enforced, report-only, expiring); none pins nothing.
    ///   - validation: Anchors and validation.
    ///   - reportURIs: Where RFC 7469 failure reports for these hosts go.
    ///   - revocation: Replaces `validation.revocation` when given.
    public init(
        pattern: HostPattern, pinSets: [PinSet], validation: ValidationPolicy = ValidationPolicy(), reportURIs: [URL] = [],
        revocation: RevocationPolicy? = nil
    ) {
        self.pattern = pattern
        self.pinSets = pinSets
        var validation = validation
        if let revocation { validation.revocation = revocation }
        self.validationPolicy = validation
        self.reportURIs = reportURIs
    }

    /// A host's policy from its parts, its validation given as a ``TrustPolicy`` whose pinning is
    /// not used.
    @available(
        *, deprecated, message: "give the validation as a ValidationPolicy (a TrustPolicy's pins were ignored here): validation: policy.validation"
    )
    @_disfavoredOverload
    public init(
        pattern: HostPattern, pinSets: [PinSet], validation: TrustPolicy = TrustPolicy(), reportURIs: [URL] = [],
        revocation: RevocationPolicy? = nil
    ) {
        self.init(pattern: pattern, pinSets: pinSets, validation: validation.validation, reportURIs: reportURIs, revocation: revocation)
    }

    /// The validation as a ``TrustPolicy`` without pins.
    @available(*, deprecated, renamed: "validationPolicy")
    public var validation: TrustPolicy { TrustPolicy(pinning: .none, validation: validationPolicy) }
}
