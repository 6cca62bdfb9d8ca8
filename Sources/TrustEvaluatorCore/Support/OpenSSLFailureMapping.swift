package import PincheckOpenSSL

extension PincheckError {
    /// The engine's error for a failure of the OpenSSL module, naming the input it was about.
    package init(_ failure: OpenSSLFailure, source: String? = nil) {
        let code: Code =
            switch failure.kind {
            case .malformedDER: .malformedDER
            case .malformedPEM: .malformedPEM
            case .emptyInput: .emptyInput
            case .tooLarge: .tooLarge
            case .wrongKeyType: .invalidPolicy
            case .library: .openSSL
            }
        self.init(code, failure.message, source: source)
    }
}
