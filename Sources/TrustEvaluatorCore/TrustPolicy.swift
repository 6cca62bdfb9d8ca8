/// What makes a served chain trustworthy for a host: a ``ValidationPolicy`` (anchors, which
/// checks run) and one pinning mode.
///
/// The legal combinations are types: a pinning mode always carries a non-empty pin set, and a
/// disabled check is a named case with a reason, never a `false` that silently skips something.
/// ``SecurityPolicy`` offers the same decisions with AFNetworking's AFSecurityPolicy surface.
public struct TrustPolicy: Sendable {
    /// How the verified path must relate to the configured pins (AFSecurityPolicy's `SSLPinningMode`).
    public enum Pinning: Sendable {
        /// No pinning: the chain must verify against the anchors (and carry the host name).
        case none
        /// Certificate pinning: the path is rebuilt with only the pinned certificates as anchors
        /// (a pinned intermediate or leaf may end it) and must contain one of them, byte for byte.
        case certificates(PinnedCertificates)
        /// Public-key pinning: some certificate of the verified path must have a pinned SPKI hash.
        case publicKeys(PinnedPublicKeys)
    }

    // The validation's types, spelled as before the split (deprecated).
    @available(*, deprecated, renamed: "ValidationPolicy.ChainValidation")
    public typealias ChainValidation = ValidationPolicy.ChainValidation
    @available(*, deprecated, renamed: "ValidationPolicy.NameValidation")
    public typealias NameValidation = ValidationPolicy.NameValidation
    @available(*, deprecated, renamed: "ValidationPolicy.Purpose")
    public typealias Purpose = ValidationPolicy.Purpose
    @available(*, deprecated, renamed: "ValidationPolicy.Profile")
    public typealias Profile = ValidationPolicy.Profile
    @available(*, deprecated, renamed: "ValidationPolicy.RevocationScope")
    public typealias RevocationScope = ValidationPolicy.RevocationScope

    /// The pinning mode and its pins.
    public var pinning: Pinning
    /// How the chain is validated: anchors, checks, revocation, Certificate Transparency.
    public var validation: ValidationPolicy

    // The validation's settings as the policy's own, spelled as before the split (deprecated:
    // `policy.validation.anchors` says which part a setting belongs to).
    /// The anchors chains must lead to (``ValidationPolicy/anchors``).
    @available(*, deprecated, renamed: "validation.anchors")
    public var anchors: TrustAnchors {
        get { validation.anchors }
        set { validation.anchors = newValue }
    }
    /// Whether the chain must verify against the anchors (``ValidationPolicy/chainValidation``).
    @available(*, deprecated, renamed: "validation.chainValidation")
    public var chainValidation: ValidationPolicy.ChainValidation {
        get { validation.chainValidation }
        set { validation.chainValidation = newValue }
    }
    /// Whether the leaf must carry the host name (``ValidationPolicy/nameValidation``).
    @available(*, deprecated, renamed: "validation.nameValidation")
    public var nameValidation: ValidationPolicy.NameValidation {
        get { validation.nameValidation }
        set { validation.nameValidation = newValue }
    }
    /// Intermediates to use when the server omits them (``ValidationPolicy/additionalIntermediates``).
    @available(*, deprecated, renamed: "validation.additionalIntermediates")
    public var additionalIntermediates: [Certificate] {
        get { validation.additionalIntermediates }
        set { validation.additionalIntermediates = newValue }
    }
    /// The most intermediates between leaf and anchor (``ValidationPolicy/maximumChainDepth``).
    @available(*, deprecated, renamed: "validation.maximumChainDepth")
    public var maximumChainDepth: Int {
        get { validation.maximumChainDepth }
        set { validation.maximumChainDepth = newValue }
    }
    /// What the leaf must authenticate (``ValidationPolicy/purpose``).
    @available(*, deprecated, renamed: "validation.purpose")
    public var purpose: ValidationPolicy.Purpose {
        get { validation.purpose }
        set { validation.purpose = newValue }
    }
    /// The certificate profile (``ValidationPolicy/profile``).
    @available(*, deprecated, renamed: "validation.profile")
    public var profile: ValidationPolicy.Profile {
        get { validation.profile }
        set { validation.profile = newValue }
    }
    /// CRLs supplied by the caller (``ValidationPolicy/revocationLists``).
    @available(*, deprecated, renamed: "validation.revocationLists")
    public var revocationLists: [CertificateRevocationList] {
        get { validation.revocationLists }
        set { validation.revocationLists = newValue }
    }
    /// Which certificates the supplied CRLs must cover (``ValidationPolicy/revocationScope``).
    @available(*, deprecated, renamed: "validation.revocationScope")
    public var revocationScope: ValidationPolicy.RevocationScope {
        get { validation.revocationScope }
        set { validation.revocationScope = newValue }
    }
    /// What a stapled OCSP response must provide (``ValidationPolicy/revocation``).
    @available(*, deprecated, renamed: "validation.revocation")
    public var revocation: RevocationPolicy {
        get { validation.revocation }
        set { validation.revocation = newValue }
    }
    /// Key usages the leaf must allow (``ValidationPolicy/requiredKeyUsages``).
    @available(*, deprecated, renamed: "validation.requiredKeyUsages")
    public var requiredKeyUsages: Set<KeyUsage> {
        get { validation.requiredKeyUsages }
        set { validation.requiredKeyUsages = newValue }
    }

    /// Creates a policy; the defaults fail closed: system anchors, chain and name required.
    /// - Parameters:
    ///   - pinning: The pinning mode and pins; `.none` by default.
    ///   - anchors: The trust anchors; the system store by default.
    ///   - chainValidation: `.required` by default.
    ///   - nameValidation: `.required` by default.
    ///   - additionalIntermediates: Intermediates to offer besides the served ones.
    ///   - maximumChainDepth: 10 by default.
    public init(
        pinning: Pinning = .none,
        anchors: TrustAnchors = .system,
        chainValidation: ValidationPolicy.ChainValidation = .required,
        nameValidation: ValidationPolicy.NameValidation = .required,
        additionalIntermediates: [Certificate] = [],
        maximumChainDepth: Int = 10
    ) {
        self.pinning = pinning
        self.validation = ValidationPolicy(
            anchors: anchors, chainValidation: chainValidation, nameValidation: nameValidation,
            additionalIntermediates: additionalIntermediates, maximumChainDepth: maximumChainDepth)
    }

    /// A policy from its two parts.
    /// - Parameters:
    ///   - pinning: The pinning mode and pins.
    ///   - validation: How the chain is validated.
    public init(pinning: Pinning, validation: ValidationPolicy) {
        self.pinning = pinning
        self.validation = validation
    }
}

extension TrustPolicy {
    /// This policy as a server judges its clients' certificates: purpose client authentication
    /// (OpenSSL's sslclient), and no host name, since a client certificate names none. The one
    /// client validation `pincheck verify --purpose client` and the mTLS servers both use.
    package var judgingClients: TrustPolicy {
        var clients = self
        clients.validation.purpose = .clientAuthentication
        clients.validation.nameValidation = .disabled(because: "a client certificate names no host to check")
        return clients
    }
}
