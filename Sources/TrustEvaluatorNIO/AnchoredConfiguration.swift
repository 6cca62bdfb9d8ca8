import NIOSSL
import TrustEvaluator

extension PincheckNIOVerifier {
    /// A client configuration whose only trust roots are the given certificates, for stacks that
    /// build their own `NIOSSLClientHandler` and offer no verification hook (AsyncHTTPClient 1.37:
    /// its issue 285 asks for one).
    ///
    /// This is certificate-mode anchoring, the best pinning such stacks allow today: BoringSSL
    /// accepts a chain only if it ends at one of these certificates (and carries the host name).
    /// It cannot express public-key pins, report Pincheck's reasons, or require a pinned key
    /// inside the path; prefer ``callback(host:port:onDecision:)`` where a handler can be installed.
    /// - Parameter anchors: The certificates to trust: a pinned root or intermediate (BoringSSL
    ///   then needs the rest of the path up to it served).
    /// - Throws: NIOSSL's error when a certificate cannot be converted.
    /// - Warning: A pinned intermediate only works if the server sends it; a pinned leaf only
    ///   works if BoringSSL accepts a partial chain, which NIOSSL does not enable.
    public static func makeAnchoredConfiguration(anchors: [Certificate]) throws -> TLSConfiguration {
        var configuration = makeClientConfiguration()
        // No Pincheck callback runs here: NIOSSL's own host check is the only one, so it stays on.
        configuration.certificateVerification = .fullVerification
        configuration.trustRoots = .certificates(try anchors.map { try NIOSSLCertificate(bytes: $0.derBytes, format: .der) })
        configuration.additionalTrustRoots = []
        return configuration
    }
}
