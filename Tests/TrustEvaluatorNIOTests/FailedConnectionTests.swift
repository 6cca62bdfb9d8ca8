import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// Answers every lookup with fixed addresses, in order: a refusing address first, as on a system
/// where `localhost` is `::1` then `127.0.0.1` and the server listens on the second only.
final class FixedResolver: Resolver, Sendable {
    let loop: any EventLoop
    let addresses: [SocketAddress]
    init(loop: any EventLoop, addresses: [SocketAddress]) {
        self.loop = loop
        self.addresses = addresses
    }
    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> { loop.makeSucceededFuture(addresses) }
    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> { loop.makeSucceededFuture([]) }
    func cancelQueries() {}
}

/// Connection attempts that never become active must not leak the handshake promise that
/// `addClientHandlers` makes (a leaked promise is a fatal error in the debug builds these tests
/// run in, so a leak fails the whole test process, not just an expectation).
@Suite("NIO: refused connection attempts complete the handshake future", .serialized)
struct FailedConnectionTests {
    static func verifier() throws -> PincheckNIOVerifier {
        PincheckNIOVerifier(policy: try TrustFailureTests.policy(pin: "rsa-root"), now: { PKI.time })
    }

    /// Whether the future succeeded, failed, or (nil) did not complete within `seconds`: a
    /// leaked promise never completes, and the test must fail on it rather than wait for ever.
    static func outcome(of future: EventLoopFuture<Void>, within seconds: Double = 10) async -> Bool? {
        let result = NIOLockedValueBox<Bool?>(nil)
        future.whenComplete { completed in
            result.withLockedValue { $0 = (try? completed.get()) != nil }
        }
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while ContinuousClock.now < deadline {
            if let known = result.withLockedValue({ $0 }) { return known }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return result.withLockedValue { $0 }
    }

    /// A port on 127.0.0.1 that nothing listens on (bound, then closed).
    static func closedPort(group: any EventLoopGroup) async throws -> Int {
        let channel = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }

    @Test("a refused connection fails cleanly with NIO's connection error; the handshake future fails too")
    func refusedConnection() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let verifier = try Self.verifier()
        let tls = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        let port = try await Self.closedPort(group: group)
        let handshakes = NIOLockedValueBox<[EventLoopFuture<Void>]>([])
        let result = await capture {
            try await ClientBootstrap(group: group).channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handshake = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: tls,
                                                                   host: "www.example.test", port: port)
                    handshakes.withLockedValue { $0.append(handshake) }
                }
            }.connect(host: "127.0.0.1", port: port).get()
        }
        #expect(throws: (any Error).self) { try result.get() }
        let futures = handshakes.withLockedValue { $0 }
        #expect(futures.count == 1)
        for handshake in futures {
            #expect(await Self.outcome(of: handshake) == false, "the handshake future fails (nil: it never completed)")
        }
        try await group.shutdownGracefully()
    }

    @Test("a refusing address first and a serving one second: the connection race succeeds, every attempt's future completes")
    func racingAddresses() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let verifier = try Self.verifier()
        let tls = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        // 127.0.0.2 is loopback on Linux, but the server listens on 127.0.0.1 only: refused.
        let addresses = [try SocketAddress(ipAddress: "127.0.0.2", port: server.port),
                         try SocketAddress(ipAddress: "127.0.0.1", port: server.port)]
        let handshakes = NIOLockedValueBox<[EventLoopFuture<Void>]>([])
        let result = await capture {
            let reply = group.next().makePromise(of: String.self)
            let channel = try await ClientBootstrap(group: group)
                .resolver(FixedResolver(loop: group.next(), addresses: addresses))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handshake = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: tls,
                                                                       host: "www.example.test", port: server.port)
                        try channel.pipeline.syncOperations.addHandler(FirstReply(promise: reply))
                        handshakes.withLockedValue { $0.append(handshake) }
                    }
                }.connect(host: "localhost", port: server.port).get()
            defer { channel.close(promise: nil) }
            try await PincheckNIOVerifier.handshakeCompleted(on: channel).get()
            try await channel.writeAndFlush(ByteBuffer(string: "ping"))
            return try await reply.futureResult.get()
        }
        #expect(try result.get() == "ping")
        let futures = handshakes.withLockedValue { $0 }
        #expect(futures.count == 2, "the initializer ran for the refused attempt and the served one")
        var outcomes: [Bool?] = []
        for handshake in futures { outcomes.append(await Self.outcome(of: handshake)) }
        #expect(outcomes == [false, true], "nil: a future never completed")
        try await server.stop()
        try await group.shutdownGracefully()
    }
}
