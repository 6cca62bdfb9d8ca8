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
    /// Whether the chain must verify against the trust anchors (AFSecurityPolicy's
    /// `allowInvalidCertificates`, inverted).
    public enum ChainValidation: Sendable, Hashable {
        /// The chain must verify against ``ValidationPolicy/anchors``.
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

    /// Which certificates supplied CRLs must cover.
    public enum RevocationScope: Sendable, Hashable {
        /// The leaf only (the issuing CA's CRL).
        case leaf
        /// Every certificate of the path but the anchor: a CRL from each issuer is needed.
        case wholeChain
    }

    /// The anchors chains must lead to (the system store unless replaced). Any certificate given
    /// here ends a path, a root or not: an intermediate given as anchor needs nothing above it.
    public var anchors: TrustAnchors
    /// Whether the chain must verify against ``anchors``.
    public var chainValidation: ChainValidation
    /// Whether the leaf must carry the host name.
    public var nameValidation: NameValidation
    /// Intermediates to use when the server omits them. Evaluations never fetch a missing issuer
    /// (AIA); only AsyncHTTPClient's road, shown the leaf alone, fetches the leaf's issuer from its
    /// caIssuers URL when the policy checks distribution-point CRLs, and verifies it before use.
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
    /// Warnings about the peer's set-up the plan adds as checks of its own (none by default).
    package var advisories: EvaluationAdvisories = []
    /// What a server requires of its clients besides their chain (mTLS roads only).
    package var clientIdentity = ClientIdentityRequirement()
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
