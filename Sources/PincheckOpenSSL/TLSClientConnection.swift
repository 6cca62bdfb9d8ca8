internal import COpenSSL
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A libssl client connection over a socket the caller owns and waits on. Trust is not decided
/// here: the context verifies nothing (`SSL_VERIFY_NONE`) and hands the served chain over.
///
/// Not `Sendable`: one thread drives a handshake from start to end.
package final class TLSClientConnection {
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    /// What one handshake step asks for next.
    package enum Step: Sendable, Equatable {
        case complete
        /// Wait until the socket is readable, then step again.
        case wantRead
        /// Wait until the socket is writable, then step again.
        case wantWrite
        case failed(TLSFailure)
    }

    /// Why a handshake failed.
    package struct TLSFailure: Error, Sendable, Equatable {
        package enum Kind: Sendable, Equatable {
            /// The peer sent a TLS alert.
            case alert
            /// The peer does not speak TLS on this port.
            case notTLS
            /// The peer closed the connection.
            case closed
            case failed
        }
        package let kind: Kind
        package let message: String
        init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }
    }

    /// A client for a connected socket: TLS 1.2 to 1.3, no session resumption, the OCSP staple
    /// and SCTs asked for.
    /// - Parameters:
    ///   - socket: A connected, non-blocking socket; the caller closes it after this object is gone.
    ///   - serverName: Sent as SNI when given.
    ///   - alpn: Protocols to offer, in order.
    package init(socket: Int32, serverName: String?, alpn: [String]) throws(TLSFailure) {
        OpenSSLErrorStack.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TLSFailure(.failed, "SSL_CTX_new failed: \(OpenSSLErrorStack.drainedText())")
        }
        _ = shim_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        _ = shim_SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION)
        // The evaluator decides trust, on the chain exactly as served.
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        // No resumption: a resumed session skips the certificate entirely.
        _ = shim_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
        _ = SSL_CTX_set_options(context, shim_SSL_OP_NO_TICKET())
        if !alpn.isEmpty {
            var wire: [UInt8] = []
            for proto in alpn where !proto.utf8.isEmpty && proto.utf8.count < 256 {
                wire.append(UInt8(proto.utf8.count))
                wire += Array(proto.utf8)
            }
            _ = wire.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(context, $0.baseAddress, UInt32($0.count)) }
        }
        // Ask for SCTs (the signed_certificate_timestamp extension). Permissive: CT never fails the
        // handshake, and with SSL_VERIFY_NONE and no anchors OpenSSL skips validating them anyway.
        guard SSL_CTX_enable_ct(context, Int32(SSL_CT_VALIDATION_PERMISSIVE)) == 1 else {
            SSL_CTX_free(context)
            throw TLSFailure(.failed, "cannot request SCTs: \(OpenSSLErrorStack.drainedText())")
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw TLSFailure(.failed, "SSL_new failed: \(OpenSSLErrorStack.drainedText())")
        }
        self.context = context
        self.ssl = ssl
        if let serverName {
            guard shim_SSL_set_tlsext_host_name(ssl, serverName) == 1 else {
                throw TLSFailure(.failed, "cannot send \"\(serverName)\" as SNI: \(OpenSSLErrorStack.drainedText())")
            }
        }
        _ = shim_SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp)
        guard SSL_set_fd(ssl, socket) == 1 else {
            throw TLSFailure(.failed, "SSL_set_fd failed: \(OpenSSLErrorStack.drainedText())")
        }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
        OpenSSLErrorStack.clear()
    }

    /// One `SSL_connect` step.
    package func step() -> Step {
        OpenSSLErrorStack.clear()
        errno = 0
        let result = SSL_connect(ssl)
        if result == 1 { return .complete }
        let error = SSL_get_error(ssl, result)
        let savedErrno = errno
        switch error {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        default: return .failed(Self.classify(sslError: error, errno: savedErrno, entries: OpenSSLErrorStack.drain()))
        }
    }

    /// Sends close_notify (best effort).
    package func shutdown() { _ = SSL_shutdown(ssl) }

    /// Turns a failed `SSL_connect` into a reason a person can act on.
    private static func classify(sslError: Int32, errno savedErrno: Int32, entries: [OpenSSLErrorEntry]) -> TLSFailure {
        let sslEntry = entries.first { ERR_GET_LIB($0.code) == ERR_LIB_SSL }
        let detail = entries.isEmpty ? "" : ": " + entries.map(\.description).joined(separator: "; ")
        if let sslEntry {
            let reason = ERR_GET_REASON(sslEntry.code)
            if reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256 {
                let alert = String(cString: SSL_alert_desc_string_long(reason - SSL_AD_REASON_OFFSET))
                return TLSFailure(.alert, "the server sent the TLS alert \"\(alert)\" (\(reason - SSL_AD_REASON_OFFSET))")
            }
            switch reason {
            case SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_UNKNOWN_PROTOCOL,
                SSL_R_RECORD_LENGTH_MISMATCH, SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST:
                return TLSFailure(.notTLS, "the server did not answer with TLS (plain HTTP or another protocol on this port?)\(detail)")
            case SSL_R_UNEXPECTED_EOF_WHILE_READING:
                return TLSFailure(.closed, "the server closed the connection during the TLS handshake")
            default:
                return TLSFailure(.failed, "the TLS handshake failed\(detail)")
            }
        }
        if sslError == SSL_ERROR_SYSCALL || sslError == SSL_ERROR_ZERO_RETURN {
            if savedErrno == ECONNRESET || savedErrno == EPIPE || savedErrno == 0 {
                return TLSFailure(.closed, "the server closed the connection during the TLS handshake")
            }
            return TLSFailure(.failed, "the TLS handshake failed: \(String(cString: strerror(savedErrno)))")
        }
        return TLSFailure(.failed, "the TLS handshake failed (SSL_get_error \(sslError))\(detail)")
    }

    // MARK: After the handshake

    /// The chain exactly as sent, leaf first (on the client side the stack includes the leaf).
    /// libssl has already decoded these certificates: each handle takes its own reference instead
    /// of encoding and decoding it again (OpenSSL 3.0 spends about 100 µs decoding one).
    /// - Throws: ``TLSFailure`` when a certificate cannot be re-encoded or is larger than `maximumBytes`.
    package func servedChain(maximumBytes: Int) throws(TLSFailure) -> [X509Handle] {
        guard let stack = SSL_get_peer_cert_chain(ssl) else { return [] }
        var certificates: [X509Handle] = []
        for index in 0..<shim_sk_X509_num(stack) {
            guard let x509 = shim_sk_X509_value(stack, index) else { continue }
            guard let handle = X509Handle(borrowing: x509) else {
                throw TLSFailure(.failed, "served certificate \(index) cannot be read: \(OpenSSLErrorStack.drainedText())")
            }
            guard handle.der.count <= maximumBytes else {
                throw TLSFailure(.failed, "served certificate \(index) is \(handle.der.count) bytes; a certificate may be at most \(maximumBytes)")
            }
            certificates.append(handle)
        }
        return certificates
    }

    package var protocolVersion: String { SSL_get_version(ssl).map { String(cString: $0) } ?? "unknown" }
    package var cipher: String { SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "unknown" }
    package var sessionResumed: Bool { SSL_session_reused(ssl) == 1 }

    /// The key-exchange group negotiated, by OpenSSL's name (`x25519`, `secp256r1`, and from 3.5
    /// the hybrid `X25519MLKEM768`); nil when none was (TLS 1.2 with RSA key exchange).
    package var keyExchangeGroup: String? {
        let group = shim_SSL_get_negotiated_group(ssl)
        guard group > 0, let name = SSL_group_to_name(ssl, Int32(truncatingIfNeeded: group)) else { return nil }
        return String(cString: name)
    }

    package var selectedALPN: String? {
        var data: UnsafePointer<UInt8>? = nil
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The stapled OCSP response, as sent.
    package var stapledOCSPResponse: [UInt8]? {
        var data: UnsafePointer<UInt8>? = nil
        let length = shim_SSL_get_tlsext_status_ocsp_resp(ssl, &data)
        guard let data, length > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    /// One SCT as the peer presented it, unverified.
    package struct PresentedSCT: Sendable, Equatable {
        package enum Source: Sendable, Equatable { case tlsExtension, certificate, ocspResponse }
        package let source: Source
        package let version: Int
        package let logID: [UInt8]
        package let timestampMilliseconds: UInt64
        package let signatureAlgorithm: String?
        package let extensions: [UInt8]
        package let signature: [UInt8]
    }

    /// The SCTs the server presented, in OpenSSL's order: TLS extension, stapled OCSP response,
    /// certificate. OpenSSL reads the certificate's SCT list from the leaf alone (no issuer needed).
    /// A list that does not parse (from any of the three) contributes nothing and its errors are
    /// discarded: a malformed SCT list is the server's problem, not a reason to lose the chain.
    package var presentedSCTs: [PresentedSCT] {
        OpenSSLErrorStack.clear()
        defer { OpenSSLErrorStack.clear() }
        // Owned by `ssl`, valid until SSL_free: everything is copied out before returning.
        guard let stack = SSL_get0_peer_scts(ssl) else { return [] }
        var timestamps: [PresentedSCT] = []
        for index in 0..<shim_sk_SCT_num(stack) {
            guard let sct = shim_sk_SCT_value(stack, index) else { continue }
            let source: PresentedSCT.Source
            switch SCT_get_source(sct) {
            case SCT_SOURCE_TLS_EXTENSION: source = .tlsExtension
            case SCT_SOURCE_X509V3_EXTENSION: source = .certificate
            case SCT_SOURCE_OCSP_STAPLED_RESPONSE: source = .ocspResponse
            default: continue  // SSL_get0_peer_scts sets one of the three on every SCT it returns.
            }
            let nid = SCT_get_signature_nid(sct)
            timestamps.append(
                PresentedSCT(
                    source: source,
                    version: Int(SCT_get_version(sct).rawValue),
                    logID: Self.bytes(sct, SCT_get0_log_id),
                    timestampMilliseconds: SCT_get_timestamp(sct),
                    signatureAlgorithm: nid == NID_undef ? nil : OBJ_nid2ln(nid).map { String(cString: $0) },
                    extensions: Self.bytes(sct, SCT_get0_extensions),
                    signature: Self.bytes(sct, SCT_get0_signature)))
        }
        return timestamps
    }

    /// Copies a field an `SCT_get0_…` accessor lends (the SCT keeps ownership).
    private static func bytes(
        _ sct: OpaquePointer,
        _ accessor: (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int
    ) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>? = nil
        let length = accessor(sct, &data)
        guard let data, length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }
}
