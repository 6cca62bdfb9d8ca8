import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import Synchronization
import Testing
import TrustEvaluator
@testable import TrustEvaluatorNIO

/// Records every decision the callback reports.
final class Decisions: Sendable {
    private let list = Mutex<[ChallengeDecision]>([])
    func append(_ decision: ChallengeDecision) { list.withLock { $0.append(decision) } }
    var all: [ChallengeDecision] { list.withLock { $0 } }
}

/// Connects with Pincheck's callback, sends `message`, and returns the first reply (or throws the handshake error).
func exchange(group: any EventLoopGroup, port: Int, host: String, verifier: PincheckNIOVerifier, decisions: Decisions,
              message: String = "ping") async throws -> String {
    let context = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
    let promise = group.next().makePromise(of: String.self)
    let channel = try await ClientBootstrap(group: group)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let tls = try verifier.makeClientHandler(context: context, host: host, port: port, channel: channel) { decisions.append($0) }
                try channel.pipeline.syncOperations.addHandler(tls)
                try channel.pipeline.syncOperations.addHandler(FirstReply(promise: promise))
            }
        }
        .connect(host: "127.0.0.1", port: port).get()
    channel.writeAndFlush(ByteBuffer(string: message), promise: nil)
    // Generous, and still a bound: the verifier evaluates in a detached task, on the cooperative
    // pool that the whole test run shares. At the run's start that pool holds hundreds of queued
    // tests (on 2 cores trivial ones report 20–33 s there), and a 15 s budget once ran out before
    // the evaluation got a thread (Debian 13 leg, 2026-11-29).
    let budget = TimeAmount.seconds(60)
    let timeout = channel.eventLoop.scheduleTask(in: budget) { promise.fail(ChannelError.connectTimeout(budget)) }
    defer { timeout.cancel(); channel.close(promise: nil) }
    return try await promise.futureResult.get()
}

/// `Result(catching:)` for async bodies.
func capture<T: Sendable>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

@Suite("NIO handshakes judged by Pincheck", .serialized)
struct NIOTrustTests {
    static let root = PKI.certificate("rsa-root")
    static let intermediate = PKI.certificate("rsa-intermediate")

    static func pinnedPolicy(pinning: String = "rsa-intermediate", anchor: String = "rsa-root") throws -> TrustPolicy {
        TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate(pinning)])),
                    anchors: try TrustAnchors(certificates: [PKI.certificate(anchor)]))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let servedLeaf: String
        let host: String
        let pin: String
        let anchor: String
        let expectedFailure: [Reason.Code]   // empty: the handshake must complete
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "pinned host, trusted chain", servedLeaf: "rsa-leaf", host: "www.example.test", pin: "rsa-intermediate", anchor: "rsa-root", expectedFailure: []),
        Case(name: "pin mismatch", servedLeaf: "rsa-leaf", host: "www.example.test", pin: "attacker-root", anchor: "rsa-root", expectedFailure: [.pinMismatch]),
        Case(name: "wrong host", servedLeaf: "rsa-leaf", host: "evil.example.test", pin: "rsa-intermediate", anchor: "rsa-root", expectedFailure: [.hostMismatch]),
        Case(name: "untrusted root", servedLeaf: "rsa-leaf", host: "www.example.test", pin: "rsa-intermediate", anchor: "attacker-root", expectedFailure: [.unknownIssuer, .untrustedRoot]),
        Case(name: "expired leaf", servedLeaf: "rsa-expired", host: "www.example.test", pin: "rsa-intermediate", anchor: "rsa-root", expectedFailure: [.expired]),
    ]

    @Test("a real TLS handshake over 127.0.0.1 follows Pincheck's verdict", arguments: cases)
    func handshake(_ c: Case) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: c.servedLeaf, key: c.servedLeaf)
        let verifier = PincheckNIOVerifier(policy: try Self.pinnedPolicy(pinning: c.pin, anchor: c.anchor), now: { PKI.time })
        let decisions = Decisions()
        let result = await capture { try await exchange(group: group, port: server.port, host: c.host, verifier: verifier, decisions: decisions) }
        try await server.stop()
        try await group.shutdownGracefully()

        let decision = try #require(decisions.all.first)
        #expect(decisions.all.count == 1)
        if c.expectedFailure.isEmpty {
            #expect(try result.get() == "ping", "data flows after the handshake")
            #expect(decision.disposition == .useCredential && decision.rule == .trusted)
            #expect(decision.verdict?.isTrusted == true)
        } else {
            #expect(throws: (any Error).self) { try result.get() }
            #expect(decision.disposition == .cancelAuthenticationChallenge && decision.rule == .untrusted)
            #expect(decision.error?.code == .untrusted)
            let codes = Set(decision.verdict?.failures.map(\.code) ?? [])
            #expect(!codes.isDisjoint(with: c.expectedFailure), "reasons: \(codes)")
        }
    }

    @Test("an unpinned host follows the trust manager's rule", arguments: [true, false])
    func unlistedHost(allowed: Bool) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let manager = TrustManager(
            policies: [try HostPolicy("api.example.test", policy: try Self.pinnedPolicy())],
            allHostsMustBeEvaluated: !allowed,
            defaultValidation: ValidationPolicy(anchors: try TrustAnchors(certificates: [Self.root])))
        let verifier = PincheckNIOVerifier(trustManager: manager, now: { PKI.time })
        let decisions = Decisions()
        let result = await capture { try await exchange(group: group, port: server.port, host: "www.example.test", verifier: verifier, decisions: decisions) }
        try await server.stop()
        try await group.shutdownGracefully()

        let decision = try #require(decisions.all.first)
        if allowed {
            #expect(try result.get() == "ping")
            #expect(decision.disposition == .performDefaultHandling && decision.rule == .unlistedDefaultHandling)
            #expect(decision.verdict?.isTrusted == true, "default validation really ran")
        } else {
            #expect(throws: (any Error).self) { try result.get() }
            #expect(decision.rule == .unlistedRefused && decision.error?.code == .hostNotListed)
        }
    }

    @Test("every connection runs a full evaluation: no resumed session skips the pins")
    func noResumptionBypass() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let good = PincheckNIOVerifier(policy: try Self.pinnedPolicy(), now: { PKI.time })
        let bad = PincheckNIOVerifier(policy: try Self.pinnedPolicy(pinning: "attacker-root"), now: { PKI.time })
        let decisions = Decisions()
        let first = try await exchange(group: group, port: server.port, host: "www.example.test", verifier: good, decisions: decisions)
        let second = await capture { try await exchange(group: group, port: server.port, host: "www.example.test", verifier: bad, decisions: decisions) }
        let third = try await exchange(group: group, port: server.port, host: "www.example.test", verifier: good, decisions: decisions)
        try await server.stop()
        try await group.shutdownGracefully()

        #expect(first == "ping" && third == "ping")
        #expect(throws: (any Error).self) { try second.get() }
        #expect(decisions.all.map(\.disposition) == [.useCredential, .cancelAuthenticationChallenge, .useCredential])
    }

    @Test("evaluation on the event loop gives the same result as off it", arguments: [true, false])
    func offload(_ offload: Bool) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let verifier = PincheckNIOVerifier(
            adapter: ChallengeAdapter(trustManager: .single(try Self.pinnedPolicy()), now: { PKI.time }), offloadEvaluation: offload)
        let decisions = Decisions()
        let reply = try await exchange(group: group, port: server.port, host: "www.example.test", verifier: verifier, decisions: decisions)
        try await server.stop()
        try await group.shutdownGracefully()
        #expect(reply == "ping")
        #expect(decisions.all.first?.rule == .trusted)
    }

    @Test("a live handshake today works with the long-lived leaf and the real clock")
    func liveClock() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let verifier = PincheckNIOVerifier(policy: try Self.pinnedPolicy())
        let decisions = Decisions()
        let reply = try await exchange(group: group, port: server.port, host: "example.test", verifier: verifier, decisions: decisions)
        try await server.stop()
        try await group.shutdownGracefully()
        #expect(reply == "ping")
        #expect(decisions.all.first?.verdict?.matchedPins.isEmpty == false)
    }

    @Test("the callback is @Sendable: it can be stored where a sendable callback is required, and it still judges")
    func sendableCallback() async throws {
        let verifier = PincheckNIOVerifier(policy: try Self.pinnedPolicy(), now: { PKI.time })
        let decisions = Decisions()
        // What gRPC Swift 2's TransportSecurity property type demands of the callback.
        let stored: @Sendable ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResultWithMetadata>) -> Void =
            verifier.callback(host: "www.example.test", port: 443) { decisions.append($0) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let promise = group.next().makePromise(of: NIOSSLVerificationResultWithMetadata.self)
        let chain = try NIOSSLCertificate.fromPEMFile(PKI.path("rsa-leaf.pem")) + NIOSSLCertificate.fromPEMFile(PKI.path("rsa-intermediate.pem"))
        stored(chain, promise)
        let result = try await promise.futureResult.get()
        try await group.shutdownGracefully()
        guard case .certificateVerified = result else { Issue.record("the pinned chain was refused: \(decisions.all)"); return }
        #expect(decisions.all.first?.rule == .trusted)
    }

    @Test("garbage DER is an evaluation failure, not a crash or an acceptance")
    func garbageDER() async {
        let verifier = PincheckNIOVerifier(policy: TrustPolicy(), now: { PKI.time })
        let decision = await verifier.decide(derChain: [[0x30, 0x03, 0x01]], host: "www.example.test", port: 443)
        #expect(decision.disposition == .cancelAuthenticationChallenge)
        #expect(decision.rule == .evaluationFailed)
        #expect(!decision.allowsConnection)
    }
}

@Suite("Anchoring for stacks without a verification hook (AsyncHTTPClient)", .serialized)
struct AnchoredConfigurationTests {
    /// Connects with a plain NIOSSLClientHandler (as AsyncHTTPClient builds it) and the anchored
    /// configuration to a server that is already running: a server that fails to start fails the
    /// test instead of passing as "the handshake failed".
    func plainExchange(server: TLSEchoServer, group: any EventLoopGroup, anchor: String, host: String) async throws -> String {
        let context = try NIOSSLContext(configuration: PincheckNIOVerifier.makeAnchoredConfiguration(anchors: [PKI.certificate(anchor)]))
        let promise = group.next().makePromise(of: String.self)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: host))
                    try channel.pipeline.syncOperations.addHandler(FirstReply(promise: promise))
                }
            }
            .connect(host: "127.0.0.1", port: server.port).get()
        channel.writeAndFlush(ByteBuffer(string: "ping"), promise: nil)
        defer { channel.close(promise: nil) }
        return try await promise.futureResult.get()
    }

    /// The handshake's outcome against a freshly started echo server.
    func outcome(anchor: String, host: String) async throws -> Result<String, any Error> {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let result = await capture { try await plainExchange(server: server, group: group, anchor: anchor, host: host) }
        try await server.stop()
        try await group.shutdownGracefully()
        return result
    }

    @Test("the pinned root as the only anchor: the live handshake completes")
    func pinnedRoot() async throws {
        #expect(try await outcome(anchor: "rsa-root", host: "www.example.test").get() == "ping")
    }

    @Test("another root as the only anchor: the handshake fails on the certificate", arguments: ["attacker-root", "ec-root"])
    func otherRoot(_ anchor: String) async throws {
        let result = try await outcome(anchor: anchor, host: "www.example.test")
        let error = #expect(throws: NIOSSLError.self) { try result.get() }
        #expect("\(String(describing: error))".contains("CERTIFICATE_VERIFY_FAILED"), "\(String(describing: error))")
    }

    @Test("an intermediate or a leaf as anchor is refused up front, naming it; so is no anchor", arguments: ["rsa-intermediate", "rsa-leaf"])
    func onlyRoots(_ name: String) throws {
        let error = #expect(throws: PincheckError.self) {
            try PincheckNIOVerifier.makeAnchoredConfiguration(anchors: [PKI.certificate(name)])
        }
        #expect(error?.code == .invalidPolicy)
        #expect(error?.message.contains(PKI.certificate(name).subject) == true)
        #expect(throws: PincheckError.self) { try PincheckNIOVerifier.makeAnchoredConfiguration(anchors: []) }
    }

    @Test("the right root but the wrong host: the handshake fails on the name")
    func wrongHost() async throws {
        let result = try await outcome(anchor: "rsa-root", host: "evil.example.test")
        #expect(throws: NIOSSLExtraError.self) { try result.get() }
    }
}
