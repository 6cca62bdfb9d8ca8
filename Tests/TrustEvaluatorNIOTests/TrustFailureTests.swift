import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// What a NIO caller catches when Pincheck refuses the peer, and whose name check counts.
@Suite("NIO: trust failures reach the caller; one name check", .serialized)
struct TrustFailureTests {
    static func policy(pin: String, nameValidation: ValidationPolicy.NameValidation = .required) throws -> TrustPolicy {
        TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate(pin)])),
                    anchors: try TrustAnchors(certificates: [PKI.certificate("rsa-root")]), nameValidation: nameValidation)
    }

    /// Connects with `addClientHandlers`, waits for the handshake, writes and reads one echo.
    static func exchange(group: any EventLoopGroup, port: Int, host: String, verifier: PincheckNIOVerifier) async throws -> String {
        let tls = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        let reply = group.next().makePromise(of: String.self)
        let (channel, handshake) = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                let handshake = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: tls, host: host, port: port)
                try channel.pipeline.syncOperations.addHandler(FirstReply(promise: reply))
                return (channel, handshake)
            }
        }
        defer { channel.close(promise: nil) }
        try await handshake.get()
        try await channel.writeAndFlush(ByteBuffer(string: "ping"))
        return try await reply.futureResult.get()
    }

    /// Runs `body` against a fresh echo server (its group and port), then stops both.
    static func withServer<T: Sendable>(_ body: (any EventLoopGroup, Int) async throws -> T) async throws -> T {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let result = await capture { try await body(group, server.port) }
        try await server.stop()
        try await group.shutdownGracefully()
        return try result.get()
    }

    @Test("a wrong pin: the handshake's future, and so the caller, fail with PincheckTrustError carrying pin.mismatch")
    func wrongPinIsTyped() async throws {
        let verifier = PincheckNIOVerifier(policy: try Self.policy(pin: "attacker-root"), now: { PKI.time })
        let result = try await Self.withServer { group, port in
            await capture { try await Self.exchange(group: group, port: port, host: "www.example.test", verifier: verifier) }
        }
        let error = #expect(throws: PincheckTrustError.self) { try result.get() }
        #expect(error?.codes == [.pinMismatch])
        #expect(error?.verdict?.servedChain.count == 2)
        #expect(error?.description.contains("pin.mismatch") == true)
    }

    @Test("a write made before the handshake fails with PincheckTrustError, not BoringSSL's error")
    func pendingWriteIsTyped() async throws {
        let verifier = PincheckNIOVerifier(policy: try Self.policy(pin: "attacker-root"), now: { PKI.time })
        let tls = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        let write = try await Self.withServer { group, port in
            let bootstrap = ClientBootstrap(group: group).channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: tls, host: "www.example.test", port: port)
                }
            }
            return await capture {
                // Written on the event loop as soon as TCP is up: the handshake needs the server's
                // answer first, so the write is pending when Pincheck refuses the peer. (A write
                // issued after the channel has closed fails with NIO's ioOnClosedChannel.)
                try await bootstrap.connect(host: "127.0.0.1", port: port).flatMap { channel in
                    channel.writeAndFlush(ByteBuffer(string: "ping")).always { _ in channel.close(promise: nil) }
                }.get()
            }
        }
        let error = #expect(throws: PincheckTrustError.self) { try write.get() }
        #expect(error?.codes == [.pinMismatch])
    }

    @Test("an IP target: Pincheck checks the name it was given, NIOSSL does not check again")
    func ipTargetWithPinnedName() async throws {
        // The leaf names www.example.test, not 127.0.0.1: with the name check disabled by the
        // policy (pins decide), the handshake to the IP completes; NIOSSL's own check would refuse it.
        let verifier = PincheckNIOVerifier(policy: try Self.policy(pin: "rsa-intermediate", nameValidation: .disabled(because: "IP target")),
                                           now: { PKI.time })
        // With the name required, the same IP target is refused by Pincheck's name check, with its reason.
        let strict = PincheckNIOVerifier(policy: try Self.policy(pin: "rsa-intermediate"), now: { PKI.time })
        let (reply, refused) = try await Self.withServer { group, port in
            (await capture { try await Self.exchange(group: group, port: port, host: "127.0.0.1", verifier: verifier) },
             await capture { try await Self.exchange(group: group, port: port, host: "127.0.0.1", verifier: strict) })
        }
        #expect(try reply.get() == "ping")
        let error = #expect(throws: PincheckTrustError.self) { try refused.get() }
        #expect(error?.codes == [.ipAddressMismatch])
    }
}
