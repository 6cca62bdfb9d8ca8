import NIOSSL
import TrustEvaluator

extension PincheckNIOVerifier {
    /// A client configuration whose only trust roots are the given self-signed roots, for stacks
    /// that build their own `NIOSSLClientHandler` and offer no verification hook (AsyncHTTPClient
    /// 1.37: its issue 285 asks for one).
    ///
    /// This is root anchoring, and only that: BoringSSL accepts a chain only if it ends at one of
    /// these roots and carries the host name (NIOSSL's own name check, which stays on here).
    /// It cannot pin an intermediate or a leaf (BoringSSL has no partial chains there, so a
    /// non-self-signed anchor never ends a path), express public-key pins, report Pincheck's
    /// reasons or require a pinned key inside the path. For those, use the NIO verifier
    /// (`addClientHandlers(to:context:host:port:onDecision:)`) or gRPC's verification callback.
    /// - Parameter anchors: The self-signed roots to trust (at least one).
    /// - Throws: `PincheckError` (`policy.invalid`) for an empty list or a certificate that is not
    ///   self-signed, naming it; NIOSSL's error when a certificate cannot be converted.
    public static func makeAnchoredConfiguration(anchors: [Certificate]) throws -> TLSConfiguration {
        guard !anchors.isEmpty else {
            throw PincheckError(.invalidPolicy, "root anchoring needs at least one root certificate")
        }
        if let intermediate = anchors.first(where: { !$0.isSelfSigned }) {
            throw PincheckError(
                .invalidPolicy,
                "\(intermediate.subject) is not a self-signed root: AsyncHTTPClient's TLS (BoringSSL without partial chains) can anchor only on roots; pin intermediates or keys with the NIO verifier instead"
            )
        }
        var configuration = makeClientConfiguration()
        // No Pincheck callback runs here: NIOSSL's own host check is the only one, so it stays on.
        configuration.certificateVerification = .fullVerification
        configuration.trustRoots = .certificates(try anchors.map { try NIOSSLCertificate(bytes: $0.derBytes, format: .der) })
        configuration.additionalTrustRoots = []
        return configuration
    }
}
