internal import COpenSSL

/// A Certificate Transparency log of one's own, for tests and local demonstrations: an ECDSA P-256
/// key that signs SCTs, and a CA that re-issues a certificate with an SCT list embedded. Never
/// used by an evaluation.
package enum CertificateTransparencyTestLog {
    /// A new log key: the private key as PKCS #8 PEM and the public key as DER SubjectPublicKeyInfo.
    package static func makeKey() throws(OpenSSLFailure) -> (privateKeyPEM: [UInt8], spkiDER: [UInt8]) {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw failure("cannot create a key context") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1,
              EVP_PKEY_keygen(context, &key) == 1, let key else { throw failure("key generation failed") }
        defer { EVP_PKEY_free(key) }
        guard let pem = PrivateKeyPEM.write(key) else { throw failure("cannot encode the private key") }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let spkiLength = i2d_PUBKEY(key, &out)
        guard spkiLength > 0, let out else { throw failure("cannot encode the public key") }
        defer { shim_OPENSSL_free(out) }
        return (pem, Array(UnsafeBufferPointer(start: out, count: Int(spkiLength))))
    }

    /// An ECDSA signature (DER) with SHA-256 of `message` by the PEM private key.
    package static func sign(_ message: [UInt8], privateKeyPEM: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        let key = try PrivateKeyPEM.read(privateKeyPEM, passphrase: nil, what: "log key")
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw failure("cannot create a signing context") }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
              EVP_DigestSign(context, nil, &length, message, message.count) == 1 else { throw failure("signing failed") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else { throw failure("signing failed") }
        return Array(signature.prefix(length))
    }

    /// `certificate` re-issued by the holder of `issuerKeyPEM` (SHA-256): the same fields, its SCT
    /// list extension replaced by one holding `sctList` (TLS-encoded), or removed when it is nil.
    /// - Returns: The new certificate's DER.
    package static func reissue(_ certificate: X509Handle, sctList: [UInt8]?, issuerKeyPEM: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        let key = try PrivateKeyPEM.read(issuerKeyPEM, passphrase: nil, what: "issuer key")
        defer { EVP_PKEY_free(key) }
        guard let copy = X509_dup(certificate.ref) else { throw failure("cannot copy the certificate") }
        defer { X509_free(copy) }
        while case let index = X509_get_ext_by_NID(copy, NID_ct_precert_scts, -1), index >= 0 {
            guard let removed = X509_delete_ext(copy, index) else { break }
            X509_EXTENSION_free(removed)
        }
        if let sctList {
            let inner = try derOctetString(sctList)
            guard let value = ASN1_OCTET_STRING_new() else { throw failure("out of memory") }
            defer { ASN1_OCTET_STRING_free(value) }
            guard ASN1_OCTET_STRING_set(value, inner, Int32(inner.count)) == 1,
                  let ext = X509_EXTENSION_create_by_NID(nil, NID_ct_precert_scts, 0, value) else { throw failure("cannot make the SCT list extension") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(copy, ext, -1) == 1 else { throw failure("cannot add the SCT list extension") }
        }
        guard X509_sign(copy, key, EVP_sha256()) > 0 else { throw failure("cannot sign the certificate") }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(copy, &out)
        guard length > 0, let out else { throw failure("cannot encode the certificate") }
        defer { shim_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    private static func derOctetString(_ bytes: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        guard let string = ASN1_OCTET_STRING_new() else { throw failure("out of memory") }
        defer { ASN1_OCTET_STRING_free(string) }
        guard ASN1_OCTET_STRING_set(string, bytes, Int32(bytes.count)) == 1 else { throw failure("out of memory") }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_ASN1_OCTET_STRING(string, &out)
        guard length > 0, let out else { throw failure("cannot encode an OCTET STRING") }
        defer { shim_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    private static func failure(_ message: String) -> OpenSSLFailure {
        OpenSSLFailure(.library, "CT test log: \(message): \(OpenSSLErrorStack.drainedText())")
    }
}
