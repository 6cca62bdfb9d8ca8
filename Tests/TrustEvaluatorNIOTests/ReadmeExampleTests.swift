import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// The README's NIO snippet, compiled and run against a local server so it cannot drift.
@Suite("README: pinning a host with SwiftNIO")
struct ReadmeNIOExampleTests {
    @Test("the snippet completes a pinned handshake and reports the decision")
    func snippet() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let pin = PKI.certificate("rsa-intermediate").publicKeyPin.description
        let anchors = try TrustAnchors(certificates: [PKI.certificate("rsa-root")])
        let decisions = Decisions()

        // --- README snippet ---
        let verifier = PincheckNIOVerifier(policy: TrustPolicy(
            pinning: .publicKeys(try PinnedPublicKeys(parsing: [pin])), anchors: anchors))
        let tls = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        let channel = try await ClientBootstrap(group: group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(try verifier.makeClientHandler(
                    context: tls, host: "www.example.test", port: server.port) { decision in
                        decisions.append(decision)   // decision.verdict?.failures: Pincheck's reasons
                    })
            }
        }.connect(host: "127.0.0.1", port: server.port).get()
        // --- end of snippet ---

        try await channel.writeAndFlush(ByteBuffer(string: "x"))
        for _ in 0..<300 where decisions.all.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try await channel.close()
        try await server.stop()
        try await group.shutdownGracefully()
        #expect(decisions.all.first?.rule == .trusted)
    }
}
