internal import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// A libssl server context that serves one chain and completes handshakes on sockets the caller
/// accepted: the TLS half of a local test or demo server. It may staple an OCSP response.
///
/// `@unchecked Sendable`: the context is set up in `init` and only read afterwards (OpenSSL makes
/// `SSL_new` on a shared context safe); each connection's `SSL` lives on one thread.
package final class TLSServerContext: @unchecked Sendable {
    private let context: OpaquePointer
    /// The response stapled to every handshake whose client asks (status_request), if any.
    private let staple: StapleBytes?

    /// - Parameters:
    ///   - chain: The certificates to serve, leaf first, exactly as a server would send them.
    ///   - privateKeyPEM: The leaf's private key (PEM, unencrypted).
    ///   - stapledOCSPResponse: An OCSP response (DER) to staple when the client asks for one.
    /// - Throws: ``OpenSSLFailure`` when the key does not load or match the leaf.
    package init(chain: [X509Handle], privateKeyPEM: [UInt8], stapledOCSPResponse: [UInt8]?) throws(OpenSSLFailure) {
        guard let leaf = chain.first else { throw OpenSSLFailure(.emptyInput, "a server needs a certificate to serve") }
        OpenSSLErrorStack.clear()
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw OpenSSLFailure(.library, "SSL_CTX_new failed") }
        func fail(_ message: String) -> OpenSSLFailure {
            SSL_CTX_free(context)
            return OpenSSLFailure(.library, "\(message): \(OpenSSLErrorStack.drainedText())")
        }
        guard SSL_CTX_use_certificate(context, leaf.ref) == 1 else { throw fail("cannot use the leaf") }
        for certificate in chain.dropFirst() where shim_SSL_CTX_add1_chain_cert(context, certificate.ref) != 1 {
            throw fail("cannot add \(certificate.subject) to the served chain")
        }
        let key: OpaquePointer
        do { key = try PrivateKeyPEM.read(privateKeyPEM, passphrase: nil, what: "server's private key") } catch {
            SSL_CTX_free(context)
            throw error
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw fail("the private key does not match the leaf")
        }
        let staple = stapledOCSPResponse.flatMap { $0.isEmpty ? nil : StapleBytes($0) }
        if let staple {
            _ = shim_SSL_CTX_set_tlsext_status_cb(context) { ssl, argument in
                guard let ssl, let argument else { return SSL_TLSEXT_ERR_NOACK }
                let bytes = Unmanaged<StapleBytes>.fromOpaque(argument).takeUnretainedValue().bytes
                // OpenSSL takes the copy and frees it with OPENSSL_free.
                guard let copy = CRYPTO_malloc(bytes.count, "TLSServerContext", 0) else { return SSL_TLSEXT_ERR_ALERT_FATAL }
                bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                _ = shim_SSL_set_tlsext_status_ocsp_resp(ssl, copy.assumingMemoryBound(to: UInt8.self), bytes.count)
                return SSL_TLSEXT_ERR_OK
            }
            // Unretained: this object holds the bytes while OpenSSL may call back (``serve(socket:)``
            // keeps it alive for each connection).
            _ = shim_SSL_CTX_set_tlsext_status_arg(context, Unmanaged.passUnretained(staple).toOpaque())
        }
        self.staple = staple
        self.context = context
    }

    deinit { SSL_CTX_free(context) }

    /// Runs one server handshake on an accepted, blocking socket, then sends close_notify. The
    /// caller closes the socket. Returns whether the handshake completed.
    @discardableResult
    package func serve(socket: Int32) -> Bool {
        guard let ssl = SSL_new(context) else {
            ERR_clear_error()
            return false
        }
        defer {
            SSL_free(ssl)
            ERR_clear_error()
        }
        return withExtendedLifetime(self) {
            SSL_set_fd(ssl, socket)
            guard SSL_accept(ssl) == 1 else { return false }
            SSL_shutdown(ssl)
            return true
        }
    }
}

/// The bytes of a stapled response, where OpenSSL's status callback finds them.
private final class StapleBytes: Sendable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}
