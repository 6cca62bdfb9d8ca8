internal import COpenSSL
import FoundationEssentials

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
            EVP_PKEY_keygen(context, &key) == 1, let key
        else { throw failure("key generation failed") }
        defer { EVP_PKEY_free(key) }
        guard let pem = PrivateKeyPEM.write(key) else { throw failure("cannot encode the private key") }
        guard let encoded = DEREncoding.encode({ i2d_PUBKEY(key, $0) }) else { throw failure("cannot encode the public key") }
        return (pem, encoded)
    }

    /// An ECDSA signature (DER) with SHA-256 of `message` by the PEM private key.
    package static func sign(_ message: [UInt8], privateKeyPEM: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        let key = try PrivateKeyPEM.read(privateKeyPEM, passphrase: nil, what: "log key")
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw failure("cannot create a signing context") }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, nil, &length, message, message.count) == 1
        else { throw failure("signing failed") }
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
            let ext = try sctListExtension(sctList, nid: NID_ct_precert_scts)
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(copy, ext, -1) == 1 else { throw failure("cannot add the SCT list extension") }
        }
        guard X509_sign(copy, key, EVP_sha256()) > 0 else { throw failure("cannot sign the certificate") }
        guard let encoded = DEREncoding.encode({ i2d_X509(copy, $0) }) else { throw failure("cannot encode the certificate") }
        return encoded
    }

    /// A successful OCSP response, signed by the issuer itself (SHA-256), saying *good* for `leaf`
    /// from `thisUpdate` to `nextUpdate`, whose SingleResponse carries `sctList` (TLS-encoded) in
    /// the SCT list extension (RFC 6962 §3.3, 1.3.6.1.4.1.11129.2.4.5).
    /// - Returns: The response's DER, as a server staples it.
    package static func stapledResponse(
        for leaf: X509Handle, issuer: X509Handle, issuerKeyPEM: [UInt8], sctList: [UInt8],
        thisUpdate: Date, nextUpdate: Date
    ) throws(OpenSSLFailure) -> [UInt8] {
        let key = try PrivateKeyPEM.read(issuerKeyPEM, passphrase: nil, what: "issuer key")
        defer { EVP_PKEY_free(key) }
        guard let basic = OCSP_BASICRESP_new() else { throw failure("out of memory") }
        defer { OCSP_BASICRESP_free(basic) }
        // OCSP_basic_add1_status copies the ID and the times.
        guard let id = OCSP_cert_to_id(nil, leaf.ref, issuer.ref) else { throw failure("cannot make the certificate ID") }
        defer { OCSP_CERTID_free(id) }
        let from = ASN1_TIME_set(nil, time_t(thisUpdate.timeIntervalSince1970))
        let until = ASN1_TIME_set(nil, time_t(nextUpdate.timeIntervalSince1970))
        defer { ASN1_TIME_free(from); ASN1_TIME_free(until) }
        guard let single = OCSP_basic_add1_status(basic, id, V_OCSP_CERTSTATUS_GOOD, 0, nil, from, until) else {
            throw failure("cannot add the answer")
        }
        let ext = try sctListExtension(sctList, nid: NID_ct_cert_scts)
        defer { X509_EXTENSION_free(ext) }
        guard OCSP_SINGLERESP_add_ext(single, ext, -1) == 1 else { throw failure("cannot add the SCT list extension") }
        guard OCSP_basic_sign(basic, issuer.ref, key, EVP_sha256(), nil, 0) == 1,
            let response = OCSP_response_create(Int32(OCSP_RESPONSE_STATUS_SUCCESSFUL), basic)
        else { throw failure("cannot sign the response") }
        defer { OCSP_RESPONSE_free(response) }
        guard let encoded = DEREncoding.encode({ i2d_OCSP_RESPONSE(response, $0) }) else { throw failure("cannot encode the response") }
        return encoded
    }

    /// An SCT list extension (`nid`: a certificate's or an OCSP SingleResponse's) whose value is
    /// the DER OCTET STRING holding `sctList`. The caller frees it.
    private static func sctListExtension(_ sctList: [UInt8], nid: Int32) throws(OpenSSLFailure) -> OpaquePointer {
        let inner = try derOctetString(sctList)
        guard let value = ASN1_OCTET_STRING_new() else { throw failure("out of memory") }
        defer { ASN1_OCTET_STRING_free(value) }
        guard ASN1_OCTET_STRING_set(value, inner, Int32(inner.count)) == 1,
            let ext = X509_EXTENSION_create_by_NID(nil, nid, 0, value)
        else { throw failure("cannot make the SCT list extension") }
        return ext
    }

    private static func derOctetString(_ bytes: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        guard let string = ASN1_OCTET_STRING_new() else { throw failure("out of memory") }
        defer { ASN1_OCTET_STRING_free(string) }
        guard ASN1_OCTET_STRING_set(string, bytes, Int32(bytes.count)) == 1 else { throw failure("out of memory") }
        guard let encoded = DEREncoding.encode({ i2d_ASN1_OCTET_STRING(string, $0) }) else { throw failure("cannot encode an OCTET STRING") }
        return encoded
    }

    private static func failure(_ message: String) -> OpenSSLFailure {
        OpenSSLFailure(.library, "CT test log: \(message): \(OpenSSLErrorStack.drainedText())")
    }
}
