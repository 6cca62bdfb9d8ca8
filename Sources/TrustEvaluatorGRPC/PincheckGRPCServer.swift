import GRPCCore
import GRPCNIOTransportHTTP2Posix
import NIOSSL
import ServerTrust
import SwiftASN1
import TrustEvaluator
import TrustEvaluatorNIO
import X509

// gRPC Swift 2's availability, spelled out (see PincheckGRPCClientSettings).
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension PincheckClientCertificateVerifier {
    /// gRPC Swift 2's server transport security for mutual TLS judged by this verifier: every client
    /// must present a certificate, and Pincheck decides — anchors or SPIFFE trust domains, pins,
    /// revocation, required identities. gRPC is told the **verified path** as the validated chain
    /// (`HTTP2ServerTransport.Posix.Context.peerCertificateChain`); a refused client fails the
    /// handshake and reaches no service.
    ///
    /// ```swift
    /// let transport = HTTP2ServerTransport.Posix(address: .ipv4(host: "0.0.0.0", port: 8443),
    ///     transportSecurity: verifier.grpcServerTransportSecurity(
    ///         certificateChain: [.file(path: "server.pem", format: .pem)], privateKey: .file(path: "server.key", format: .pem)))
    /// // in a handler: verifier.decision(in: context)?.clientIdentities
    /// ```
    /// - Parameters:
    ///   - certificateChain: The server's own chain, leaf first.
    ///   - privateKey: The server's key.
    ///   - onDecision: Receives every decision, accepted or not (for logs and metrics).
    public func grpcServerTransportSecurity(
        certificateChain: [TLSConfig.CertificateSource], privateKey: TLSConfig.PrivateKeySource,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    )
        -> HTTP2ServerTransport.Posix.TransportSecurity
    {
        let verification = callback(onDecision: onDecision)
        return .mTLS(certificateChain: certificateChain, privateKey: privateKey) { config in
            config.clientCertificateVerification = .noHostnameVerification
            config.customVerificationCallback = verification
        }
    }

    /// The decision that let in the client of the connection an RPC came on — its verdict has the
    /// verified path and the client's identities (`clientIdentities`) — or nil on a connection this
    /// verifier did not let in (or a transport other than `grpcServerTransportSecurity(certificateChain:privateKey:onDecision:)`'s).
    public func decision(in context: ServerContext) -> ChallengeDecision? {
        guard let posix = context.transportSpecific as? HTTP2ServerTransport.Posix.Context, let leaf = posix.peerCertificate else { return nil }
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(leaf)) != nil else { return nil }
        return decision(forLeaf: serializer.serializedBytes)
    }
}
