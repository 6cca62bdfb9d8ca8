package import PincheckOpenSSL

/// The certificates a chain must lead to: the system store, or certificates the caller names.
///
/// Built once and shared read-only by any number of concurrent evaluations.
///
/// `@unchecked Sendable`: the `X509_STORE` is filled in `init` and never modified afterwards;
/// OpenSSL locks the store internally for lookups (including the lazy hashed-directory lookups of
/// the system store), so concurrent `X509_STORE_CTX_init` + `X509_verify_cert` calls are safe.
public final class TrustAnchors: @unchecked Sendable {
    /// Where the anchors came from.
    public enum Origin: Sendable, Hashable {
        /// OpenSSL's default locations (Debian: `/etc/ssl/certs`), or `SSL_CERT_FILE` / `SSL_CERT_DIR`.
        case system(file: String, directory: String)
        /// Certificates the caller gave.
        case certificates
        /// No anchor at all, deliberately (``TrustAnchors/nothing``): every chain fails to verify.
        case nothing
    }

    package let store: X509Store
    /// The anchor certificates when the caller gave them; empty for the system store, whose
    /// certificates are looked up by OpenSSL on demand.
    public let certificates: [Certificate]
    /// Where the anchors came from.
    public let origin: Origin
    /// Whether a path ending at one of these anchors is held to the Web PKI's rules (the CA/Browser
    /// Forum's Baseline Requirements that no verifier enforces, CT's `public-anchors` scope).
    public enum Classification: Sendable, Hashable {
        /// By membership: an anchor a root program trusts (or distrusted) is public, any other is
        /// private, whichever store or file it came from (``RootPrograms``). The default.
        case byRootPrograms
        /// Every anchor is public (a copy of a browser's store, x509-limbo's Web PKI cases).
        case webPKI
        /// Every anchor is private: a private PKI, whatever the root programs say of its roots.
        case privatePKI
    }

    /// How these anchors are told public or private; ``Classification/byRootPrograms`` unless the
    /// caller declared otherwise.
    public let classification: Classification

    /// Whether ``certificates`` were declared roots of the public Web PKI.
    @available(*, deprecated, message: "anchors are public by root-program membership; read classification")
    public var certificatesAreWebPKIRoots: Bool { classification == .webPKI }

    /// The system trust store, loaded once per process.
    ///
    /// As every OpenSSL client does, this honours the `SSL_CERT_FILE` and `SSL_CERT_DIR`
    /// environment variables when they are set; otherwise it uses OpenSSL's built-in locations
    /// (on Debian, `/usr/lib/ssl/cert.pem` → `/etc/ssl/certs/ca-certificates.crt`, and the hashed
    /// directory `/usr/lib/ssl/certs`). Install Debian's `ca-certificates` package to fill them.
    /// An empty or missing system store trusts nothing: evaluations fail closed.
    public static let system: TrustAnchors = TrustAnchors()

    /// Anchors that trust nothing: every chain ends at an unknown issuer. What an Android
    /// `<trust-anchors>` element with no certificates means; never a fallback for a mistake.
    public static let nothing: TrustAnchors = TrustAnchors(trustingNothing: ())

    private init(trustingNothing: Void) {
        do { self.store = try X509Store(systemDefaults: false, certificates: []) } catch { fatalError("\(error): out of memory") }
        self.certificates = []
        self.origin = .nothing
        self.classification = .privatePKI
    }

    private init() {
        // A missing default file or directory is not an error for OpenSSL users; it just trusts nothing.
        do { self.store = try X509Store(systemDefaults: true, certificates: []) } catch { fatalError("\(error): out of memory") }
        self.certificates = []
        self.classification = .byRootPrograms
        let locations = X509Store.defaultLocations
        self.origin = .system(file: locations.file, directory: locations.directory)
    }

    /// Anchors made of exactly these certificates; the system store is not consulted.
    /// - Parameters:
    ///   - certificates: The trust anchors: roots, or any other certificate that should
    ///     end a path (an intermediate; for certificate pinning, a leaf). Each one ends a path on
    ///     its own, with nothing above it needed, as in Chromium, Firefox, Go and rustls.
    ///   - classification: How they are told public or private: by root-program membership
    ///     unless declared.
    /// - Throws: ``PincheckError`` (`input.empty`) when `certificates` is empty: an empty store
    ///   would trust nothing and almost certainly means a configuration mistake.
    public init(certificates: [Certificate], classification: Classification = .byRootPrograms) throws(PincheckError) {
        guard !certificates.isEmpty else {
            throw PincheckError(.emptyInput, "no trust anchors given (an empty anchor set would trust nothing)")
        }
        do { self.store = try X509Store(systemDefaults: false, certificates: certificates.map(\.handle)) } catch { throw PincheckError(error) }
        self.certificates = certificates
        self.origin = .certificates
        self.classification = classification
    }

    /// Anchors made of exactly these certificates, declared public (`webPKIRoots: true`) or told
    /// by membership (`false`, which no longer means private: declare that with
    /// ``Classification/privatePKI``).
    @available(*, deprecated, renamed: "init(certificates:classification:)")
    public convenience init(certificates: [Certificate], webPKIRoots: Bool) throws(PincheckError) {
        try self.init(certificates: certificates, classification: webPKIRoots ? .webPKI : .byRootPrograms)
    }

    /// The same anchors, told public or private as `classification` says (the system store
    /// declared a private PKI's, say). The store is shared, not copied.
    public func classified(as classification: Classification) -> TrustAnchors {
        TrustAnchors(sharing: self, classification: classification)
    }

    private init(sharing anchors: TrustAnchors, classification: Classification) {
        self.store = anchors.store
        self.certificates = anchors.certificates
        self.origin = anchors.origin
        self.classification = classification
    }

    /// The system store and these certificates besides (Android's `<certificates src="system"/>`
    /// next to `<certificates src="@raw/my_ca"/>`).
    /// - Throws: ``PincheckError`` (`input.empty`) when `certificates` is empty: use ``system``.
    public init(systemAnd certificates: [Certificate]) throws(PincheckError) {
        guard !certificates.isEmpty else { throw PincheckError(.emptyInput, "no certificates to add to the system store") }
        do { self.store = try X509Store(systemDefaults: true, certificates: certificates.map(\.handle)) } catch { throw PincheckError(error) }
        self.certificates = certificates
        self.origin = TrustAnchors.system.origin
        self.classification = .byRootPrograms
    }

    /// Whether a path ending at `top` ends at a private anchor: one no root program has (unless
    /// the anchors were declared public or private).
    func isPrivateAnchor(_ top: Certificate, programs: RootPrograms) -> Bool {
        switch classification {
        case .webPKI: false
        case .privatePKI: true
        case .byRootPrograms: programs.root(for: top) == nil
        }
    }

    /// Reads anchors from PEM bundles or DER files.
    /// - Throws: ``PincheckError`` naming the file that could not be read or parsed.
    public convenience init(contentsOf paths: [String]) throws(PincheckError) {
        var all: [Certificate] = []
        for path in paths { all += try Certificate.load(contentsOf: path) }
        try self.init(certificates: all)
    }

    /// Certificates the store lent to a verification (a system-store root), as `Certificate`s made
    /// once: making one hashes the certificate and its key, too much to repeat on every evaluation.
    /// Keyed by the handle's identity, which the store gives the same `X509` every time; a cached
    /// `Certificate` holds its handle, so the identity is not reused while the entry lives.
    private let wrapped = BoundedCache<ObjectIdentifier, Certificate>(capacity: 256)

    /// The `Certificate` for a handle this store lent out.
    func certificate(wrapping handle: X509Handle) -> Certificate {
        let key = ObjectIdentifier(handle)
        if let known = wrapped.value(for: key), known.handle === handle { return known }
        let certificate = Certificate(handle: handle)
        wrapped.insert(certificate, for: key)
        return certificate
    }

    /// Whether a path may end right above `certificate`: an anchor issued it (the system store's
    /// roots included, found by OpenSSL's issuer lookup; a caller-given anchor by its signature too).
    package func mayHaveIssued(_ certificate: Certificate) -> Bool {
        if certificates.contains(where: { $0.handle.mayHaveIssued(certificate.handle) && $0.handle.signatureVerifies(on: certificate.handle) }) {
            return true
        }
        if case .system = origin { return store.holdsIssuer(of: certificate.handle) }
        return false
    }

    /// True when `certificate` is one of the caller-given anchors (always false for the system store).
    func contains(_ certificate: Certificate) -> Bool {
        certificates.contains(certificate)
    }
}
