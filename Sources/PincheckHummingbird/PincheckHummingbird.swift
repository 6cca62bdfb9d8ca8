#if Hummingbird
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO

extension PincheckClientCertificateVerifier {
    /// HummingbirdTLS's configuration for a server that asks every client for a certificate and
    /// lets Pincheck judge it (mutual TLS): the anchors, pins, revocation and identity rules of
    /// this verifier. A client that presents nothing, or something refused, fails the handshake and
    /// reaches no route.
    ///
    /// Hummingbird 2.28 takes NIOSSL's callback without metadata, so NIOSSL keeps no validated
    /// chain for the connection; a route gets the verified path from ``decision(in:)``.
    ///
    /// ```swift
    /// let app = Application(router: router, server: try .tls(.http1(), configuration:
    ///     verifier.hummingbirdTLSConfiguration(certificateChain: chain, privateKey: key)))
    /// ```
    /// - Parameters:
    ///   - certificateChain: The server's own chain, leaf first.
    ///   - privateKey: The server's key.
    ///   - logger: Where the verifier's `startupWarnings`
    ///     (public roots as client anchors) are logged as warnings; nil: not logged.
    ///   - onDecision: Receives every decision, accepted or not (for logs and metrics).
    public func hummingbirdTLSConfiguration(
        certificateChain: [NIOSSLCertificateSource], privateKey: NIOSSLPrivateKeySource,
        logger: Logger? = nil,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    ) -> TLSChannelConfiguration {
        for warning in startupWarnings { logger?.warning("\(warning)") }
        return TLSChannelConfiguration(
            tlsConfiguration: Self.makeServerConfiguration(certificateChain: certificateChain, privateKey: privateKey),
            customVerificationCallback: callbackWithoutMetadata(onDecision: onDecision))
    }

    /// Pincheck's decision on the client certificate of the connection a request came on — its
    /// verdict has the verified path and the client's identities — or nil on a connection this
    /// verifier did not let in. The request context must keep its source's channel (a context
    /// conforming to ``PincheckRequestContext``).
    public func decision(in context: some PincheckRequestContext) async -> ChallengeDecision? {
        await decision(forConnection: context.channel)
    }

    /// The identities (URIs such as a SPIFFE ID, DNS names) of the client certificate this
    /// verifier let in on the request's connection, in one call: empty when there is none.
    public func clientIdentities(in context: some PincheckRequestContext) async -> [ClientIdentity] {
        await decision(in: context)?.clientIdentities ?? []
    }
}

/// A request context that keeps the connection's channel, so a route can ask the verifier for its
/// decision (``TrustEvaluatorNIO/PincheckClientCertificateVerifier/decision(in:)``).
public protocol PincheckRequestContext: RequestContext {
    /// The connection the request came on.
    var channel: any Channel { get }
}

/// Hummingbird's basic request context with the connection's channel kept.
public struct PincheckBasicRequestContext: PincheckRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}
#endif  // Hummingbird trait
