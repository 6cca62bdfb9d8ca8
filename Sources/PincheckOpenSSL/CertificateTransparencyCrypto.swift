internal import COpenSSL

/// What Certificate Transparency needs from OpenSSL: the leaf's SCT list extension, the
/// precertificate TBSCertificate a log signed (RFC 6962 §3.2), and a log's signature check.
/// Parsing the SCT list and building the signed structure are the engine's (plain bytes).
package enum CertificateTransparencyCrypto {
    /// The signature algorithms RFC 6962 §2.1.4 allows for a log: SHA-256 with ECDSA (NIST P-256)
    /// or RSA (PKCS #1 v1.5, 2048 bits or more).
    package enum KeyKind: Sendable, Hashable {
        case ecdsa
        case rsa
    }

    /// A log's public key, decoded once when its list is read (OpenSSL 3's decoders cost more than
    /// the signature check itself).
    ///
    /// `@unchecked Sendable`: the `EVP_PKEY` is never changed after `init`; each verification uses
    /// its own digest context, which OpenSSL allows concurrently on one key.
    package final class LogKey: @unchecked Sendable {
        private let key: OpaquePointer
        /// ECDSA or RSA.
        package let kind: KeyKind

        /// `nil` for bytes that are not a SubjectPublicKeyInfo OpenSSL reads, or a key RFC 6962 does not allow.
        package init?(spkiDER: [UInt8]) {
            guard let key = CertificateTransparencyCrypto.readKey(spkiDER) else { return nil }
            switch EVP_PKEY_get_base_id(key) {
            case EVP_PKEY_EC: kind = .ecdsa
            case EVP_PKEY_RSA: kind = .rsa
            default:
                EVP_PKEY_free(key)
                return nil
            }
            self.key = key
        }

        deinit { EVP_PKEY_free(key) }

        /// True when `signature` is this key's SHA-256 signature of `message`.
        package func verify(signature: [UInt8], message: [UInt8]) -> Bool {
            guard !signature.isEmpty, let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            defer { OpenSSLErrorStack.clear() }
            guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
            return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        }
    }

    /// The TLS-encoded SCT list an extension carries: its value is a DER OCTET STRING holding it
    /// (RFC 6962 §3.3, in a certificate and in an OCSP SingleResponse alike).
    static func sctList(in extensionPointer: OpaquePointer?) -> [UInt8]? {
        guard let extensionPointer, let data = X509_EXTENSION_get_data(extensionPointer),
            let bytes = ASN1_STRING_get0_data(data)
        else { return nil }
        let value = Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))))
        let (inner, consumed) = DERDecoding.decode(value) { d2i_ASN1_OCTET_STRING(nil, $0, $1) }
        OpenSSLErrorStack.clear()
        guard let inner else { return nil }
        defer { ASN1_OCTET_STRING_free(inner) }
        guard consumed == value.count else { return nil }
        guard let innerBytes = ASN1_STRING_get0_data(inner) else { return [] }
        return Array(UnsafeBufferPointer(start: innerBytes, count: Int(ASN1_STRING_length(inner))))
    }

    /// True when the bytes are exactly one SubjectPublicKeyInfo OpenSSL reads, of any key type.
    package static func isSubjectPublicKeyInfo(_ spkiDER: [UInt8]) -> Bool {
        guard let key = readKey(spkiDER) else { return false }
        EVP_PKEY_free(key)
        return true
    }

    private static func readKey(_ spkiDER: [UInt8]) -> OpaquePointer? {
        let (key, consumed) = DERDecoding.decode(spkiDER) { d2i_PUBKEY(nil, $0, $1) }
        OpenSSLErrorStack.clear()
        guard let key else { return nil }
        guard consumed == spkiDER.count else {
            EVP_PKEY_free(key)
            return nil
        }
        return key
    }
}

extension X509Handle {
    /// What the certificate says about embedded SCTs.
    package enum EmbeddedSCTs: Sendable, Equatable {
        /// No SCT list extension (1.3.6.1.4.1.11129.2.4.2).
        case absent
        /// The extension occurs more than once, or its value is not an OCTET STRING.
        case malformed(String)
        /// The TLS-encoded SignedCertificateTimestampList the extension carries.
        case list([UInt8])
    }

    /// The leaf's embedded SCT list, still TLS-encoded (RFC 6962 §3.3).
    package var embeddedSCTs: EmbeddedSCTs {
        let index = X509_get_ext_by_NID(ref, NID_ct_precert_scts, -1)
        guard index >= 0 else { return .absent }
        guard X509_get_ext_by_NID(ref, NID_ct_precert_scts, index) < 0 else {
            return .malformed("the certificate carries the SCT list extension more than once")
        }
        guard let list = CertificateTransparencyCrypto.sctList(in: X509_get_ext(ref, index)) else {
            return .malformed("the SCT list extension's value is not one OCTET STRING")
        }
        return .list(list)
    }

    /// The TBSCertificate the log signed for a precertificate: this certificate's, with the SCT list
    /// extension taken out (RFC 6962 §3.2), re-encoded. `nil` when OpenSSL cannot encode it.
    package var precertificateTBS: [UInt8]? {
        guard let copy = X509_dup(ref) else { return nil }
        defer { X509_free(copy) }
        defer { OpenSSLErrorStack.clear() }
        let index = X509_get_ext_by_NID(copy, NID_ct_precert_scts, -1)
        if index >= 0, let removed = X509_delete_ext(copy, index) { X509_EXTENSION_free(removed) }
        guard let encoded = DEREncoding.encode({ i2d_re_X509_tbs(copy, $0) }) else { return nil }
        return encoded
    }
}
