internal import PincheckOpenSSL

/// Ed25519 (RFC 8032): the signatures of pin-set updates, through the OpenSSL module.
package enum Ed25519 {
    /// Raw public keys are 32 bytes; signatures 64.
    package static let publicKeyLength = 32
    package static let signatureLength = 64

    /// True when `signature` is `message`'s Ed25519 signature by `publicKey` (32 raw bytes).
    package static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        Ed25519Keys.verify(signature: signature, message: message, publicKey: publicKey)
    }

    /// A new key pair: the private key as PKCS #8 PEM and the raw public key.
    package static func generate() throws(PincheckError) -> (privateKeyPEM: String, publicKey: [UInt8]) {
        do { return try Ed25519Keys.generate() } catch { throw PincheckError(error) }
    }

    /// Signs `message` with a PEM private key; returns the signature and the raw public key.
    /// - Parameter passphrase: For an encrypted key; without it such a key is refused (never a prompt).
    package static func sign(_ message: [UInt8], privateKeyPEM: [UInt8], passphrase: [UInt8]? = nil) throws(PincheckError) -> (
        signature: [UInt8], publicKey: [UInt8]
    ) {
        do { return try Ed25519Keys.sign(message, privateKeyPEM: privateKeyPEM, passphrase: passphrase) } catch { throw PincheckError(error) }
    }
}

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
    /// - Throws: ``PincheckError`` naming `source` when such a block is there but does not parse,
    ///   or holds a key no TLS server certificate can carry.
    /// - Parameter passphrase: For an encrypted private key; without it such a key is refused
    ///   with a typed error (OpenSSL is never allowed to prompt).
    package static func read(_ bytes: [UInt8], source: String, passphrase: [UInt8]? = nil) throws(PincheckError) -> PublicKeyFile? {
        do {
            return try PublicKeyReader.read(bytes, passphrase: passphrase).map {
                PublicKeyFile(kind: $0.kind, subjectPublicKeyInfo: $0.subjectPublicKeyInfo)
            }
        } catch {
            throw PincheckError(error, source: source)
        }
    }
}
