internal import COpenSSL

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

    let store: OpaquePointer
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
        guard let store = X509_STORE_new() else { fatalError("X509_STORE_new failed: out of memory") }
        self.store = store
        self.certificates = []
        self.origin = .nothing
        self.certificatesAreWebPKIRoots = false
    }

    private init() {
        guard let store = X509_STORE_new() else { fatalError("X509_STORE_new failed: out of memory") }
        OpenSSLErrorStack.clear()
        _ = X509_STORE_set_default_paths(store)
        // A missing default file or directory is not an error for OpenSSL users; it just trusts nothing.
        _ = OpenSSLErrorStack.drain()
        self.store = store
        self.certificates = []
        self.certificatesAreWebPKIRoots = false
        func environment(_ name: UnsafePointer<CChar>?, _ fallback: UnsafePointer<CChar>?) -> String {
            if let name, let value = getenv(name) { return String(cString: value) }
            return fallback.map { String(cString: $0) } ?? ""
        }
        self.origin = .system(
            file: environment(X509_get_default_cert_file_env(), X509_get_default_cert_file()),
            directory: environment(X509_get_default_cert_dir_env(), X509_get_default_cert_dir()))
    }

    /// Anchors made of exactly these certificates; the system store is not consulted.
    /// - Parameter certificates: The trust anchors: roots, or any other certificate that should
    ///   end a path (an intermediate; for certificate pinning, a leaf). Each one ends a path on
    ///   its own, with nothing above it needed, as in Chromium, Firefox, Go and rustls.
    /// - Throws: ``PincheckError`` (`input.empty`) when `certificates` is empty: an empty store
    ///   would trust nothing and almost certainly means a configuration mistake.
    ///   - webPKIRoots: Whether these are roots of the public Web PKI (a copy of a browser's
    ///     root store, x509-limbo's Web PKI cases): their chains are then held to the Baseline
    ///     Requirements rows that private PKIs are only warned about. False by default.
    public init(certificates: [Certificate], webPKIRoots: Bool = false) throws(PincheckError) {
        guard !certificates.isEmpty else {
            throw PincheckError(.emptyInput, "no trust anchors given (an empty anchor set would trust nothing)")
        }
        guard let store = X509_STORE_new() else { throw PincheckError(.openSSL, "X509_STORE_new failed") }
        for certificate in certificates {
            OpenSSLErrorStack.clear()
            // The store takes its own reference. Adding the same certificate twice is harmless.
            if X509_STORE_add_cert(store, certificate.handle.ref) != 1 {
                _ = OpenSSLErrorStack.drain()
            }
        }
        self.store = store
        self.certificates = certificates
        self.origin = .certificates
        self.certificatesAreWebPKIRoots = webPKIRoots
    }

    /// The system store and these certificates besides (Android's `<certificates src="system"/>`
    /// next to `<certificates src="@raw/my_ca"/>`).
    /// - Throws: ``PincheckError`` (`input.empty`) when `certificates` is empty: use ``system``.
    public init(systemAnd certificates: [Certificate]) throws(PincheckError) {
        guard !certificates.isEmpty else { throw PincheckError(.emptyInput, "no certificates to add to the system store") }
        guard let store = X509_STORE_new() else { throw PincheckError(.openSSL, "X509_STORE_new failed") }
        OpenSSLErrorStack.clear()
        _ = X509_STORE_set_default_paths(store)
        _ = OpenSSLErrorStack.drain()
        for certificate in certificates {
            OpenSSLErrorStack.clear()
            if X509_STORE_add_cert(store, certificate.handle.ref) != 1 { _ = OpenSSLErrorStack.drain() }
        }
        self.store = store
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

    deinit { X509_STORE_free(store) }

    /// Certificates the store lent to a verification (a system-store root), wrapped once: wrapping
    /// re-encodes and inspects the certificate, too much to repeat on every evaluation. Keyed by
    /// the `X509` address, which stays valid and unique: the store keeps every certificate it has
    /// loaded until it is freed, and each cached `Certificate` holds its own reference as well.
    private let wrapped = BoundedCache<UInt, Certificate>(capacity: 256)

    /// The `Certificate` for an `X509` this store lent out.
    func certificate(wrapping x509: OpaquePointer) -> Certificate? {
        let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(x509)))
        if let known = wrapped.value(for: key) { return known }
        guard let handle = X509Handle(borrowing: x509) else { return nil }
        let certificate = Certificate(handle: handle)
        wrapped.insert(certificate, for: key)
        return certificate
    }

    /// True when `certificate` is one of the caller-given anchors (always false for the system store).
    func contains(_ certificate: Certificate) -> Bool {
        certificates.contains(certificate)
    }
}
