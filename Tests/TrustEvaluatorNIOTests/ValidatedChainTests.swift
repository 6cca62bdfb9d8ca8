import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import PincheckTLS
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// What NIOSSL is told was validated (`peerValidatedCertificateChain`): Pincheck's verified path,
/// never the chain as presented.
@Suite("NIO: the validated chain NIOSSL reports is the verified path", .serialized)
struct ValidatedChainTests {
    @Test("an unrelated certificate in the presented chain is not in the validated chain; the anchor is")
    func verifiedPath() async throws {
        let leaf = TestPKI.certificate("rsa-leaf")
        let intermediate = TestPKI.certificate("rsa-intermediate")
        let unrelated = TestPKI.certificate("attacker-root")
        let server = try LocalTLSServer(chain: [leaf, intermediate, unrelated],
                                        privateKeyPEM: try String(contentsOfFile: TestPKI.path("keys/rsa-leaf.key"), encoding: .utf8))
        defer { server.stop() }
        let root = TestPKI.certificate("rsa-root")
        // Evaluated on the event loop: a busy cooperative pool could outwait the local server (30 s).
        let adapter = ChallengeAdapter(trustManager: .single(TrustPolicy(anchors: try TrustAnchors(certificates: [root]))), now: { TestPKI.time })
        let verifier = PincheckNIOVerifier(adapter: adapter, offloadEvaluation: false)
        let context = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        let captured = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: ValidatedCertificateChain?.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    _ = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: context,
                                                       host: "www.example.test", port: Int(server.port)) { _ in }
                    // Read when the handshake completes, before the server's close removes the handler.
                    try channel.pipeline.syncOperations.addHandler(ValidatedChainCapture(promise: captured))
                }
            }
            .connect(host: "127.0.0.1", port: Int(server.port)).get()
        defer { channel.close(promise: nil) }
        let validated = try #require(try await captured.futureResult.get())
        let der = try validated.map { try $0.toDERBytes() }
        #expect(der == [leaf.derBytes, intermediate.derBytes, root.derBytes])
        #expect(!der.contains(unrelated.derBytes))
    }
}

/// Completes its promise with NIOSSL's validated chain when the TLS handshake completes.
private final class ValidatedChainCapture: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny
    let promise: EventLoopPromise<ValidatedCertificateChain?>
    init(promise: EventLoopPromise<ValidatedCertificateChain?>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            promise.completeWith(Result { try context.pipeline.syncOperations.nioSSL_peerValidatedCertificateChain() })
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}
