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
    /// Whether ``certificates`` are roots of the public Web PKI (declared by the caller): then the
    /// CA/Browser Forum's Baseline Requirements that no verifier enforces (a critical SAN beside a
    /// subject, a root's EKU, a CN missing from the SAN) refuse their chains, as they refuse the
    /// system store's. Certificates the caller gives are a private PKI unless declared otherwise:
    /// the Baseline Requirements govern publicly-trusted CAs only, and those rows are warnings there.
    public let certificatesAreWebPKIRoots: Bool

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
        self.certificatesAreWebPKIRoots = false
    }

    private init() {
        // A missing default file or directory is not an error for OpenSSL users; it just trusts nothing.
        do { self.store = try X509Store(systemDefaults: true, certificates: []) } catch { fatalError("\(error): out of memory") }
        self.certificates = []
        self.certificatesAreWebPKIRoots = false
        let locations = X509Store.defaultLocations
        self.origin = .system(file: locations.file, directory: locations.directory)
    }

    /// Anchors made of exactly these certificates; the system store is not consulted.
    /// - Parameters:
    ///   - certificates: The trust anchors: roots, or any other certificate that should
    ///     end a path (an intermediate; for certificate pinning, a leaf). Each one ends a path on
    ///     its own, with nothing above it needed, as in Chromium, Firefox, Go and rustls.
    ///   - webPKIRoots: Whether these are roots of the public Web PKI (a copy of a browser's
    ///     root store, x509-limbo's Web PKI cases): their chains are then held to the Baseline
    ///     Requirements rows that private PKIs are only warned about. False by default.
    /// - Throws: ``PincheckError`` (`input.empty`) when `certificates` is empty: an empty store
    ///   would trust nothing and almost certainly means a configuration mistake.
    public init(certificates: [Certificate], webPKIRoots: Bool = false) throws(PincheckError) {
        guard !certificates.isEmpty else {
            throw PincheckError(.emptyInput, "no trust anchors given (an empty anchor set would trust nothing)")
        }
        do { self.store = try X509Store(systemDefaults: false, certificates: certificates.map(\.handle)) } catch { throw PincheckError(error) }
        self.certificates = certificates
        self.origin = .certificates
        self.certificatesAreWebPKIRoots = webPKIRoots
    }

    /// The system store and these certificates besides (Android's `<certificates src="system"/>`
    /// next to `<certificates src="@raw/my_ca"/>`).
    /// - Throws: ``PincheckError`` (`input.empty`) when `certificates` is empty: use ``system``.
    public init(systemAnd certificates: [Certificate]) throws(PincheckError) {
        guard !certificates.isEmpty else { throw PincheckError(.emptyInput, "no certificates to add to the system store") }
        do { self.store = try X509Store(systemDefaults: true, certificates: certificates.map(\.handle)) } catch { throw PincheckError(error) }
        self.certificates = certificates
        self.origin = TrustAnchors.system.origin
        self.certificatesAreWebPKIRoots = false
    }

    /// Whether a path ending at `top` ends at a private anchor: one of the caller's own
    /// certificates, not declared a Web PKI root. The system store's roots are the Web PKI's.
    func isPrivateAnchor(_ top: Certificate) -> Bool {
        !certificatesAreWebPKIRoots && certificates.contains(top)
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

    /// True when `certificate` is one of the caller-given anchors (always false for the system store).
    func contains(_ certificate: Certificate) -> Bool {
        certificates.contains(certificate)
    }
}
