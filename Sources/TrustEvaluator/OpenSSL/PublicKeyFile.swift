internal import COpenSSL

/// A public key that will be served before any certificate for it exists: from a certificate
/// signing request, a public key or a private key (PEM), as `pincheck plan --next` and
/// `--backup` take them.
package struct PublicKeyFile: Sendable {
    /// What the file was: `certificate request`, `public key` or `private key`.
    package let kind: String
    /// The SubjectPublicKeyInfo DER (what an SPKI pin hashes).
    package let subjectPublicKeyInfo: [UInt8]

    /// The SHA-256 SPKI pin of the key.
    package var pin: PublicKeyPin { PublicKeyPin(algorithm: .sha256, unchecked: Digest.sha256(subjectPublicKeyInfo)) }

    /// Reads the key of a PEM CSR, public key or private key; nil when the text holds none of them
    /// (a certificate, say).
    /// - Throws: ``PincheckError`` when such a block is there but does not parse.
    package static func read(_ bytes: [UInt8], source: String) throws(PincheckError) -> PublicKeyFile? {
        let text = String(decoding: bytes, as: UTF8.self)
        let kind: String
        if text.contains("-----BEGIN CERTIFICATE REQUEST-----") || text.contains("-----BEGIN NEW CERTIFICATE REQUEST-----") {
            kind = "certificate request"
        } else if text.contains("-----BEGIN PUBLIC KEY-----") {
            kind = "public key"
        } else if text.contains("PRIVATE KEY-----") {
            kind = "private key"
        } else {
            return nil
        }
        OpenSSLErrorStack.clear()
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
                key = PEM_read_bio_PrivateKey(bio, nil, nil, nil)
            }
            defer {
                if let request { X509_REQ_free(request) } else if let key { EVP_PKEY_free(key) }
            }
            guard let key else { return nil }
            var out: UnsafeMutablePointer<UInt8>? = nil
            let length = i2d_PUBKEY(key, &out)
            guard length > 0, let out else { return nil }
            defer { shim_OPENSSL_free(out) }
            return Array(UnsafeBufferPointer(start: out, count: Int(length)))
        }
        guard let spki else {
            throw PincheckError(.malformedPEM, "the \(kind) does not parse: \(OpenSSLErrorStack.drainedText())", source: source)
        }
        return PublicKeyFile(kind: kind, subjectPublicKeyInfo: spki)
    }
}
