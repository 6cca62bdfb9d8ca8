internal import COpenSSL

/// A public key that will be served before any certificate for it exists: from a certificate
/// signing request, a public key or a private key (PEM), as `pincheck plan --next` and
/// `--backup` take them.
package struct PublicKeyReader: Sendable {
    /// What the file was: `certificate request`, `public key` or `private key`.
    package let kind: String
    /// The SubjectPublicKeyInfo DER (what an SPKI pin hashes).
    package let subjectPublicKeyInfo: [UInt8]

    /// Reads the key of a PEM CSR, public key or private key; nil when the text holds none of them
    /// (a certificate, say).
    /// - Throws: ``OpenSSLFailure`` when such a block is there but does not parse, or holds a key no server certificate can carry.
    /// - Parameter passphrase: For an encrypted private key; without it such a key is refused
    ///   with a typed error (OpenSSL is never allowed to prompt).
    package static func read(_ bytes: [UInt8], passphrase: [UInt8]? = nil) throws(OpenSSLFailure) -> PublicKeyReader? {
        guard let kind = kind(of: String(decoding: bytes, as: UTF8.self)) else { return nil }
        var privateKey: OpaquePointer? = nil
        if kind == "private key" {
            privateKey = try PrivateKeyPEM.read(bytes, passphrase: passphrase, what: "private key")
        }
        defer { if let privateKey { EVP_PKEY_free(privateKey) } }
        OpenSSLErrorStack.clear()
        var problem: String? = nil
        let spki: [UInt8]? = bytes.withUnsafeBytes { raw -> [UInt8]? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            let key: OpaquePointer?
            var request: OpaquePointer? = nil
            switch kind {
            case "certificate request":
                request = PEM_read_bio_X509_REQ(bio, nil, nil, nil)
                key = request.flatMap { X509_REQ_get0_pubkey($0) }
            case "public key":
                key = PEM_read_bio_PUBKEY(bio, nil, nil, nil)
            default:
                key = privateKey
            }
            defer {
                if let request { X509_REQ_free(request) } else if kind == "public key", let key { EVP_PKEY_free(key) }
            }
            guard let key else { return nil }
            // A CSR proves possession of its key by its signature: a broken one proves nothing.
            if let request, X509_REQ_verify(request, key) != 1 {
                problem = "the certificate request's signature does not verify with its own key"
                return nil
            }
            if let unusable = Self.unusableForServerCertificate(key) {
                problem = unusable
                return nil
            }
            return subjectPublicKeyInfo(key)
        }
        if let problem {
            OpenSSLErrorStack.clear()
            throw OpenSSLFailure(.wrongKeyType, problem)
        }
        guard let spki else {
            throw OpenSSLFailure(.malformedPEM, "the \(kind) does not parse: \(OpenSSLErrorStack.drainedText())")
        }
        return PublicKeyReader(kind: kind, subjectPublicKeyInfo: spki)
    }

    /// What a PEM file holds, by its labels: a certificate request, a public key, a private key; nil for none of them.
    private static func kind(of text: String) -> String? {
        if text.contains("-----BEGIN CERTIFICATE REQUEST-----") || text.contains("-----BEGIN NEW CERTIFICATE REQUEST-----") {
            return "certificate request"
        }
        if text.contains("-----BEGIN PUBLIC KEY-----") { return "public key" }
        if text.contains("PRIVATE KEY-----") { return "private key" }
        return nil
    }

    /// The key's DER SubjectPublicKeyInfo (`i2d_PUBKEY`).
    private static func subjectPublicKeyInfo(_ key: OpaquePointer) -> [UInt8]? {
        guard let encoded = DEREncoding.encode({ i2d_PUBKEY(key, $0) }) else { return nil }
        return encoded
    }

    /// Why a key cannot be a TLS server certificate's (nil: it can): a key-agreement-only key
    /// (X25519, X448, DH), DSA (no TLS 1.3 signature scheme; browsers refuse it) or RSA under
    /// 2048 bits (the CA/Browser Forum minimum, and OpenSSL's default security level 2).
    private static func unusableForServerCertificate(_ key: OpaquePointer) -> String? {
        let type = EVP_PKEY_get_base_id(key)
        switch type {
        case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS:
            let bits = EVP_PKEY_get_bits(key)
            return bits < 2048 ? "an RSA key of \(bits) bits; a server certificate needs at least 2048" : nil
        case EVP_PKEY_EC, EVP_PKEY_ED25519, EVP_PKEY_ED448:
            return nil
        case EVP_PKEY_X25519, EVP_PKEY_X448, EVP_PKEY_DH, EVP_PKEY_DHX:
            return
                "a key-agreement key (\(OBJ_nid2sn(type).map { String(cString: $0) } ?? "X25519")), which cannot sign: no server certificate can carry it"
        case EVP_PKEY_DSA:
            return "a DSA key: TLS 1.3 has no DSA signature scheme and no browser accepts one"
        default:
            let name = OBJ_nid2sn(type).map { String(cString: $0) } ?? "unknown"
            return "a \(name) key, which is not one a TLS server certificate uses (RSA, ECDSA, Ed25519, Ed448)"
        }
    }
}
