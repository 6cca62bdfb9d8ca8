// Stack benchmark (scripts/bench.sh, release): what Pincheck costs inside the stacks it is wired
// into, against the same stack without it, on one local server, rounds interleaved, best round counts.
//
//   1. AsyncHTTPClient: GET requests pinned by PincheckAsyncHTTPClient (a leaf pin checked in the
//      connection initializer) against AHC trusting the same root, with a new connection per
//      request (maximumUsesPerConnection 1) and over a reused connection;
//   2. mTLS: full TLS 1.3 handshakes with a client certificate, judged on the server by
//      PincheckClientCertificateVerifier against NIOSSL's own client-certificate verification;
//      and a verifier with two SPIFFE trust domains against a flat one over both CAs, for a client
//      carrying a SPIFFE ID (issue 44: the domain map must cost no more than 3 %).
//
//   pincheck-stack-bench --certificates DIR [--quick]
#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import PincheckAsyncHTTPClient
import PincheckTestSupport
import TrustEvaluator
import TrustEvaluatorNIO

let arguments = CommandLine.arguments
guard let index = arguments.firstIndex(of: "--certificates"), index + 1 < arguments.count else {
    print("usage: pincheck-stack-bench --certificates DIR [--quick]")
    exit(2)
}
let directory = arguments[index + 1]
let quick = arguments.contains("--quick")
let perRound = quick ? 10 : 200
let rounds = quick ? 2 : 7
func path(_ name: String) -> String { "\(directory)/\(name)" }
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

/// `200 ok` to every request, keeping the connection.
final class Responder: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders()
        headers.add(name: "content-length", value: "2")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok")))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// On the server: once its handshake completes (after it judged the client's certificate), one byte.
final class Greeter: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            context.writeAndFlush(NIOAny(ByteBuffer(string: "y")), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// On the client: succeeds on the server's byte, fails on any error or close before it. In TLS 1.3
/// the client's handshake completes before the server has judged its certificate; the byte says
/// the server accepted it.
final class AcceptanceWaiter: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let promise: EventLoopPromise<Void>
    init(promise: EventLoopPromise<Void>) { self.promise = promise }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { promise.succeed(()) }
    func errorCaught(context: ChannelHandlerContext, error: any Error) { promise.fail(error) }
    func channelInactive(context: ChannelHandlerContext) { promise.fail(ChannelError.eof) }
}

/// The best of `rounds` interleaved rounds of `perRound` operations, per mode, in operations per second.
func measure<Mode: Hashable & Sendable>(_ modes: [Mode], _ operation: (Mode) async throws -> Void) async throws -> [Mode: Double] {
    for mode in modes { for _ in 0..<5 { try await operation(mode) } }  // warm up; each mode must work
    var best: [Mode: Double] = [:]
    for _ in 0..<rounds {
        for mode in modes {
            let start = ContinuousClock.now
            for _ in 0..<perRound { try await operation(mode) }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            best[mode] = max(best[mode] ?? 0, Double(perRound) / seconds)
        }
    }
    return best
}

let serverChain = try NIOSSLCertificate.fromPEMFile(path("rsa-ip.pem")) + NIOSSLCertificate.fromPEMFile(path("rsa-intermediate.pem"))
let serverKey = try NIOSSLPrivateKey(file: path("keys/rsa-ip.key"), format: .pem)
let root = try Certificate.load(contentsOf: path("rsa-root.pem"))[0]

// 1. AsyncHTTPClient.
let httpContext = try NIOSSLContext(
    configuration: .makeServerConfiguration(certificateChain: serverChain.map { .certificate($0) }, privateKey: .privateKey(serverKey)))
let httpServer = try await ServerBootstrap(group: group)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: httpContext))
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(Responder())
        }
    }
    .bind(host: "127.0.0.1", port: 0).get()
let url = "https://127.0.0.1:\(httpServer.localAddress!.port!)/"

enum HTTPMode: String, CaseIterable, Sendable {
    case plainNew = "AHC trusting the root, new connection per request"
    case pinnedNew = "AHC pinned by Pincheck, new connection per request"
    case plainReused = "AHC trusting the root, reused connection"
    case pinnedReused = "AHC pinned by Pincheck, reused connection"
}
func client(pinned: Bool, newConnections: Bool) throws -> HTTPClient {
    var configuration = HTTPClient.Configuration()
    if newConnections { configuration.maximumUsesPerConnection = 1 }
    let leaf = try Certificate.load(contentsOf: path("rsa-ip.pem"))[0]
    let policy = TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(certificates: [leaf])), anchors: try TrustAnchors(certificates: [root]))
    if pinned {
        try configuration.pin(with: try PincheckHTTPClient(policy: policy))
    } else {
        configuration.tlsConfiguration = try PincheckNIOVerifier.makeAnchoredConfiguration(anchors: [root])
    }
    return HTTPClient(eventLoopGroup: group, configuration: configuration)
}
let clients: [HTTPMode: HTTPClient] = [
    .plainNew: try client(pinned: false, newConnections: true), .pinnedNew: try client(pinned: true, newConnections: true),
    .plainReused: try client(pinned: false, newConnections: false), .pinnedReused: try client(pinned: true, newConnections: false),
]
let http = try await measure(HTTPMode.allCases) { mode in
    let response = try await clients[mode]!.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
    guard response.status == .ok else { throw HTTPClientError.invalidURL }
    _ = try await response.body.collect(upTo: 1 << 10)
}
for client in clients.values { try await client.shutdown().get() }
try await httpServer.close().get()

// 2. mTLS handshakes.
enum MTLSMode: String, CaseIterable, Sendable {
    case niossl = "NIOSSL's client-certificate verification"
    case pincheck = "PincheckClientCertificateVerifier (evaluated on a Task, the default)"
    case flatSPIFFE = "PincheckClientCertificateVerifier, SPIFFE client, one anchor set of two CAs"
    case trustDomains = "PincheckClientCertificateVerifier, SPIFFE client, two trust domains"

    var presentsSPIFFEID: Bool { self == .flatSPIFFE || self == .trustDomains }
}
var niosslServerConfiguration = TLSConfiguration.makeServerConfiguration(
    certificateChain: serverChain.map { .certificate($0) }, privateKey: .privateKey(serverKey))
niosslServerConfiguration.certificateVerification = .noHostnameVerification
niosslServerConfiguration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path("rsa-root.pem")))
niosslServerConfiguration.minimumTLSVersion = .tlsv13
let niosslServerContext = try NIOSSLContext(configuration: niosslServerConfiguration)
var pincheckServerConfiguration = PincheckClientCertificateVerifier.makeServerConfiguration(
    certificateChain: serverChain.map { .certificate($0) }, privateKey: .privateKey(serverKey))
pincheckServerConfiguration.minimumTLSVersion = .tlsv13
let pincheckServerContext = try NIOSSLContext(configuration: pincheckServerConfiguration)
// Revocation off, as NIOSSL's own verification has none; the test PKI is judged at 2030-06-01.
let clientVerifier = try PincheckClientCertificateVerifier(
    policy: TrustPolicy(anchors: try TrustAnchors(certificates: [root])),
    now: { Date(timeIntervalSince1970: 1_906_502_400) })
// The same two CAs, flat and as trust domains (the SPIFFE client's domain is pincheck.test, under the RSA root).
let ecRoot = try Certificate.load(contentsOf: path("ec-root.pem"))[0]
let flatVerifier = try PincheckClientCertificateVerifier(
    policy: TrustPolicy(anchors: try TrustAnchors(certificates: [root, ecRoot])), now: { Date(timeIntervalSince1970: 1_906_502_400) })
let domainVerifier = try PincheckClientCertificateVerifier(
    trustDomains: [
        try SPIFFETrustDomain("pincheck.test", anchors: try TrustAnchors(certificates: [root])),
        try SPIFFETrustDomain("other.test", anchors: try TrustAnchors(certificates: [ecRoot])),
    ], now: { Date(timeIntervalSince1970: 1_906_502_400) })
func mtlsServer(_ mode: MTLSMode) async throws -> any Channel {
    try await ServerBootstrap(group: group)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                switch mode {
                case .niossl: try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: niosslServerContext))
                case .pincheck: try clientVerifier.addServerHandlers(to: channel.pipeline.syncOperations, context: pincheckServerContext)
                case .flatSPIFFE: try flatVerifier.addServerHandlers(to: channel.pipeline.syncOperations, context: pincheckServerContext)
                case .trustDomains: try domainVerifier.addServerHandlers(to: channel.pipeline.syncOperations, context: pincheckServerContext)
                }
                try channel.pipeline.syncOperations.addHandler(Greeter())
            }
        }
        .bind(host: "127.0.0.1", port: 0).get()
}
var mtlsServers: [MTLSMode: any Channel] = [:]
for mode in MTLSMode.allCases { mtlsServers[mode] = try await mtlsServer(mode) }
var clientConfiguration = TLSConfiguration.makeClientConfiguration()
clientConfiguration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path("rsa-root.pem")))
clientConfiguration.certificateChain = try
    (NIOSSLCertificate.fromPEMFile(path("rsa-client-only.pem")) + NIOSSLCertificate.fromPEMFile(path("rsa-intermediate.pem"))).map {
        .certificate($0)
    }
clientConfiguration.privateKey = .privateKey(try NIOSSLPrivateKey(file: path("keys/rsa-client-only.key"), format: .pem))
clientConfiguration.minimumTLSVersion = .tlsv13
let clientContext = try NIOSSLContext(configuration: clientConfiguration)
var spiffeClientConfiguration = clientConfiguration
spiffeClientConfiguration.certificateChain = try
    (NIOSSLCertificate.fromPEMFile(SPIFFEClient.files.certificate) + NIOSSLCertificate.fromPEMFile(path("rsa-intermediate.pem"))).map {
        .certificate($0)
    }
spiffeClientConfiguration.privateKey = .privateKey(try NIOSSLPrivateKey(file: SPIFFEClient.files.key, format: .pem))
let spiffeClientContext = try NIOSSLContext(configuration: spiffeClientConfiguration)
let mtls = try await measure(MTLSMode.allCases) { mode in
    let promise = group.next().makePromise(of: Void.self)
    let channel = try await ClientBootstrap(group: group).channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(
                NIOSSLClientHandler(context: mode.presentsSPIFFEID ? spiffeClientContext : clientContext, serverHostname: nil))
            try channel.pipeline.syncOperations.addHandler(AcceptanceWaiter(promise: promise))
        }
    }.connect(host: "127.0.0.1", port: mtlsServers[mode]!.localAddress!.port!).get()
    try await promise.futureResult.get()
    try await channel.close()
}
for server in mtlsServers.values { try await server.close().get() }

print("pincheck-stack-bench: \(perRound) operations per round, \(rounds) rounds interleaved, best round counts")
for mode in HTTPMode.allCases { print("  \(mode.rawValue): \(Int(http[mode]!)) requests/s") }
for mode in MTLSMode.allCases { print("  \(mode.rawValue): \(Int(mtls[mode]!)) handshakes/s") }
print("ratio pinned-ahc/ahc (new connection per request): \(String(format: "%.2f", http[.pinnedNew]! / http[.plainNew]!))")
print("ratio pinned-ahc/ahc (reused connection): \(String(format: "%.2f", http[.pinnedReused]! / http[.plainReused]!))")
print("ratio pincheck-mtls/niossl-mtls (handshakes): \(String(format: "%.2f", mtls[.pincheck]! / mtls[.niossl]!))")
print("ratio flat-mtls/trust-domain-mtls (handshakes): \(String(format: "%.3f", mtls[.flatSPIFFE]! / mtls[.trustDomains]!))")
try await group.shutdownGracefully()
#else
import Foundation

FileHandle.standardError.write(
    Data("pincheck-stack-bench needs Pincheck's AsyncHTTPClient trait: swift run --traits AsyncHTTPClient pincheck-stack-bench …\n".utf8))
exit(2)
#endif  // AsyncHTTPClient trait
