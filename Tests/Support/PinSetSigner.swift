import TrustEvaluatorCore
import TrustEvaluatorFormats

/// An Ed25519 key pair made for one test, signing pin-set update documents.
package struct PinSetSigner {
    package let privateKey: [UInt8]
    package let key: PinSetVerificationKey
    package init() throws {
        let pair = try Ed25519.generate()
        privateKey = Array(pair.privateKeyPEM.utf8)
        key = try PinSetVerificationKey(rawRepresentation: pair.publicKey)
    }
    package func sign(_ document: [UInt8]) throws -> [UInt8] { try Ed25519.sign(document, privateKeyPEM: privateKey).signature }
}
