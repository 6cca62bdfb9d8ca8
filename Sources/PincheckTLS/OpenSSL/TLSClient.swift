internal import COpenSSL
import FoundationEssentials
import TrustEvaluator
#if canImport(Glibc)
import Glibc
#endif

/// One TLS handshake with libssl over a socket this type opens and closes. Trust is not decided
/// here: the context verifies nothing (`SSL_VERIFY_NONE`) and hands the served chain to the
/// caller, who runs Pincheck's evaluator on it.
///
/// Everything but name resolution happens on the calling thread, with the socket non-blocking and
/// every wait bounded by one deadline, so a silent peer ends in `.timeout`, never a hang. Name
/// resolution runs on a worker thread and is bounded by the same deadline (``NameResolver``).
enum TLSClient {
    struct Request {
        let host: String
        let port: UInt16
        let serverName: String?
        let alpn: [String]
        let deadline: ContinuousClock.Instant
        var resolver: NameResolver = .system
    }

    static func handshake(_ request: Request) throws(ProbeError) -> ProbeResult {
        let started = ContinuousClock.now
        // Writing to a socket the peer has reset raises SIGPIPE, which would kill the process.
        // Block it on this thread only, for the duration, and discard any that became pending.
        let signals = SignalMask.blockSIGPIPE()
        defer { signals.restore() }

        let connection = try TCPConnection.open(host: request.host, port: request.port, deadline: request.deadline,
                                                resolver: request.resolver)
        defer { connection.close() }

        OpenSSLErrorStack.clear()
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            throw ProbeError(.handshakeFailed, "SSL_CTX_new failed: \(OpenSSLErrorStack.drainedText())")
        }
        defer { SSL_CTX_free(ctx) }
        _ = shim_SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)
        _ = shim_SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION)
        // The evaluator decides trust, on the chain exactly as served.
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        // No resumption: a resumed session skips the certificate entirely (DESIGN §5).
        _ = shim_SSL_CTX_set_session_cache_mode(ctx, Int(SSL_SESS_CACHE_OFF))
        _ = SSL_CTX_set_options(ctx, shim_SSL_OP_NO_TICKET())
        if !request.alpn.isEmpty {
            var wire: [UInt8] = []
            for proto in request.alpn where !proto.utf8.isEmpty && proto.utf8.count < 256 {
                wire.append(UInt8(proto.utf8.count))
                wire += Array(proto.utf8)
            }
            _ = wire.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(ctx, $0.baseAddress, UInt32($0.count)) }
        }
        // Ask for SCTs (the signed_certificate_timestamp extension). Permissive: CT never fails the
        // handshake, and with SSL_VERIFY_NONE and no anchors OpenSSL skips validating them anyway.
        guard SSL_CTX_enable_ct(ctx, Int32(SSL_CT_VALIDATION_PERMISSIVE)) == 1 else {
            throw ProbeError(.handshakeFailed, "cannot request SCTs: \(OpenSSLErrorStack.drainedText())")
        }

        guard let ssl = SSL_new(ctx) else {
            throw ProbeError(.handshakeFailed, "SSL_new failed: \(OpenSSLErrorStack.drainedText())")
        }
        defer { SSL_free(ssl) }
        if let name = request.serverName {
            guard shim_SSL_set_tlsext_host_name(ssl, name) == 1 else {
                throw ProbeError(.handshakeFailed, "cannot send \"\(name)\" as SNI: \(OpenSSLErrorStack.drainedText())")
            }
        }
        _ = shim_SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp)
        guard SSL_set_fd(ssl, connection.fd) == 1 else {
            throw ProbeError(.handshakeFailed, "SSL_set_fd failed: \(OpenSSLErrorStack.drainedText())")
        }

        try runHandshake(ssl, connection: connection, deadline: request.deadline)
        defer { _ = SSL_shutdown(ssl) }

        let chain = try servedChain(ssl)
        guard !chain.isEmpty else {
            throw ProbeError(.noCertificate, "the server completed the handshake without sending a certificate")
        }
        let ocsp = stapledOCSP(ssl)
        return ProbeResult(
            servedChain: chain,
            protocolVersion: SSL_get_version(ssl).map { String(cString: $0) } ?? "unknown",
            cipher: SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "unknown",
            alpn: selectedALPN(ssl),
            stapledOCSPResponse: ocsp,
            stapledOCSPStatus: ocsp.map { ocspStatus($0, chain: chain) },
            signedCertificateTimestamps: signedCertificateTimestamps(ssl),
            peerAddress: connection.address,
            port: request.port,
            serverName: request.serverName,
            sessionResumed: SSL_session_reused(ssl) == 1,
            duration: ContinuousClock.now - started)
    }

    private static func runHandshake(_ ssl: OpaquePointer, connection: TCPConnection, deadline: ContinuousClock.Instant) throws(ProbeError) {
        while true {
            OpenSSLErrorStack.clear()
            errno = 0
            let result = SSL_connect(ssl)
            if result == 1 { return }
            let error = SSL_get_error(ssl, result)
            let savedErrno = errno
            switch error {
            case SSL_ERROR_WANT_READ:
                try connection.wait(for: Int16(POLLIN), until: deadline, during: "the TLS handshake")
            case SSL_ERROR_WANT_WRITE:
                try connection.wait(for: Int16(POLLOUT), until: deadline, during: "the TLS handshake")
            default:
                throw classify(sslError: error, errno: savedErrno, entries: OpenSSLErrorStack.drain())
            }
        }
    }

    /// Turns a failed `SSL_connect` into a reason a person can act on.
    private static func classify(sslError: Int32, errno savedErrno: Int32, entries: [OpenSSLErrorEntry]) -> ProbeError {
        let sslEntry = entries.first { ERR_GET_LIB($0.code) == ERR_LIB_SSL }
        let detail = entries.isEmpty ? "" : ": " + entries.map(\.description).joined(separator: "; ")
        if let sslEntry {
            let reason = ERR_GET_REASON(sslEntry.code)
            if reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256 {
                let alert = String(cString: SSL_alert_desc_string_long(reason - SSL_AD_REASON_OFFSET))
                return ProbeError(.tlsAlert, "the server sent the TLS alert \"\(alert)\" (\(reason - SSL_AD_REASON_OFFSET))")
            }
            switch reason {
            case SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_UNKNOWN_PROTOCOL,
                 SSL_R_RECORD_LENGTH_MISMATCH, SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST:
                return ProbeError(.notTLS, "the server did not answer with TLS (plain HTTP or another protocol on this port?)\(detail)")
            case SSL_R_UNEXPECTED_EOF_WHILE_READING:
                return ProbeError(.connectionClosed, "the server closed the connection during the TLS handshake")
            default:
                return ProbeError(.handshakeFailed, "the TLS handshake failed\(detail)")
            }
        }
        if sslError == SSL_ERROR_SYSCALL || sslError == SSL_ERROR_ZERO_RETURN {
            if savedErrno == ECONNRESET || savedErrno == EPIPE || savedErrno == 0 {
                return ProbeError(.connectionClosed, "the server closed the connection during the TLS handshake")
            }
            return ProbeError(.handshakeFailed, "the TLS handshake failed: \(String(cString: strerror(savedErrno)))")
        }
        return ProbeError(.handshakeFailed, "the TLS handshake failed (SSL_get_error \(sslError))\(detail)")
    }

    /// The chain exactly as sent, leaf first (on the client side the stack includes the leaf).
    /// libssl has already decoded these certificates: Pincheck takes its own reference on each
    /// instead of encoding and decoding it again (OpenSSL 3.0 spends about 100 µs decoding one).
    private static func servedChain(_ ssl: OpaquePointer) throws(ProbeError) -> [Certificate] {
        guard let stack = SSL_get_peer_cert_chain(ssl) else { return [] }
        var certificates: [Certificate] = []
        for index in 0..<shim_sk_X509_num(stack) {
            guard let x509 = shim_sk_X509_value(stack, index) else { continue }
            guard let handle = X509Handle(borrowing: x509) else {
                throw ProbeError(.handshakeFailed, "served certificate \(index) cannot be read: \(OpenSSLErrorStack.drainedText())")
            }
            guard handle.der.count <= Limits.maximumCertificateBytes else {
                throw ProbeError(.handshakeFailed, "served certificate \(index) is \(handle.der.count) bytes; a certificate may be at most \(Limits.maximumCertificateBytes)")
            }
            certificates.append(Certificate(handle: handle))
        }
        return certificates
    }

    private static func selectedALPN(_ ssl: OpaquePointer) -> String? {
        var data: UnsafePointer<UInt8>? = nil
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    private static func stapledOCSP(_ ssl: OpaquePointer) -> [UInt8]? {
        var data: UnsafePointer<UInt8>? = nil
        let length = shim_SSL_get_tlsext_status_ocsp_resp(ssl, &data)
        guard let data, length > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }
}

extension TLSClient {
    /// What a stapled OCSP response claims about the served leaf, in words. Nothing is verified
    /// here: the evaluator checks the response against the verified path.
    static func ocspStatus(_ der: [UInt8], chain: [Certificate]) -> String {
        guard let leaf = chain.first else { return "successful, but no leaf was served" }
        // With the issuer served, the answer is found by the leaf's full certificate ID; without
        // it (a leaf issued by the root itself, which servers do not send), by its serial number.
        let issuer = chain.count > 1 ? chain[1] : nil
        switch StapledOCSP.read(der, about: leaf, issuer: issuer) {
        case .unreadable: return "unparseable"
        case .unsuccessful(let status): return status
        case .noBasicResponse: return "successful, but without a basic response"
        case .answers(let answers):
            guard let answer = answers.first else {
                return issuer == nil ? "successful, but no status for the leaf's serial number" : "successful, but no status for the leaf"
            }
            return issuer == nil ? "\(answer.status) (by the leaf's serial number; its issuer was not served)" : answer.status
        }
    }
}

extension TLSClient {
    /// The SCTs the server presented, in OpenSSL's order: TLS extension, stapled OCSP response,
    /// certificate. OpenSSL reads the certificate's SCT list from the leaf alone (no issuer needed).
    /// A list that does not parse (from any of the three) contributes nothing and its errors are
    /// discarded: a malformed SCT list is the server's problem, not a reason to lose the chain.
    /// Nothing here verifies an SCT.
    static func signedCertificateTimestamps(_ ssl: OpaquePointer) -> [SignedCertificateTimestamp] {
        OpenSSLErrorStack.clear()
        defer { OpenSSLErrorStack.clear() }
        // Owned by `ssl`, valid until SSL_free: everything is copied out before returning.
        guard let stack = SSL_get0_peer_scts(ssl) else { return [] }
        var timestamps: [SignedCertificateTimestamp] = []
        for index in 0..<shim_sk_SCT_num(stack) {
            guard let sct = shim_sk_SCT_value(stack, index) else { continue }
            let source: SignedCertificateTimestamp.Source
            switch SCT_get_source(sct) {
            case SCT_SOURCE_TLS_EXTENSION: source = .tlsExtension
            case SCT_SOURCE_X509V3_EXTENSION: source = .certificate
            case SCT_SOURCE_OCSP_STAPLED_RESPONSE: source = .ocspResponse
            default: continue  // SSL_get0_peer_scts sets one of the three on every SCT it returns.
            }
            let nid = SCT_get_signature_nid(sct)
            timestamps.append(SignedCertificateTimestamp(
                source: source,
                version: Int(SCT_get_version(sct).rawValue),
                logID: bytes(sct, SCT_get0_log_id),
                timestampMilliseconds: SCT_get_timestamp(sct),
                signatureAlgorithm: nid == NID_undef ? nil : OBJ_nid2ln(nid).map { String(cString: $0) },
                extensions: bytes(sct, SCT_get0_extensions),
                signature: bytes(sct, SCT_get0_signature)))
        }
        return timestamps
    }

    /// Copies a field an `SCT_get0_…` accessor lends (the SCT keeps ownership).
    private static func bytes(_ sct: OpaquePointer,
                              _ accessor: (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>? = nil
        let length = accessor(sct, &data)
        guard let data, length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }
}

/// Blocks SIGPIPE on the current thread and restores the previous mask afterwards.
struct SignalMask {
    private var previous = sigset_t()

    static func blockSIGPIPE() -> SignalMask {
        var mask = SignalMask()
        var block = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &block, &mask.previous)
        return mask
    }

    func restore() {
        // Consume a SIGPIPE raised while blocked, so it is not delivered when unblocked.
        var previous = self.previous
        var pending = sigset_t()
        sigpending(&pending)
        if sigismember(&pending, SIGPIPE) == 1, sigismember(&previous, SIGPIPE) == 0 {
            var only = sigset_t()
            sigemptyset(&only)
            sigaddset(&only, SIGPIPE)
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&only, nil, &zero)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
}
