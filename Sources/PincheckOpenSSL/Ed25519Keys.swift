internal import COpenSSL

/// Ed25519 (RFC 8032) through OpenSSL's EVP: the signatures of pin-set updates.
package enum Ed25519Keys {
    /// Raw public keys are 32 bytes; signatures 64.
    package static let publicKeyLength = 32
    package static let signatureLength = 64

    /// True when `signature` is `message`'s Ed25519 signature by `publicKey` (32 raw bytes).
    package static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureLength, publicKey.count == publicKeyLength else { return false }
        guard let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, publicKey.count) else {
            OpenSSLErrorStack.clear()
            return false
        }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else {
            OpenSSLErrorStack.clear()
            return false
        }
        let result = EVP_DigestVerify(context, signature, signature.count, message, message.count)
        OpenSSLErrorStack.clear()
        return result == 1
    }

    /// A new key pair: the private key as PKCS #8 PEM and the raw public key.
    package static func generate() throws(OpenSSLFailure) -> (privateKeyPEM: String, publicKey: [UInt8]) {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else { throw failure("cannot create a key context") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &key) == 1, let key else { throw failure("key generation failed") }
        defer { EVP_PKEY_free(key) }
        guard let pem = PrivateKeyPEM.write(key) else { throw failure("cannot encode the private key") }
        return (String(decoding: pem, as: UTF8.self), try rawPublicKey(key))
    }

    /// Signs `message` with a PEM private key; returns the signature and the raw public key.
    /// - Parameter passphrase: For an encrypted key; without it such a key is refused (never a prompt).
    package static func sign(_ message: [UInt8], privateKeyPEM: [UInt8], passphrase: [UInt8]? = nil) throws(OpenSSLFailure) -> (
        signature: [UInt8], publicKey: [UInt8]
    ) {
        let key = try PrivateKeyPEM.read(privateKeyPEM, passphrase: passphrase, what: "signing key")
        defer { EVP_PKEY_free(key) }
        guard EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 else {
            throw OpenSSLFailure(.wrongKeyType, "the key is not an Ed25519 key (make one with pincheck keygen)")
        }
        guard let context = EVP_MD_CTX_new() else { throw failure("cannot create a signing context") }
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: signatureLength)
        var length = signature.count
        guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1,
            EVP_DigestSign(context, &signature, &length, message, message.count) == 1, length == signatureLength
        else {
            throw failure("signing failed")
        }
        return (signature, try rawPublicKey(key))
    }

    private static func rawPublicKey(_ key: OpaquePointer) throws(OpenSSLFailure) -> [UInt8] {
        var raw = [UInt8](repeating: 0, count: publicKeyLength)
        var length = raw.count
        guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == publicKeyLength else { throw failure("cannot read the public key") }
        return raw
    }

    private static func failure(_ message: String) -> OpenSSLFailure {
        OpenSSLFailure(.library, "Ed25519: \(message): \(OpenSSLErrorStack.drainedText())")
    }
}
