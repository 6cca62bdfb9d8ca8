package import PincheckOpenSSL

extension PincheckError {
    /// The engine's error for a failure of the OpenSSL module, naming the input it was about.
    package init(_ failure: OpenSSLFailure, source: String? = nil) {
        if failure.kind == .passphraseNeeded {
            self.init(.malformedPEM, "\(failure.message): \(Self.passphraseHelp)", source: source)
            return
        }
        let code: Code =
            switch failure.kind {
            case .malformedDER: .malformedDER
            case .malformedPEM, .passphraseNeeded: .malformedPEM
            case .emptyInput: .emptyInput
            case .tooLarge: .tooLarge
            case .wrongKeyType: .invalidPolicy
            case .library: .openSSL
            }
        self.init(code, failure.message, source: source)
    }

    /// Where a private key's passphrase can come from, as the command documents it.
    package static let passphraseHelp = "give its passphrase with --passphrase-file FILE or the PINCHECK_KEY_PASSPHRASE environment variable"
}
