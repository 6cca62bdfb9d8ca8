internal import COpenSSL

/// Reads PEM private keys without ever prompting: OpenSSL's default password callback asks on
/// the terminal (and waits for ever on a pipe) when a key is encrypted. Here the passphrase is
/// given up front, or the key is refused with a typed error that says how to give one.
enum PrivateKeyPEM {
    /// Whether the PEM text holds an encrypted private key (PKCS #8 `ENCRYPTED PRIVATE KEY`, or a
    /// traditional key with `Proc-Type: 4,ENCRYPTED`).
    package static func isEncrypted(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
    }

    /// `key`'s private key as unencrypted PKCS #8 PEM, or nil when OpenSSL cannot encode it.
    static func write(_ key: OpaquePointer) -> [UInt8]? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else { return nil }
        var pointer: UnsafeMutablePointer<CChar>? = nil
        let length = shim_BIO_get_mem_data(bio, &pointer)
        guard length > 0, let pointer else { return nil }
        return Array(UnsafeRawBufferPointer(start: pointer, count: Int(length)))
    }

    /// Parses the first private key in `bytes` (an `EVP_PKEY` the caller frees; it never leaves this module).
    /// - Parameter passphrase: For an encrypted key; nil refuses one without prompting.
    /// - Throws: ``OpenSSLFailure`` `.passphraseNeeded` for an encrypted key without a
    ///   passphrase; `.malformedPEM` for a wrong passphrase or a key that does not parse.
    static func read(_ bytes: [UInt8], passphrase: [UInt8]?, what: String) throws(OpenSSLFailure) -> OpaquePointer {
        let encrypted = isEncrypted(bytes)
        if encrypted, passphrase == nil {
            throw OpenSSLFailure(.passphraseNeeded, "the \(what) is encrypted and no passphrase was given")
        }
        OpenSSLErrorStack.clear()
        var secret = passphrase ?? []
        defer { for index in secret.indices { secret[index] = 0 } }
        let key: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return withUnsafeMutablePointer(to: &secret) { pointer in
                // The callback copies the passphrase it is handed (an empty one when none was
                // given: the read then fails) and never reads a terminal.
                PEM_read_bio_PrivateKey(
                    bio, nil,
                    { buffer, size, _, userdata in
                        guard let buffer, let userdata else { return -1 }
                        let secret = userdata.assumingMemoryBound(to: [UInt8].self).pointee
                        guard !secret.isEmpty, secret.count <= Int(size) else { return -1 }
                        secret.withUnsafeBytes { raw in
                            if let base = raw.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: secret.count) }
                        }
                        return Int32(secret.count)
                    }, pointer)
            }
        }
        guard let key else {
            let detail = OpenSSLErrorStack.drainedText()
            if encrypted { throw OpenSSLFailure(.malformedPEM, "the \(what) is encrypted and the passphrase given does not open it (\(detail))") }
            throw OpenSSLFailure(.malformedPEM, "the \(what) is not a PEM private key (\(detail))")
        }
        return key
    }
}
