import GRPCCore
import GRPCNIOTransportHTTP2Posix
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO

/// gRPC Swift 2 client settings that put Pincheck in charge of the TLS handshake: made in one
/// call, so the name Pincheck checks, the SNI and the `:authority` cannot drift apart.
///
/// The transport security is gRPC's `.customSecure`: the TLS handler is Pincheck's (NIOSSL with
/// Pincheck's verification callback, NIOSSL's own host check off) followed by the handler that
/// turns a refusal into a `PincheckTrustError`, so a refused RPC fails with Pincheck's reasons
/// in its error (`RPCError.cause`).
// gRPC Swift 2's own availability (its `gRPCSwiftNIOTransport 2.8` macro, which is defined only
// inside its packages: spelled out, so users' builds do not warn about an unknown platform).
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public struct PincheckGRPCClientSettings: Sendable {
    /// `.customSecure`: the handshake is the one ``config`` installs.
    public let transportSecurity: HTTP2ClientTransport.Posix.TransportSecurity
    /// The transport configuration: the authority is the pinned host (for DNS names), and each
    /// new connection gets Pincheck's TLS handlers. Change other fields freely.
    public var config: HTTP2ClientTransport.Posix.Config

    /// Settings for a client that presents no certificate of its own (for one that does, to an
    /// mTLS server: ``init(verifier:host:port:base:config:onDecision:)``).
    /// - Parameters:
    ///   - verifier: The Pincheck verifier (policy or trust manager, reporter, logger).
    ///   - host: The name the server's certificate must carry (and the SNI and authority when it
    ///     is a DNS name); the transport may connect to any address, an IP literal included.
    ///   - port: The port, for reports.
    ///   - config: The transport configuration to start from.
    ///   - onDecision: Receives every decision, accepted or not.
    /// - Throws: NIOSSL's error when the TLS context cannot be made.
    public init(
        verifier: PincheckNIOVerifier, host: String, port: Int = 443,
        config: HTTP2ClientTransport.Posix.Config = .defaults,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    ) throws {
        try self.init(
            verifier: verifier, host: host, port: port, base: PincheckNIOVerifier.makeClientConfiguration(), config: config,
            onDecision: onDecision)
    }

    /// Settings whose TLS starts from `base`: a client of an mTLS server sets its identity there
    /// (`certificateChain` and `privateKey`), and every other field is kept too (TLS versions,
    /// cipher suites, key logging) but the verification, which is Pincheck's
    /// (`PincheckNIOVerifier.makeClientConfiguration(base:)`), and ALPN, which is gRPC's (`h2`).
    /// A refusal still reaches the caller as `PincheckTrustError` (`RPCError.pincheckTrustError`).
    /// - Parameters:
    ///   - verifier: The Pincheck verifier (policy or trust manager, reporter, logger).
    ///   - host: The name the server's certificate must carry (and the SNI and authority when it
    ///     is a DNS name); the transport may connect to any address, an IP literal included.
    ///   - port: The port, for reports.
    ///   - base: The client's TLS configuration: its identity, versions, cipher suites.
    ///   - config: The transport configuration to start from.
    ///   - onDecision: Receives every decision, accepted or not.
    /// - Throws: `PincheckError` (`policy.invalid`) when `base` offers a pre-shared key; NIOSSL's
    ///   error when the TLS context cannot be made (a key that does not match its certificate).
    public init(
        verifier: PincheckNIOVerifier, host: String, port: Int = 443, base: TLSConfiguration,
        config: HTTP2ClientTransport.Posix.Config = .defaults,
        onDecision: @escaping @Sendable (ChallengeDecision) -> Void = { _ in }
    ) throws {
        var tls = try PincheckNIOVerifier.makeClientConfiguration(base: base)
        tls.applicationProtocols = ["grpc-exp", "h2"]
        let context = try NIOSSLContext(configuration: tls)
        var config = config
        let isIPLiteral = HostName.isIPLiteral(host)
        config.http2.authority = isIPLiteral ? nil : host
        config.channelDebuggingCallbacks.onCreateTCPConnection = { channel in
            channel.eventLoop.makeCompletedFuture {
                try verifier.addClientHandlers(
                    to: channel.pipeline.syncOperations, context: context, host: host, port: port,
                    position: .first, onDecision: onDecision)
            }
        }
        self.transportSecurity = .customSecure
        self.config = config
    }

    /// A client transport to `target` with these settings.
    /// - Throws: gRPC's error when no resolver handles the target.
    public func makeTransport(
        connectingTo target: any ResolvableTarget,
        eventLoopGroup: any EventLoopGroup = .singletonMultiThreadedEventLoopGroup
    ) throws -> HTTP2ClientTransport.Posix {
        try HTTP2ClientTransport.Posix(
            target: target, transportSecurity: transportSecurity, config: config,
            eventLoopGroup: eventLoopGroup)
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension RPCError {
    /// Pincheck's refusal behind this RPC's failure, with its reason codes and evidence: the error
    /// is looked for along the chain of causes (`RPCError.cause`, gRPC's `RuntimeError.cause`),
    /// a few levels deep. Nil when the RPC failed for another reason.
    public var pincheckTrustError: PincheckTrustError? {
        var current: (any Error)? = cause
        for _ in 0..<8 {
            switch current {
            case let found as PincheckTrustError: return found
            case let rpc as RPCError: current = rpc.cause
            case let runtime as RuntimeError: current = runtime.cause
            default: return nil
            }
        }
        return nil
    }
}
