#if Vapor
import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import PincheckAsyncHTTPClient
import PincheckMTLSTestSupport
import PincheckTestSupport
import PincheckVapor
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO
import Vapor

/// A Vapor server that requires client certificates judged by Pincheck, and real clients
/// (AsyncHTTPClient) presenting the right certificate, another CA's, one without the required
/// identity, and none.
@Suite("Vapor: client certificates judged by Pincheck (mTLS)", .serialized)
struct VaporClientCertificateTests {
    /// Runs `body` with the port of a Vapor server whose `/whoami` answers with what a route can
    /// see: the identities of the verdict's leaf and Vapor's `peerCertificateChain` (subjects).
    static func withServer(_ verifier: PincheckClientCertificateVerifier, decisions: NIOLockedValueBox<[ChallengeDecision]>,
                           _ body: (Int) async throws -> Void) async throws {
        // Only the program's name as the command line: the test runner's own arguments are not Vapor's.
        let app = try await Application.make(Environment(name: "testing", arguments: ["pincheck-vapor-tests"]))
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        let chain = try NIOSSLCertificate.fromPEMFile(TestPKI.path("rsa-ip.pem")) + NIOSSLCertificate.fromPEMFile(TestPKI.path("rsa-intermediate.pem"))
        let key = try NIOSSLPrivateKey(file: TestPKI.path("keys/rsa-ip.key"), format: .pem)
        app.http.server.configuration.requireClientCertificates(judgedBy: verifier, certificateChain: chain.map { .certificate($0) },
                                                                privateKey: .privateKey(key)) { decision in
            decisions.withLockedValue { $0.append(decision) }
        }
        app.get("whoami") { req -> String in
            let identities = req.pincheckClientIdentities(from: verifier).map(\.description)
            let validated = req.peerCertificateChain?.map { "\($0.subject)" } ?? []
            return "identities=\(identities.joined(separator: ",")) validated=\(validated.count):\(validated.joined(separator: "|"))"
        }
        do {
            try await app.startup()
            try await body(try #require(app.http.server.shared.localAddress?.port))
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }

    @Test("the right client certificate: the route sees the verdict's identity and the verified path as the peer chain")
    func rightCertificate() async throws {
        let verifier = try MTLSClient.spiffeVerifier(), decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        try await Self.withServer(verifier, decisions: decisions) { port in
            let answer = try await MTLSClient.get(port: port, chain: [SPIFFEClient.files.certificate, TestPKI.path("rsa-intermediate.pem")],
                                               key: SPIFFEClient.files.key).get()
            #expect(answer.hasPrefix("200 "), "\(answer)")
            // The identities, read in one call, are exactly the verified leaf's SPIFFE ID.
            #expect(answer.contains("identities=URI:\(SPIFFEClient.identity) validated="), "\(answer)")
            // The verified path, up to the anchor (which the client never sent): leaf, intermediate, root.
            #expect(answer.contains("validated=3:"), "\(answer)")
            #expect(answer.hasSuffix("CN=Pincheck Test RSA Root CA,O=Pincheck Tests"), "\(answer)")
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
#endif  // Vapor trait

#if Vapor
/// Vapor's own client (`app.client`, AsyncHTTPClient underneath) pinned by Pincheck through
/// `app.http.client.configuration`, against a local TLS server.
@Suite("Vapor: app.client pinned by Pincheck", .serialized)
struct VaporPinnedClientTests {
    static func get(pinning pin: Certificate) async throws -> Result<UInt, any Error> {
        let server = try TestTLSServer(certificate: "rsa-ip", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let app = try await Application.make(Environment(name: "testing", arguments: ["pincheck-vapor-tests"]))
        let policy = TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(certificates: [pin])),
                                 anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")]))
        app.http.client.configuration = try .pinned(by: policy, base: app.http.client.configuration)
        let result: Result<UInt, any Error>
        do {
            result = .success(try await app.client.get("https://localhost:\(server.port)/").status.code)
        } catch {
            result = .failure(error)
        }
        try await app.asyncShutdown()
        return result
    }

    @Test("the right leaf pin: HTTP 200; a wrong one: PincheckTrustError (pin.mismatch) before any request byte")
    func pinned() async throws {
        #expect(try await Self.get(pinning: TestPKI.certificate("rsa-ip")).get() == 200)
        guard case .failure(let error) = try await Self.get(pinning: TestPKI.certificate("rsa-leaf-rotated")) else {
            Issue.record("a wrong pin was accepted")
            return
        }
        let refusal = try #require(error as? PincheckTrustError, "\(error)")
        #expect(refusal.codes == [.pinMismatch])
    }
}
#endif  // Vapor trait

#if Vapor
/// `Examples/VaporMTLSServer` run as its users would: started, its port read from its first line,
/// then asked by clients with and without the required identity.
@Suite("vapor-mtls-server example", .serialized)
struct VaporMTLSServerExampleTests {
    @Test("the SPIFFE client gets its identity and the verified path; a client without the identity gets no answer")
    func example() async throws {
        let (process, port) = try MTLSClient.launch("vapor-mtls-server", MTLSClient.exampleServerArguments)
        defer { MTLSClient.stop(process) }
        try await MTLSClient.expectExampleServer(port: port)
    }
}

/// `Examples/VaporPinnedClient` against a local TLS server: the right pin, a wrong one.
@Suite("vapor-pinned-client example", .serialized)
struct VaporPinnedClientExampleTests {
    @Test("the right leaf pin → HTTP 200, exit 0; a wrong pin → refused: pin.mismatch, exit 1")
    func example() throws {
        let server = try TestTLSServer(certificate: "rsa-ip", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let url = "https://localhost:\(server.port)/", root = TestPKI.path("rsa-root.pem")
        let right = try ExampleProgram.run("vapor-pinned-client", [url, root, TestPKI.certificate("rsa-ip").publicKeyPin.description])
        #expect(right.status == 0, "\(right.output)")
        #expect(right.output.contains("HTTP 200"), "\(right.output)")
        let wrong = try ExampleProgram.run("vapor-pinned-client", [url, root, TestPKI.certificate("rsa-leaf-rotated").publicKeyPin.description])
        #expect(wrong.status == 1, "\(wrong.output)")
        #expect(wrong.output.contains("refused: pin.mismatch"), "\(wrong.output)")
    }
}
#endif  // Vapor trait
