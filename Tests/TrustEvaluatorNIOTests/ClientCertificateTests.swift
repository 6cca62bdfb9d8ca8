import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// A TLS server on 127.0.0.1 that requires client certificates judged by Pincheck; to each
/// message it answers with what its request handler can see: the decision's rule, the verdict's
/// verified path and NIOSSL's validated chain (subjects, leaf first).
struct MutualTLSServer {
    let channel: any Channel
    let decisions: NIOLockedValueBox<[ChallengeDecision]>
    var port: Int { channel.localAddress!.port! }

    final class Reporter: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let channel = context.channel
            let validated = (try? channel.pipeline.syncOperations.nioSSL_peerValidatedCertificateChain())??
                .compactMap { try? Certificate(derEncoded: $0.toDERBytes()).subject } ?? []
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            PincheckClientCertificateVerifier.decision(on: channel).whenSuccess { decision in
                let path = decision?.verdict?.verifiedPath?.certificates.map(\.subject) ?? []
                let line = "rule=\(decision?.rule.map { "\($0)" } ?? "none") path=\(path.count):\(path.joined(separator: "|")) validated=\(validated.count):\(validated.joined(separator: "|"))"
                let context = loopBound.value
                context.writeAndFlush(NIOAny(ByteBuffer(string: line)), promise: nil)
            }
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }

    static func start(_ verifier: PincheckClientCertificateVerifier) async throws -> MutualTLSServer {
        let chain = try NIOSSLCertificate.fromPEMFile(PKI.path("rsa-ip.pem")) + NIOSSLCertificate.fromPEMFile(PKI.path("rsa-intermediate.pem"))
        let key = try NIOSSLPrivateKey(file: PKI.path("keys/rsa-ip.key"), format: .pem)
        let context = try NIOSSLContext(configuration: PincheckClientCertificateVerifier.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)))
        let decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try verifier.addServerHandlers(to: channel.pipeline.syncOperations, context: context) { decision in
                        decisions.withLockedValue { $0.append(decision) }
                    }
                    try channel.pipeline.syncOperations.addHandler(Reporter())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return MutualTLSServer(channel: channel, decisions: decisions)
    }
}

@Suite("mTLS: client certificates judged by Pincheck on a NIOSSL server")
struct ClientCertificateTests {
    static let root = PKI.certificate("rsa-root")

    static func verifier(identities: [ClientIdentity] = [.uri(SPIFFEClient.identity)], revocation: Bool = false) throws -> PincheckClientCertificateVerifier {
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [root]))
        if revocation {
            policy.validation.revocationLists = [
                try CertificateRevocationList(pemEncoded: String(contentsOfFile: PKI.path("revocation/crl-intermediate-empty.pem"), encoding: .utf8)),
                try CertificateRevocationList(pemEncoded: String(contentsOfFile: PKI.path("revocation/crl-root-revokes-intermediate.pem"), encoding: .utf8)),
            ]
            policy.validation.revocationScope = .wholeChain
        }
        return try PincheckClientCertificateVerifier(policy: policy, requiredIdentities: identities, now: { PKI.time }, offloadEvaluation: false)
    }

    /// Connects presenting `chain` (PEM files; none: no certificate) with `key`, sends a line and
    /// returns the server's answer, or the error the connection ended with.
    static func connect(port: Int, chain: [String], key: String?) async -> Result<String, any Error> {
        do {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(PKI.path("rsa-root.pem")))
            configuration.certificateChain = try chain.flatMap { try NIOSSLCertificate.fromPEMFile($0) }.map { .certificate($0) }
            if let key { configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)) }
            let context = try NIOSSLContext(configuration: configuration)
            let group = MultiThreadedEventLoopGroup.singleton
            let reply = group.next().makePromise(of: String.self)
            let channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                        try channel.pipeline.syncOperations.addHandler(FirstReply(promise: reply))
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
            channel.writeAndFlush(ByteBuffer(string: "hello"), promise: nil)
            defer { channel.close(promise: nil) }
            return .success(try await reply.futureResult.get())
        } catch {
            return .failure(error)
        }
    }

    static func run(_ verifier: PincheckClientCertificateVerifier, chain: [String], key: String?) async throws
        -> (answer: Result<String, any Error>, decisions: [ChallengeDecision])
    {
        let server = try await MutualTLSServer.start(verifier)
        let answer = await connect(port: server.port, chain: chain, key: key)
        try await server.channel.close()
        return (answer, server.decisions.withLockedValue { $0 })
    }

    @Test("the right client: accepted; the handler sees the verdict and the verified path as NIOSSL's validated chain")
    func rightClient() async throws {
        let client = SPIFFEClient.files
        let (answer, decisions) = try await Self.run(try Self.verifier(), chain: [client.certificate, PKI.path("rsa-intermediate.pem")], key: client.key)
        let line = try answer.get()
        #expect(line.hasPrefix("rule=trusted path=3:CN=api workload,O=Pincheck Tests|"), "\(line)")
        let path = try #require(decisions.first?.verdict?.verifiedPath?.certificates).map(\.subject).joined(separator: "|")
        #expect(line.hasSuffix("validated=3:\(path)"), "\(line)")
        #expect(decisions.map(\.rule) == [.trusted])
    }

    @Test("an extra unrelated certificate in the presented chain is not in the validated chain")
    func extraCertificate() async throws {
        let client = SPIFFEClient.files
        let (answer, decisions) = try await Self.run(try Self.verifier(),
            chain: [client.certificate, PKI.path("rsa-intermediate.pem"), PKI.path("ec-root.pem")], key: client.key)
        let line = try answer.get()
        let path = try #require(decisions.first?.verdict?.verifiedPath?.certificates)
        // NIOSSL's validated chain is the verified path: it ends at the anchor, not at the extra root.
        #expect(line.hasSuffix("validated=3:\(path.map(\.subject).joined(separator: "|"))"), "\(line)")
        #expect(path.map(\.subject).last == Self.root.subject)
        #expect(!path.contains(PKI.certificate("ec-root")))
    }

    @Test("a certificate from another CA is refused: the handshake fails, the decision names the chain")
    func otherCA() async throws {
        let (answer, decisions) = try await Self.run(try Self.verifier(identities: []),
            chain: [PKI.path("attacker-leaf.pem")], key: PKI.path("keys/attacker-leaf.key"))
        #expect(throws: (any Error).self) { try answer.get() }
        let decision = try #require(decisions.first)
        #expect(decision.rule == .untrusted)
        #expect(decision.verdict?.failures.contains { $0.code.description.hasPrefix("chain.") } == true, "\(decision.verdict?.failures ?? [])")
        // The mTLS server's answer is the one decider's.
        #expect(!decision.allowsConnection)
        #expect(decision.verdict.map { Disposition(serverTrust: $0) } == .cancelAuthenticationChallenge)
    }

    @Test("no client certificate: the handshake fails and nothing is accepted")
    func noCertificate() async throws {
        let (answer, decisions) = try await Self.run(try Self.verifier(), chain: [], key: nil)
        #expect(throws: (any Error).self) { try answer.get() }
        #expect(!decisions.contains { $0.rule == .trusted })
    }

    @Test("a client whose CA is revoked (the root's CRL) is refused with revocation.revoked")
    func revoked() async throws {
        let client = SPIFFEClient.files
        let (answer, decisions) = try await Self.run(try Self.verifier(revocation: true),
            chain: [client.certificate, PKI.path("rsa-intermediate.pem")], key: client.key)
        #expect(throws: (any Error).self) { try answer.get() }
        #expect(decisions.first?.verdict?.failures.map(\.code) == [.revoked])
    }

    @Test("a client without the required identity is refused with identity.mismatch, naming what it carries")
    func wrongIdentity() async throws {
        let client = SPIFFEClient.files
        let (answer, decisions) = try await Self.run(try Self.verifier(identities: [.uri("spiffe://pincheck.test/ns/prod/sa/billing"), .dnsName("billing.pincheck.test")]),
            chain: [client.certificate, PKI.path("rsa-intermediate.pem")], key: client.key)
        #expect(throws: (any Error).self) { try answer.get() }
        let failure = try #require(decisions.first?.verdict?.failures.first)
        #expect(failure.code == .identityMismatch)
        #expect(failure.message.contains("URI:\(SPIFFEClient.identity)"))
    }

    @Test("a policy without chain validation is refused for a server")
    func noValidation() {
        var policy = TrustPolicy()
        policy.validation.chainValidation = .disabled(because: "test")
        #expect(throws: PincheckError.self) { try PincheckClientCertificateVerifier(policy: policy) }
    }
}
