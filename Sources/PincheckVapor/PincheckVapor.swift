#if Vapor
// Vapor's client is AsyncHTTPClient: `.pinned(by:base:)` comes with this product.
@_exported import PincheckAsyncHTTPClient
import NIOSSL
import ServerTrust
import SwiftASN1
import TrustEvaluator
import TrustEvaluatorNIO
import Vapor
import X509

extension HTTPServer.Configuration {
    /// Serves TLS with `certificateChain` and `privateKey`, asks every client for a certificate and
    /// lets Pincheck judge it (mutual TLS): the anchors, pins, revocation and identity rules of
    /// `verifier`, and NIOSSL's validated chain — `Request.peerCertificateChain` — is the verified
    /// path, never what the client sent. A client without a certificate, or with one the verifier
    /// refuses, fails the handshake: no request of it reaches a route.
    ///
    /// ```swift
    /// let verifier = try PincheckClientCertificateVerifier(policy: TrustPolicy(anchors: try TrustAnchors(certificates: [clientCA])),
    ///                                                      requiredIdentities: [.uri("spiffe://example.org/ns/prod/sa/api")])
    /// app.http.server.configuration.requireClientCertificates(judgedBy: verifier,
    ///     certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    /// app.get("whoami") { req in req.pincheckClientDecision(from: verifier)?.verdict?.verifiedPath?.leaf.subject ?? "" }
    /// ```
    /// - Parameters:
    ///   - verifier: Judges each client's chain.
    ///   - certificateChain: The server's own chain, leaf first.
    ///   - privateKey: The server's key.
    ///   - onDecision: Receives every decision, accepted or not (for logs and metrics).
    ///
    /// The verifier's `startupWarnings` (public roots as client
    /// anchors) are logged to the configuration's `logger` as warnings.
    public mutating func requireClientCertificates(
        judgedBy verifier: PincheckClientCertificateVerifier,
        certificateChain: [NIOSSLCertificateSource],
        privateKey: NIOSSLPrivateKeySource,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    ) {
        for warning in verifier.startupWarnings { logger.warning("\(warning)") }
        tlsConfiguration = PincheckClientCertificateVerifier.makeServerConfiguration(certificateChain: certificateChain, privateKey: privateKey)
        // Vapor takes one of the two callbacks; the one with metadata hands NIOSSL the verified path.
        customCertificateVerifyCallback = nil
        customCertificateVerifyCallbackWithMetadata = verifier.callback(onDecision: onDecision)
    }
}

extension Request {
    /// Pincheck's decision on this connection's client certificate — its verdict has the verified
    /// path and the client's identities — or nil on a connection `verifier` did not let in.
    public func pincheckClientDecision(from verifier: PincheckClientCertificateVerifier) -> ChallengeDecision? {
        // Vapor hands routes NIOSSL's validated chain as swift-certificates' type: its leaf, as DER.
        guard let leaf = peerCertificateChain?.first else { return nil }
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(leaf)) != nil else { return nil }
        return verifier.decision(forLeaf: serializer.serializedBytes)
    }

    /// The identities (URIs such as a SPIFFE ID, DNS names) of the client certificate `verifier`
    /// let in on this connection, in one call: empty when there is none.
    public func pincheckClientIdentities(from verifier: PincheckClientCertificateVerifier) -> [ClientIdentity] {
        pincheckClientDecision(from: verifier)?.clientIdentities ?? []
    }
}
#endif  // Vapor trait
