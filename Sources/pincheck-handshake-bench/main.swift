// Handshake benchmark (scripts/bench.sh, release): full TLS handshakes from a NIO client to a
// local NIO server, with NIOSSL's own verification against the root, and with Pincheck's callback
// (public-key pin, its certificate and verdict caches), rounds interleaved, best round counts.
//
//   pincheck-handshake-bench --certificates DIR [--quick]
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO

let arguments = CommandLine.arguments
guard let index = arguments.firstIndex(of: "--certificates"), index + 1 < arguments.count else {
    print("usage: pincheck-handshake-bench --certificates DIR [--quick]")
    exit(2)
}
let directory = arguments[index + 1]
let quick = arguments.contains("--quick")
let handshakesPerRound = quick ? 20 : 300
let rounds = quick ? 2 : 7
let host = "www.example.test"
func path(_ name: String) -> String { "\(directory)/\(name)" }

/// Succeeds on the TLS handshake's completion, fails on any error or close before it.
final class HandshakeWaiter: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny
    let promise: EventLoopPromise<Void>
    init(promise: EventLoopPromise<Void>) { self.promise = promise }
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { promise.succeed(()) }
        context.fireUserInboundEventTriggered(event)
    }
    func errorCaught(context: ChannelHandlerContext, error: any Error) { promise.fail(error) }
    func channelInactive(context: ChannelHandlerContext) { promise.fail(ChannelError.eof) }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let chain = try NIOSSLCertificate.fromPEMFile(path("rsa-leaf.pem")) + NIOSSLCertificate.fromPEMFile(path("rsa-intermediate.pem"))
let key = try NIOSSLPrivateKey(file: path("keys/rsa-leaf.key"), format: .pem)
var serverConfiguration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
serverConfiguration.minimumTLSVersion = .tlsv13
let serverContext = try NIOSSLContext(configuration: serverConfiguration)
let server = try await ServerBootstrap(group: group)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: serverContext)) }
    }
    .bind(host: "127.0.0.1", port: 0).get()
let port = server.localAddress!.port!

// NIOSSL alone: the root as its only trust root, its own name check.
let root = try NIOSSLCertificate.fromPEMFile(path("rsa-root.pem"))
var plainConfiguration = TLSConfiguration.makeClientConfiguration()
plainConfiguration.trustRoots = .certificates(root)
plainConfiguration.minimumTLSVersion = .tlsv13
let plainContext = try NIOSSLContext(configuration: plainConfiguration)

// Pincheck: a public-key pin on the intermediate, the verifier's parsed-certificate cache and a verdict cache.
let anchors = try TrustAnchors(contentsOf: [path("rsa-root.pem")])
let pin = try Certificate.load(contentsOf: path("rsa-intermediate.pem"))[0]
let policy = TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(certificates: [pin])), anchors: anchors)
let manager = TrustManager.single(policy, certificateCache: .shared, verdictCache: VerdictCache())
let now: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_906_502_400) }
let offloaded = PincheckNIOVerifier(adapter: ChallengeAdapter(trustManager: manager, now: now), offloadEvaluation: true)
let inline = PincheckNIOVerifier(adapter: ChallengeAdapter(trustManager: manager, now: now), offloadEvaluation: false)
let pincheckContext = try NIOSSLContext(
    configuration: {
        var configuration = PincheckNIOVerifier.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv13
        return configuration
    }())

enum Mode: String, CaseIterable {
    case niossl = "NIOSSL verification", pincheckInline = "Pincheck, evaluated on the event loop", pincheckOffloaded =
        "Pincheck, evaluated on a Task (default)"
}

func handshake(_ mode: Mode) async throws {
    let promise = group.next().makePromise(of: Void.self)
    let channel = try await ClientBootstrap(group: group).channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            switch mode {
            case .niossl:
                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: plainContext, serverHostname: host))
                try channel.pipeline.syncOperations.addHandler(HandshakeWaiter(promise: promise))
            case .pincheckInline, .pincheckOffloaded:
                let verifier = mode == .pincheckInline ? inline : offloaded
                let done = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: pincheckContext, host: host, port: port)
                done.cascade(to: promise)
            }
        }
    }.connect(host: "127.0.0.1", port: port).get()
    defer { channel.close(promise: nil) }
    try await promise.futureResult.get()
}

// Warm up every mode (and check that each one completes handshakes).
for mode in Mode.allCases { for _ in 0..<10 { try await handshake(mode) } }
var best: [Mode: Double] = [:]
for _ in 0..<rounds {
    for mode in Mode.allCases {
        let start = ContinuousClock.now
        for _ in 0..<handshakesPerRound { try await handshake(mode) }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        best[mode] = max(best[mode] ?? 0, Double(handshakesPerRound) / seconds)
    }
}
print("pincheck-handshake-bench: \(handshakesPerRound) sequential TLS 1.3 handshakes per round, \(rounds) rounds interleaved, best round counts")
for mode in Mode.allCases { print("  \(mode.rawValue): \(Int(best[mode]!)) handshakes/s") }
print("ratio pincheck-inline-handshake/niossl-handshake: \(String(format: "%.2f", best[.pincheckInline]! / best[.niossl]!))")
print("ratio pincheck-handshake/niossl-handshake: \(String(format: "%.2f", best[.pincheckOffloaded]! / best[.niossl]!))")
try await server.close().get()
try await group.shutdownGracefully()
