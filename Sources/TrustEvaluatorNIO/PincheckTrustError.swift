import NIOCore
import NIOSSL
import NIOTLS
import ServerTrust
import TrustEvaluator

/// Pincheck refused the peer: the error a NIO caller sees instead of BoringSSL's
/// `CERTIFICATE_VERIFY_FAILED`, carrying the verdict — reason codes, evidence, verified path.
///
/// It reaches the caller through the channel's error path (`errorCaught`, so an
/// `NIOAsyncChannel`'s inbound stream and `executeThenClose` throw it), the promises of writes made
/// before or during the handshake, and ``PincheckNIOVerifier/handshakeCompleted(on:)``.
public struct PincheckTrustError: Error, Sendable, CustomStringConvertible {
    /// The adapter's decision: disposition, rule, the verdict and the error it made.
    public let decision: ChallengeDecision
    /// What TLS said when the handshake failed (NIOSSL's own error), for the record.
    public let underlying: (any Error & Sendable)?

    /// Made by this package's roads (the NIO handler, AsyncHTTPClient's connection initializers).
    package init(decision: ChallengeDecision, underlying: (any Error & Sendable)?) {
        self.decision = decision
        self.underlying = underlying
    }

    /// The verdict behind the refusal, when the chain could be evaluated.
    public var verdict: Verdict? { decision.verdict }
    /// The reasons' stable codes (`pin.mismatch`, `chain.expired`, …).
    public var codes: [Reason.Code] { decision.verdict?.failures.map(\.code) ?? [] }

    public var description: String {
        var lines = ["Pincheck refused the TLS peer (\(decision.disposition.name))"]
        if let error = decision.error { lines.append("  \(error.message)") }
        for reason in decision.verdict?.failures ?? [] { lines.append("  \(reason.code): \(reason.message)") }
        return lines.joined(separator: "\n")
    }
}

/// The decision one connection's verification callback reached, kept for the handler that
/// translates the handshake's failure.
final class DecisionRecord: Sendable {
    private let decision = Locked<ChallengeDecision?>(nil)
    func record(_ value: ChallengeDecision) { decision.withLock { $0 = value } }
    var refusal: ChallengeDecision? {
        decision.withLock { value in value.flatMap { $0.allowsConnection ? nil : $0 } }
    }
}

/// Sits after the `NIOSSLClientHandler`: when the handshake fails because Pincheck refused the
/// peer, it replaces NIOSSL's error with a ``PincheckTrustError`` on the error path and in the
/// promises of pending writes, and completes ``handshake`` either way.
final class PincheckTrustErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private let record: DecisionRecord
    private var handshakePromise: EventLoopPromise<Void>?
    private var handshakeFuture: EventLoopFuture<Void>?

    init(record: DecisionRecord) { self.record = record }

    /// Succeeds when the handshake completes; fails with a ``PincheckTrustError`` (or the
    /// connection's own error) otherwise.
    func handshake(on loop: any EventLoop) -> EventLoopFuture<Void> {
        if let handshakeFuture { return handshakeFuture }
        let promise = loop.makePromise(of: Void.self)
        handshakePromise = promise
        handshakeFuture = promise.futureResult
        return promise.futureResult
    }

    func handlerAdded(context: ChannelHandlerContext) { _ = handshake(on: context.eventLoop) }

    /// Completes the handshake promise once.
    private func completeHandshake(_ result: Result<Void, any Error>) {
        guard let promise = handshakePromise else { return }
        handshakePromise = nil
        promise.completeWith(result)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { completeHandshake(.success(())) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let translated = translate(error)
        completeHandshake(.failure(translated))
        context.fireErrorCaught(translated)
    }

    func channelInactive(context: ChannelHandlerContext) {
        completeHandshake(.failure(record.refusal.map { PincheckTrustError(decision: $0, underlying: nil) } ?? ChannelError.eof))
        context.fireChannelInactive()
    }

    /// A channel whose connection attempt failed (refused, or lost a Happy Eyeballs race) is
    /// closed without ever becoming active: neither `channelInactive` nor `errorCaught` reaches
    /// this handler, but its removal does. The promise is completed here rather than leaked (a
    /// leaked promise is a fatal error in debug builds).
    func handlerRemoved(context: ChannelHandlerContext) {
        completeHandshake(.failure(record.refusal.map { PincheckTrustError(decision: $0, underlying: nil) } ?? ChannelError.ioOnClosedChannel))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let promise else {
            context.write(data, promise: nil)
            return
        }
        let inner = context.eventLoop.makePromise(of: Void.self)
        inner.futureResult.whenComplete { [record] result in
            switch result {
            case .success: promise.succeed(())
            case .failure(let error): promise.fail(Self.translate(error, record))
            }
        }
        context.write(data, promise: inner)
    }

    private func translate(_ error: any Error) -> any Error { Self.translate(error, record) }

    private static func translate(_ error: any Error, _ record: DecisionRecord) -> any Error {
        if error is PincheckTrustError { return error }
        guard let refusal = record.refusal else { return error }
        return PincheckTrustError(decision: refusal, underlying: error)
    }
}
