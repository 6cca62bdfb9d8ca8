/// Why an OpenSSL operation of this module failed, as a kind and a sentence; the engine maps the
/// kind to its own error codes (`PincheckError`). OpenSSL's error queue is drained into the
/// message before a failure leaves this module.
package struct OpenSSLFailure: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// Bytes that are not the DER structure expected, or that have bytes after it.
        case malformedDER
        /// A PEM text that does not hold what was expected (an encrypted key the passphrase given does not open included).
        case malformedPEM
        /// An encrypted private key, and no passphrase given (none is ever asked for on a terminal).
        case passphraseNeeded
        /// Nothing where something was expected (a PKCS #7 bundle without certificates).
        case emptyInput
        /// More than a bound allows.
        case tooLarge
        /// A key of another type than the operation needs.
        case wrongKeyType
        /// OpenSSL itself failed (out of memory, a context that cannot be made).
        case library
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}
