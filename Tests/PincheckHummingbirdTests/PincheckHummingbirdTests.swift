#if Hummingbird
import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import PincheckHummingbird
import PincheckMTLSTestSupport
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// A Hummingbird server that requires client certificates judged by Pincheck, and real clients
/// (AsyncHTTPClient) presenting the right certificate, another CA's, one without the required
/// identity, and none.
@Suite("Hummingbird: client certificates judged by Pincheck (mTLS)", .serialized)
struct HummingbirdClientCertificateTests {
    /// Runs `body` with the port of a Hummingbird server whose `/whoami` answers with the decision's
    /// verified path (subjects) and the leaf's identities.
    static func withServer(_ verifier: PincheckClientCertificateVerifier, decisions: NIOLockedValueBox<[ChallengeDecision]>,
                           _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        let router = Router(context: PincheckBasicRequestContext.self)
        router.get("whoami") { _, context -> String in
            let decision = await verifier.decision(in: context)
            let path = decision?.verdict?.verifiedPath?.certificates.map(\.subject) ?? []
            let identities = decision?.verdict?.verifiedPath?.certificates.first?.subjectAlternativeNames.map(\.description) ?? []
            return "identities=\(identities.joined(separator: ",")) path=\(path.count):\(path.joined(separator: "|"))"
        }
        let chain = try NIOSSLCertificate.fromPEMFile(TestPKI.path("rsa-ip.pem")) + NIOSSLCertificate.fromPEMFile(TestPKI.path("rsa-intermediate.pem"))
        let key = try NIOSSLPrivateKey(file: TestPKI.path("keys/rsa-ip.key"), format: .pem)
        let tls = verifier.hummingbirdTLSConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)) { decision in
            decisions.withLockedValue { $0.append(decision) }
        }
        let ports = AsyncStream<Int>.makeStream()
        // Quiet: cancelling the service at the end of a test is logged as errors otherwise.
        var logger = Logger(label: "pincheck-hummingbird-tests")
        logger.logLevel = .critical
        let app = Application(router: router, server: try .tls(.http1(), configuration: tls),
                              configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in ports.continuation.yield(channel.localAddress?.port ?? 0) },
                              logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await body(port)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }

    @Test("the right client certificate: the route gets the decision, with the identity and the verified path up to the anchor")
    func rightCertificate() async throws {
        let verifier = try MTLSClient.spiffeVerifier(), decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        try await Self.withServer(verifier, decisions: decisions) { port in
            let answer = try await MTLSClient.get(port: port, chain: [SPIFFEClient.files.certificate, TestPKI.path("rsa-intermediate.pem")],
                                               key: SPIFFEClient.files.key).get()
            #expect(answer.hasPrefix("200 identities=URI:\(SPIFFEClient.identity)"), "\(answer)")
            #expect(answer.hasSuffix("path=3:CN=api workload,O=Pincheck Tests|CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests|CN=Pincheck Test RSA Root CA,O=Pincheck Tests"), "\(answer)")
        }
        #expect(decisions.withLockedValue { $0.map(\.rule) } == [.trusted])
    }

    @Test("refused before any route: another CA's certificate, one without the required identity, none",
          arguments: MTLSClient.refusedClients)
    func refused(_ client: (certificate: String, key: String)) async throws {
        let verifier = try MTLSClient.spiffeVerifier(), decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        try await Self.withServer(verifier, decisions: decisions) { port in
            await MTLSClient.askRefused(client, port: port)
        }
        MTLSClient.expectRefusals(decisions.withLockedValue { $0 }, for: client)
    }

    @Test("two SPIFFE trust domains from a bundle folder: a cross-domain client refused, the right ones answered, a new domain trusted without a restart")
    func trustDomains() async throws {
        let (folder, verifier) = try TrustDomainScenario.start()
        try await Self.withServer(verifier, decisions: NIOLockedValueBox([])) { port in
            try await TrustDomainScenario.run(port: port, folder: folder, verifier: verifier)
        }
    }
}

/// `Examples/HummingbirdMTLSServer` run as its users would: started, its port read from its first
/// line, then asked by clients with and without the required identity.
@Suite("hummingbird-mtls-server example", .serialized)
struct HummingbirdMTLSServerExampleTests {
    @Test("the SPIFFE client gets its identity and the verified path; a client without the identity gets no answer")
    func example() async throws {
        let (process, port) = try MTLSClient.launch("hummingbird-mtls-server", MTLSClient.exampleServerArguments)
        defer { MTLSClient.stop(process) }
        try await MTLSClient.expectExampleServer(port: port)
    }
}
#endif  // Hummingbird trait
