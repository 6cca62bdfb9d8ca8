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

    /// Whether the chain must verify against the trust anchors (AFSecurityPolicy's
    /// `allowInvalidCertificates`, inverted).
    public enum ChainValidation: Sendable, Hashable {
        /// The chain must verify against ``TrustPolicy/anchors``.
        case required
        /// Skip anchor validation. With no pinning every chain is accepted (unless a host must be
        /// checked, which then always fails); with pinning the pins alone decide, and only
        /// certificates that really certify the leaf by signature can match.
        /// - Warning: For test servers only. Never ship this.
        case disabled(because: String)
    }

    /// Whether the leaf must carry the requested host name (AFSecurityPolicy's `validatesDomainName`).
    public enum NameValidation: Sendable, Hashable {
        /// The leaf's subjectAltName must match the host (DNS name or IP address; never the subject CN).
        case required
        /// Do not check the name.
        /// - Warning: Any valid certificate for any host is then accepted for this one (CVE-2015-3996).
        case disabled(because: String)
    }

    /// What the leaf must be good for: which peer it authenticates.
    public enum Purpose: Sendable, Hashable {
        /// A TLS server (OpenSSL purpose sslserver; EKU serverAuth when an EKU is present).
        case serverAuthentication
        /// A TLS client (OpenSSL purpose sslclient; EKU clientAuth when an EKU is present).
        case clientAuthentication
    }

    /// Which certificate profile the path must meet on top of OpenSSL's RFC 5280 checks.
    public enum Profile: Sendable, Hashable {
        /// The Web PKI server profile (CA/Browser Forum baseline requirements as x509-limbo
        /// tests them): the checks under `Strict/`, run over every verified path. The default.
        case strictWebPKI
        /// Only what OpenSSL checks, with hardened flags (purpose, X509_STRICT, no CN fallback, no partial wildcards).
        /// - Warning: accepts certificates the Web PKI forbids (CA-flagged leaves, invalid
        ///   DNS names, AKI/SKI mismatches, …). For private PKIs that need them.
        case openSSLOnly(because: String)
    }

    /// The pinning mode and its pins.
    public var pinning: Pinning
    /// How the chain is validated: anchors, checks, revocation, Certificate Transparency.
    public var validation: ValidationPolicy

    // The validation's settings, read and written on the policy itself (AFSecurityPolicy's surface).
    /// The anchors chains must lead to (``ValidationPolicy/anchors``).
    public var anchors: TrustAnchors {
        get { validation.anchors }
        set { validation.anchors = newValue }
    }
    /// Whether the chain must verify against the anchors (``ValidationPolicy/chainValidation``).
    public var chainValidation: ChainValidation {
        get { validation.chainValidation }
        set { validation.chainValidation = newValue }
    }
    /// Whether the leaf must carry the host name (``ValidationPolicy/nameValidation``).
    public var nameValidation: NameValidation {
        get { validation.nameValidation }
        set { validation.nameValidation = newValue }
    }
    /// Intermediates to use when the server omits them (``ValidationPolicy/additionalIntermediates``).
    public var additionalIntermediates: [Certificate] {
        get { validation.additionalIntermediates }
        set { validation.additionalIntermediates = newValue }
    }
    /// The most intermediates between leaf and anchor (``ValidationPolicy/maximumChainDepth``).
    public var maximumChainDepth: Int {
        get { validation.maximumChainDepth }
        set { validation.maximumChainDepth = newValue }
    }
    /// What the leaf must authenticate (``ValidationPolicy/purpose``).
    public var purpose: Purpose {
        get { validation.purpose }
        set { validation.purpose = newValue }
    }
    /// The certificate profile (``ValidationPolicy/profile``).
    public var profile: Profile {
        get { validation.profile }
        set { validation.profile = newValue }
    }
    /// CRLs supplied by the caller (``ValidationPolicy/revocationLists``).
    public var revocationLists: [CertificateRevocationList] {
        get { validation.revocationLists }
        set { validation.revocationLists = newValue }
    }
    /// Which certificates the supplied CRLs must cover (``ValidationPolicy/revocationScope``).
    public var revocationScope: RevocationScope {
        get { validation.revocationScope }
        set { validation.revocationScope = newValue }
    }
    /// What a stapled OCSP response must provide (``ValidationPolicy/revocation``).
    public var revocation: RevocationPolicy {
        get { validation.revocation }
        set { validation.revocation = newValue }
    }
    /// The Certificate Transparency requirement (``ValidationPolicy/certificateTransparency``).
    public var certificateTransparency: CertificateTransparency.Requirement? {
        get { validation.certificateTransparency }
        set { validation.certificateTransparency = newValue }
    }
    /// The root programs' data and whose distrust applies (``ValidationPolicy/rootPrograms``).
    public var rootPrograms: RootProgramPolicy {
        get { validation.rootPrograms }
        set { validation.rootPrograms = newValue }
    }
    /// Key usages the leaf must allow (``ValidationPolicy/requiredKeyUsages``).
    public var requiredKeyUsages: Set<KeyUsage> {
        get { validation.requiredKeyUsages }
        set { validation.requiredKeyUsages = newValue }
    }

    /// Which certificates supplied CRLs must cover.
    public enum RevocationScope: Sendable, Hashable {
        /// The leaf only (the issuing CA's CRL).
        case leaf
        /// Every certificate of the path but the anchor: a CRL from each issuer is needed.
        case wholeChain
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
        chainValidation: ChainValidation = .required,
        nameValidation: NameValidation = .required,
        additionalIntermediates: [Certificate] = [],
        maximumChainDepth: Int = 10
    ) {
        self.pinning = pinning
        self.validation = ValidationPolicy(anchors: anchors, chainValidation: chainValidation, nameValidation: nameValidation,
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

extension TrustPolicy.Pinning {
    /// The flavour's check; nil for `.none`. The one place a pinning mode is turned into its check.
    var check: (any PinCheck)? {
        switch self {
        case .none: nil
        case .certificates(let pinned): pinned
        case .publicKeys(let pinned): pinned
        }
    }
}
