#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import PincheckAsyncHTTPClient
import PincheckTestSupport
import Testing
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO

/// An HTTPS server on 127.0.0.1 (the `rsa-ip` leaf under the RSA intermediate) that answers every
/// request `200 ok` over kept-alive connections, and counts what it saw: connections accepted,
/// connections still open, application bytes received after TLS (over HTTP/1.1, a request's first
/// byte), and over HTTP/2 (offered by ALPN) the streams clients opened, each with a HEADERS frame.
final class CountingHTTPSServer: Sendable {
    private struct Counts { var accepted = 0, open = 0, applicationBytes = 0, streams = 0 }
    private let counts = NIOLockedValueBox(Counts())
    private let channel: any Channel
    var port: Int { channel.localAddress!.port! }
    var accepted: Int { counts.withLockedValue(\.accepted) }
    var open: Int { counts.withLockedValue(\.open) }
    var applicationBytes: Int { counts.withLockedValue(\.applicationBytes) }
    var streams: Int { counts.withLockedValue(\.streams) }

    /// Counts the decrypted bytes between NIOSSL and the HTTP decoder, and the connection's life.
    private final class Meter: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        let server: CountingHTTPSServer
        init(_ server: CountingHTTPSServer) { self.server = server }
        func channelActive(context: ChannelHandlerContext) {
            server.counts.withLockedValue { $0.accepted += 1; $0.open += 1 }
            context.fireChannelActive()
        }
        func channelInactive(context: ChannelHandlerContext) {
            server.counts.withLockedValue { $0.open -= 1 }
            context.fireChannelInactive()
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let count = unwrapInboundIn(data).readableBytes
            server.counts.withLockedValue { $0.applicationBytes += count }
            context.fireChannelRead(data)
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }

    /// `200 ok` to every request, keeping the connection.
    private final class Responder: ChannelInboundHandler, Sendable {
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

    /// - Parameter requiringClientCertificates: Refuse a handshake without a client certificate
    ///   issued under the RSA root (mutual TLS).
    ///   - leaf: The served leaf (under the RSA intermediate, served with it), a name of the test
    ///     PKI with its key at `keys/<leaf>.key`.
    init(group: any EventLoopGroup, http2: Bool = false, requiringClientCertificates: Bool = false, leaf: String = "rsa-ip") async throws {
        let chain = try NIOSSLCertificate.fromPEMFile(TestPKI.path("\(leaf).pem")) + NIOSSLCertificate.fromPEMFile(TestPKI.path("rsa-intermediate.pem"))
        let key = try NIOSSLPrivateKey(file: TestPKI.path("keys/\(leaf).key"), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        if http2 { configuration.applicationProtocols = ["h2"] }
        if requiringClientCertificates {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(TestPKI.path("rsa-root.pem")))
        }
        let context = try NIOSSLContext(configuration: configuration)
        let box = NIOLockedValueBox<CountingHTTPSServer?>(nil)
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let server = box.withLockedValue { $0! }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: context))
                    try pipeline.addHandler(Meter(server))
                    guard http2 else {
                        try pipeline.configureHTTPServerPipeline()
                        try pipeline.addHandler(Responder())
                        return
                    }
                    _ = try pipeline.configureHTTP2Pipeline(mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()) { stream in
                        server.counts.withLockedValue { $0.streams += 1 }
                        return stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            try stream.pipeline.syncOperations.addHandler(Responder())
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        box.withLockedValue { $0 = self }
    }

    func stop() async throws { try await channel.close() }
}

@Suite("AsyncHTTPClient pinned by Pincheck (PincheckAsyncHTTPClient)")
struct PincheckHTTPClientTests {
    static let root = TestPKI.certificate("rsa-root")

    static func policy(pins: [Certificate], scope: PinnedPublicKeys.Scope = .anyCertificate,
                       anchors: [Certificate] = [root]) throws -> TrustPolicy {
        TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(certificates: pins, scope: scope)),
                    anchors: try TrustAnchors(certificates: anchors))
    }

    /// Runs `body` with a client pinned by `policy` against a fresh server, then shuts both down.
    static func withClient(_ policy: TrustPolicy, http2: Bool = false,
                           _ body: (HTTPClient, CountingHTTPSServer) async throws -> Void) async throws {
        let server = try await CountingHTTPSServer(group: MultiThreadedEventLoopGroup.singleton, http2: http2)
        let pinning = try PincheckHTTPClient(policy: policy, now: { TestPKI.time })
        // A long connect timeout: under load (a sanitizer run beside the suite) a handshake can take
        // seconds, and AsyncHTTPClient would then open a second connection, which the tests count.
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(60)))
        try configuration.pin(with: pinning)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        do {
            try await body(client, server)
        } catch {
            try? await client.shutdown()
            try? await server.stop()
            throw error
        }
        try await client.shutdown()
        try await server.stop()
    }

    /// Runs `body` with a client whose leaf is checked against `pinSets` (anchors: the RSA root).
    static func withClient(pinSets: [PinSet], reports: NIOLockedValueBox<[Verdict]>,
                           _ body: (HTTPClient, CountingHTTPSServer) async throws -> Void) async throws {
        let server = try await CountingHTTPSServer(group: MultiThreadedEventLoopGroup.singleton, http2: false)
        let pinning = try PincheckHTTPClient(validation: ValidationPolicy(anchors: try TrustAnchors(certificates: [root])), pinSets: pinSets,
                                             now: { TestPKI.time }, onReportOnlyFailure: { verdict in reports.withLockedValue { $0.append(verdict) } })
        // A long connect timeout: under load (a sanitizer run beside the suite) a handshake can take
        // seconds, and AsyncHTTPClient would then open a second connection, which the tests count.
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(60)))
        try configuration.pin(with: pinning)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        do {
            try await body(client, server)
        } catch {
            try? await client.shutdown()
            try? await server.stop()
            throw error
        }
        try await client.shutdown()
        try await server.stop()
    }

    static func leafSet(_ name: String, _ enforcement: PinSet.Enforcement, expires: Date? = nil) throws -> PinSet {
        PinSet(.publicKeys(try PinnedPublicKeys(certificates: [TestPKI.certificate(name)], scope: .leaf)), enforcement: enforcement, expires: expires)
    }

    @Test("pin sets: a report-only mismatch is handed over and the request goes on; an enforced mismatch refuses; an expired set is skipped")
    func pinSets() async throws {
        let reports = NIOLockedValueBox<[Verdict]>([])
        // Enforced and matching, report-only and not matching (the next key, not yet served).
        try await Self.withClient(pinSets: [try Self.leafSet("rsa-ip", .enforce), try Self.leafSet("rsa-leaf-rotated", .reportOnly)],
                                  reports: reports) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            #expect(try await Self.get(client, server).status == .ok)
        }
        let reported = reports.withLockedValue { $0 }
        #expect(reported.count == 1)
        #expect(reported.first?.isTrusted == true)
        #expect(reported.first?.reportOnlyFailures.map(\.code) == [.pinMismatch])
        #expect(reported.first?.warnings.map(\.code) == [.reportOnlyFailure])

        // An enforced set that does not match refuses, whatever the report-only ones say.
        try await Self.withClient(pinSets: [try Self.leafSet("rsa-leaf-rotated", .enforce)], reports: reports) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            let error = try await #require(throws: PincheckTrustError.self) { try await Self.get(client, server) }
            #expect(error.codes == [.pinMismatch])
            #expect(server.applicationBytes == 0)
        }

        // The same set expired the day before the verification time: skipped, the request goes on.
        try await Self.withClient(pinSets: [try Self.leafSet("rsa-leaf-rotated", .enforce, expires: TestPKI.time.addingTimeInterval(-86_400))],
                                  reports: reports) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            #expect(try await Self.get(client, server).status == .ok)
        }
        #expect(reports.withLockedValue { $0.count } == 1, "no report-only set in the last two")
    }

    @Test("pin sets the road cannot enforce per connection are refused: certificates, an anchor's key, intermediates")
    func pinSetLimits() throws {
        let anchors = try TrustAnchors(certificates: [Self.root])
        let refused: [PinSet] = [
            PinSet(.certificates(try PinnedCertificates([TestPKI.certificate("rsa-ip")])), enforcement: .reportOnly),
            PinSet(.publicKeys(try PinnedPublicKeys(certificates: [Self.root])), enforcement: .reportOnly),
            PinSet(.publicKeys(try PinnedPublicKeys(certificates: [TestPKI.certificate("rsa-intermediate")], scope: .certificateAuthorities))),
            // The same intermediate spelled as every other guide spells pins: any certificate.
            PinSet(.publicKeys(try PinnedPublicKeys(certificates: [TestPKI.certificate("rsa-intermediate")]))),
        ]
        for set in refused {
            let error = #expect(throws: PincheckError.self) { _ = try PincheckHTTPClient(validation: ValidationPolicy(anchors: anchors), pinSets: [set]) }
            #expect(error?.description.contains("cannot enforce this pin set") == true, "\(String(describing: error))")
        }
    }

    @Test("an intermediate's key is refused when the policy is made, however it is scoped or passed, where the road can tell it is a CA's")
    func intermediatePinsRefused() throws {
        let intermediate = TestPKI.certificate("rsa-intermediate")
        let leaf = TestPKI.certificate("rsa-ip")
        // Given as a certificate, scoped to any certificate of the path (the default).
        #expect(throws: PincheckError.self) { _ = try PincheckHTTPClient(policy: try Self.policy(pins: [intermediate])) }
        // Given as a hash, when the policy's additional intermediates say whose key it is.
        var policy = TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(pins: [intermediate.publicKeyPin])),
                                 anchors: try TrustAnchors(certificates: [Self.root]))
        policy.validation.additionalIntermediates = [intermediate]
        let error = #expect(throws: PincheckError.self) { _ = try PincheckHTTPClient(policy: policy) }
        #expect(error?.description.contains("intermediate-pins") == true, "\(String(describing: error))")
        // The leaf's key, given the same two ways, is what this road checks.
        #expect(throws: Never.self) { _ = try PincheckHTTPClient(policy: try Self.policy(pins: [leaf])) }
        policy.pinning = .publicKeys(try PinnedPublicKeys(pins: [leaf.publicKeyPin]))
        #expect(throws: Never.self) { _ = try PincheckHTTPClient(policy: policy) }
    }

    /// The deprecated form, which takes the validation as a `TrustPolicy`, still refuses one that
    /// pins: its pins would not be checked as a pin set.
    @Test("the deprecated TrustPolicy form refuses a validation that pins") @available(*, deprecated)
    func deprecatedValidationThatPinsIsRefused() throws {
        let pinned = try Self.policy(pins: [TestPKI.certificate("rsa-ip")])
        #expect(throws: PincheckError.self) { _ = try PincheckHTTPClient(validation: pinned, pinSets: []) }
        let unpinned = TrustPolicy(anchors: try TrustAnchors(certificates: [Self.root]))
        #expect(throws: Never.self) { _ = try PincheckHTTPClient(validation: unpinned, pinSets: []) }
    }

    /// One GET, its body read to the end: AsyncHTTPClient gives the connection back to its pool
    /// only then, so a request made right after one whose body was left unread opens a second
    /// connection (what made "one connection" tests fail one run in four).
    static func get(_ client: HTTPClient, _ server: CountingHTTPSServer) async throws -> HTTPClientResponse {
        let response = try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(server.port)/"), timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response
    }

    /// Waits (bounded) until the server has seen every connection close.
    static func allClosed(_ server: CountingHTTPSServer) async -> Bool {
        for _ in 0..<100 where server.open > 0 { try? await Task.sleep(for: .milliseconds(20)) }
        return server.open == 0
    }

    @Test("a right leaf pin: 200 twice over one connection, checked once")
    func rightPin() async throws {
        try await Self.withClient(try Self.policy(pins: [TestPKI.certificate("rsa-ip")])) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            #expect(try await Self.get(client, server).status == .ok)
            #expect(try await Self.get(client, server).status == .ok)
            #expect(server.accepted == 1)
        }
    }

    @Test("a wrong pin: a PincheckTrustError with pin.mismatch, no request byte sent, the connection closed")
    func wrongPin() async throws {
        try await Self.withClient(try Self.policy(pins: [TestPKI.certificate("rsa-leaf-rotated")])) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            let error = try await #require(throws: PincheckTrustError.self) { try await Self.get(client, server) }
            #expect(error.codes == [.pinMismatch])
            #expect(error.verdict?.servedChain.first?.publicKeyPin == TestPKI.certificate("rsa-ip").publicKeyPin)
            #expect(error.description.contains("leaf only"), "\(error)")
            #expect(!error.decision.allowsConnection)
            #expect(error.verdict.map { Disposition(serverTrust: $0) } == .cancelAuthenticationChallenge)
            // Not retried: one connection, refused before any request was written, and closed by
            // the initializer (AsyncHTTPClient 1.37 leaves a failed initializer's channel open).
            #expect(server.accepted == 1)
            #expect(server.applicationBytes == 0)
            #expect(await Self.allClosed(server))
        }
    }

    @Test("HTTP/2: a right pin → 200 twice over one connection; a wrong pin → PincheckTrustError, no stream opened (no HEADERS frame)")
    func http2() async throws {
        try await Self.withClient(try Self.policy(pins: [TestPKI.certificate("rsa-ip")]), http2: true) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            let first = try await Self.get(client, server)
            #expect(first.status == .ok)
            #expect(first.version == .http2)
            #expect(try await Self.get(client, server).status == .ok)
            #expect(server.accepted == 1)
            #expect(server.streams == 2)
        }
        try await Self.withClient(try Self.policy(pins: [TestPKI.certificate("rsa-leaf-rotated")]), http2: true) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            let error = try await #require(throws: PincheckTrustError.self) { try await Self.get(client, server) }
            #expect(error.codes == [.pinMismatch])
            // AHC starts its HTTP/2 connection (preface and SETTINGS) before the initializer runs;
            // no request stream is ever opened on a refused one.
            #expect(server.streams == 0)
            #expect(server.accepted == 1)
            #expect(await Self.allClosed(server))
        }
    }

    static func nio(_ name: String) throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: TestPKI.certificate(name).derBytes, format: .der)
    }

    /// A client configuration with a client certificate and every TLS field set away from its default.
    static func customisedBase() throws -> HTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateChain = try (NIOSSLCertificate.fromPEMFile(TestPKI.path("rsa-client-only.pem")) + NIOSSLCertificate.fromPEMFile(TestPKI.path("rsa-intermediate.pem"))).map { .certificate($0) }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: TestPKI.path("keys/rsa-client-only.key"), format: .pem))
        tls.minimumTLSVersion = .tlsv12
        tls.maximumTLSVersion = .tlsv13
        tls.cipherSuites = "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256"
        tls.curves = [.x25519, .secp256r1]
        tls.verifySignatureAlgorithms = [.rsaPssRsaeSha256, .rsaPkcs1Sha256]
        tls.signingSignatureAlgorithms = [.rsaPssRsaeSha256, .rsaPkcs1Sha256]
        tls.applicationProtocols = ["http/1.1"]
        tls.shutdownTimeout = .seconds(7)
        tls.renegotiationSupport = .once
        tls.certificateVerification = .none
        tls.additionalTrustRoots = [.certificates([try Self.nio("attacker-root")])]
        var base = HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: .seconds(60)))
        base.maximumUsesPerConnection = 3
        base.decompression = .enabled(limit: .ratio(9))
        return base
    }

    @Test("pinned(by:base:) keeps every field of the base it has no reason to change, the client certificate first")
    func pinnedKeepsTheBase() throws {
        let base = try Self.customisedBase()
        let pinned = try HTTPClient.Configuration.pinned(by: try Self.policy(pins: [TestPKI.certificate("rsa-ip")]), base: base)
        // What pinning decides: the policy's anchors, nothing else trusted, the chain and name verified.
        var expected = base.tlsConfiguration!
        expected.trustRoots = .certificates([try Self.nio("rsa-root")])
        expected.additionalTrustRoots = []
        expected.certificateVerification = .fullVerification
        let tls = try #require(pinned.tlsConfiguration)
        #expect(tls.bestEffortEquals(expected))
        #expect(tls.certificateChain == base.tlsConfiguration!.certificateChain)
        #expect(tls.privateKey == base.tlsConfiguration!.privateKey)
        #expect(pinned.maximumUsesPerConnection == 3)
        #expect(pinned.timeout.connect == .seconds(60))
        #expect(!pinned.connectionPool.retryConnectionEstablishment)
    }

    @Test("a pinned client keeps its client certificate: a server that requires one answers 200")
    func pinnedClientPresentsItsCertificate() async throws {
        let server = try await CountingHTTPSServer(group: MultiThreadedEventLoopGroup.singleton, requiringClientCertificates: true)
        var base = try Self.customisedBase()
        base.tlsConfiguration!.cipherSuites = TLSConfiguration.makeClientConfiguration().cipherSuites
        let configuration = try HTTPClient.Configuration.pinned(by: try Self.policy(pins: [TestPKI.certificate("rsa-ip")]), base: base)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        var status: HTTPResponseStatus? = nil
        var failure: (any Error)? = nil
        do { status = try await Self.get(client, server).status } catch { failure = error }
        try? await client.shutdown()
        try await server.stop()
        #expect(failure == nil, "\(failure.map { "\($0)" } ?? "")")
        #expect(status == .ok)
    }

    @Test("a base that offers a pre-shared key is refused: a PSK handshake has no certificate to check")
    func preSharedKeyRefused() throws {
        var base = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.pskClientProvider = { _ in PSKClientIdentityResponse(key: NIOSSLSecureBytes([1, 2, 3]), identity: "client") }
        base.tlsConfiguration = tls
        #expect(throws: PincheckError.self) {
            _ = try HTTPClient.Configuration.pinned(by: try Self.policy(pins: [TestPKI.certificate("rsa-ip")]), base: base)
        }
    }

    @Test("a pin of the anchor is enforced as the only trust root")
    func rootPin() async throws {
        let other = TestPKI.certificate("ec-root")
        let policy = try Self.policy(pins: [Self.root], anchors: [Self.root, other])
        let pinning = try PincheckHTTPClient(policy: policy)
        #expect(pinning.leafPins == nil)
        #expect(pinning.trustRoots.map(\.publicKeyPin) == [Self.root.publicKeyPin])
        try await Self.withClient(policy) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            #expect(try await Self.get(client, server).status == .ok)
        }
        // Pinned to the other root only: NIOSSL refuses the chain (it ends at rsa-root).
        try await Self.withClient(try Self.policy(pins: [other], anchors: [Self.root, other])) { (client: HTTPClient, server: CountingHTTPSServer) async throws in
            await #expect(throws: (any Error).self) { try await Self.get(client, server) }
            #expect(server.applicationBytes == 0)
        }
    }

    /// A policy that runs into `limit` on this road.
    static func policy(runningInto limit: PincheckHTTPClient.Limit) throws -> TrustPolicy {
        let leaf = TestPKI.certificate("rsa-ip"), intermediate = TestPKI.certificate("rsa-intermediate")
        var policy = try Self.policy(pins: [leaf])
        switch limit {
        case .intermediatePins: policy = try Self.policy(pins: [intermediate], scope: .certificateAuthorities)
        case .pinsAtSeveralDepths: policy = try Self.policy(pins: [leaf, root])
        case .anchorNotRoot: policy = try Self.policy(pins: [leaf], anchors: [intermediate])
        case .revocation: policy.validation.revocation.requireStapledOCSP = true
        case .pinnedCertificateNotRoot:
            policy = TrustPolicy(pinning: .certificates(try PinnedCertificates([intermediate])), anchors: try TrustAnchors(certificates: [root]))
        case .chainValidationDisabled: policy.validation.chainValidation = .disabled(because: "test")
        case .leafRequirements: policy.validation.purpose = .clientAuthentication
        case .certificateTransparency:
            policy.validation.certificateTransparency = CertificateTransparency.Requirement(policy: .chrome, logs: CertificateTransparency.Logs([]), enforcement: .reportOnly)
        }
        return policy
    }

    @Test("what the road cannot enforce is refused when the configuration is made, naming the limit",
          arguments: PincheckHTTPClient.Limit.allCases)
    func refusedAtConfiguration(limit: PincheckHTTPClient.Limit) throws {
        let policy = try Self.policy(runningInto: limit)
        let error = try #require(throws: PincheckError.self) { try PincheckHTTPClient(policy: policy) }
        #expect(error.code == .invalidPolicy)
        #expect(error.message.contains("(\(limit.rawValue))"), "\(error.message)")
    }

    @Test("required key usages are refused too (leaf-requirements)")
    func keyUsages() throws {
        var policy = try Self.policy(pins: [TestPKI.certificate("rsa-ip")])
        policy.validation.requiredKeyUsages = [.digitalSignature]
        let error = try #require(throws: PincheckError.self) { try PincheckHTTPClient(policy: policy) }
        #expect(error.message.contains("(leaf-requirements)"))
    }
}
#endif  // AsyncHTTPClient trait
