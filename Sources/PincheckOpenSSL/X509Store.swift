internal import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Owns one OpenSSL `X509_STORE`: the anchors a verification may end at.
///
/// `@unchecked Sendable`: the store is filled in `init` and never modified afterwards; OpenSSL
/// locks it internally for lookups (including the lazy hashed-directory lookups of the system
/// store), so concurrent verifications against it are safe.
package final class X509Store: @unchecked Sendable {
    let ref: OpaquePointer
    /// The certificates this store lent to verifications (system-store roots), wrapped once each:
    /// wrapping re-encodes and inspects a certificate, too much to repeat on every verification.
    /// Keyed by the `X509` address, which stays valid and unique: the store keeps every certificate
    /// it has loaded until it is freed, and each handle holds its own reference as well.
    private let lent = PThreadLocked<[UInt: X509Handle]>([:])
    /// How many lent certificates are remembered (a system store holds a few hundred roots).
    private static let lentCapacity = 4_096

    /// A store with `certificates` in it and, when `systemDefaults`, OpenSSL's default locations
    /// (`SSL_CERT_FILE` and `SSL_CERT_DIR` when set). A missing default file or directory is not an
    /// error: the store then trusts only what was added.
    package init(systemDefaults: Bool, certificates: [X509Handle]) throws(OpenSSLFailure) {
        guard let store = X509_STORE_new() else { throw OpenSSLFailure(.library, "X509_STORE_new failed") }
        OpenSSLErrorStack.clear()
        if systemDefaults {
            _ = X509_STORE_set_default_paths(store)
            _ = OpenSSLErrorStack.drain()
        }
        for certificate in certificates {
            OpenSSLErrorStack.clear()
            // The store takes its own reference. Adding the same certificate twice is harmless.
            if X509_STORE_add_cert(store, certificate.ref) != 1 { _ = OpenSSLErrorStack.drain() }
        }
        self.ref = store
    }

    deinit { X509_STORE_free(ref) }

    /// Where OpenSSL looks for the system's anchors: the environment's `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` when set, else the locations OpenSSL was built with.
    package static var defaultLocations: (file: String, directory: String) {
        func environment(_ name: UnsafePointer<CChar>?, _ fallback: UnsafePointer<CChar>?) -> String {
            if let name, let value = getenv(name) { return String(cString: value) }
            return fallback.map { String(cString: $0) } ?? ""
        }
        return (
            environment(X509_get_default_cert_file_env(), X509_get_default_cert_file()),
            environment(X509_get_default_cert_dir_env(), X509_get_default_cert_dir())
        )
    }

    /// Whether the store holds a certificate that may have issued `certificate` (its subject and
    /// key identifier match: OpenSSL's own issuer lookup, which for the system store reads the
    /// hashed directory too). The signature is not checked here: a verification does that.
    package func holdsIssuer(of certificate: X509Handle) -> Bool {
        guard let context = X509_STORE_CTX_new() else { return false }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, ref, certificate.ref, nil) == 1 else { return false }
        var issuer: OpaquePointer? = nil
        let found = X509_STORE_CTX_get1_issuer(&issuer, context, certificate.ref)
        if let issuer { X509_free(issuer) }
        OpenSSLErrorStack.clear()
        return found == 1
    }

    /// The handle for an `X509` this store lent out, the same handle every time.
    func handle(lentAt x509: OpaquePointer) -> X509Handle? {
        let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(x509)))
        if let known = lent.withLock({ $0[key] }) { return known }
        guard let handle = X509Handle(borrowing: x509) else { return nil }
        return lent.withLock { table in
            if let raced = table[key] { return raced }
            if table.count < Self.lentCapacity { table[key] = handle }
            return handle
        }
    }
}
