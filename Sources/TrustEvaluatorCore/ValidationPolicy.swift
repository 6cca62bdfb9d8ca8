import FoundationEssentials

/// How a served chain is validated: the anchors, which checks run, and what revocation and
/// Certificate Transparency must show. Everything of a ``TrustPolicy`` but its pins.
///
/// A host's validation and its pins are two things: a ``HostPolicy`` has one `ValidationPolicy`
/// and any number of ``PinSet``s, and a ``TrustPolicy`` is one `ValidationPolicy` with one
/// pinning mode (AFSecurityPolicy's shape). Where only validation applies (a trust manager's
/// unlisted hosts, a report collector) a `ValidationPolicy` is asked for, so no pins can be given
/// there to be ignored.
public struct ValidationPolicy: Sendable {
    public typealias ChainValidation = TrustPolicy.ChainValidation
    public typealias NameValidation = TrustPolicy.NameValidation
    public typealias Purpose = TrustPolicy.Purpose
    public typealias Profile = TrustPolicy.Profile
    public typealias RevocationScope = TrustPolicy.RevocationScope

    /// The anchors chains must lead to (the system store unless replaced). Any certificate given
    /// here ends a path, a root or not: an intermediate given as anchor needs nothing above it.
    public var anchors: TrustAnchors
    /// Whether the chain must verify against ``anchors``.
    public var chainValidation: ChainValidation
    /// Whether the leaf must carry the host name.
    public var nameValidation: NameValidation
    /// Intermediates to use when the server omits them (no AIA fetching ever happens).
    public var additionalIntermediates: [Certificate]
    /// The most intermediate CA certificates allowed between the leaf and the anchor: 0 allows a
    /// leaf issued directly by an anchor, 1 a leaf, one intermediate and a root. As RFC 5280's path
    /// length, self-issued intermediates (a CA's key rollover: same name, new key) are not counted.
    public var maximumChainDepth: Int
    /// What the leaf must authenticate; `.serverAuthentication` by default.
    public var purpose: Purpose = .serverAuthentication
    /// The certificate profile; `.strictWebPKI` by default.
    public var profile: Profile = .strictWebPKI
    /// CRLs supplied by the caller (never fetched). When any are given, the leaf (or, with
    /// ``ValidationPolicy/revocationScope`` `.wholeChain`, every certificate of the path) must be covered by one of
    /// them and not be listed (OpenSSL's `X509_V_FLAG_CRL_CHECK` / `X509_V_FLAG_CRL_CHECK_ALL`).
    public var revocationLists: [CertificateRevocationList] = []
    /// Which certificates ``ValidationPolicy/revocationLists`` must cover.
    public var revocationScope: RevocationScope = .leaf
    /// What a stapled OCSP response (or its absence) must provide. The default is the same on
    /// every road (``Evaluator``, ``TrustManager``, ``SecurityPolicy``, the adapters and the
    /// command): a staple is judged when one is received, a revoked one always rejects, and only
    /// a must-staple leaf requires one. Revocation is judged on the path verified against the
    /// anchors, whatever the pinning mode.
    public var revocation: RevocationPolicy = RevocationPolicy()

    /// The Certificate Transparency policy the leaf's SCTs must meet; `nil` (the default) checks
    /// none. Judged on the path verified against the anchors, whatever the pinning mode.
    public var certificateTransparency: CertificateTransparency.Requirement? = nil
    /// The root programs: which anchors are public, and whose distrust dates apply (both
    /// Mozilla's and Chrome's, from the bundled data, by default).
    public var rootPrograms: RootProgramPolicy = RootProgramPolicy()
    /// Key usages the leaf must allow when it has a keyUsage extension (none by default).
    public var requiredKeyUsages: Set<KeyUsage> = []
    /// Checks run over every verified path, after OpenSSL's (see ``PathCheck``): the profile's,
    /// whose failures count only while the chain is validated, then the policy's own, which
    /// always count (the host name, required key usages, revocation).
    /// Whether the chain must verify against the anchors.
    var validatesChain: Bool {
        if case .required = chainValidation { return true }
        return false
    }

    var pathChecks: PathChecks {
        var policyChecks: [any PathCheck] = []
        if purpose == .serverAuthentication { policyChecks.append(RegistryWildcardCheck()) }
        if !requiredKeyUsages.isEmpty { policyChecks.append(RequiredKeyUsageCheck(required: requiredKeyUsages)) }
        let profileChecks: [any PathCheck] = if case .strictWebPKI = profile { StrictWebPKI.checks(for: purpose) } else { [] }
        return PathChecks(profile: profileChecks, policy: policyChecks)
    }

    /// Creates a validation policy; the defaults fail closed: system anchors, chain and name required.
    /// - Parameters:
    ///   - anchors: The trust anchors; the system store by default.
    ///   - chainValidation: `.required` by default.
    ///   - nameValidation: `.required` by default.
    ///   - additionalIntermediates: Intermediates to offer besides the served ones.
    ///   - maximumChainDepth: 10 by default.
    public init(
        anchors: TrustAnchors = .system,
        chainValidation: ChainValidation = .required,
        nameValidation: NameValidation = .required,
        additionalIntermediates: [Certificate] = [],
        maximumChainDepth: Int = 10
    ) {
        self.anchors = anchors
        self.chainValidation = chainValidation
        self.nameValidation = nameValidation
        self.additionalIntermediates = additionalIntermediates
        self.maximumChainDepth = maximumChainDepth
    }
}
