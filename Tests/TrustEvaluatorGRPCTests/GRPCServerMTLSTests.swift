import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import NIOConcurrencyHelpers
import NIOSSL
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorGRPC
import TrustEvaluatorNIO

/// WhoAmI.Unary: answers with the identities of the client Pincheck let in on this connection, and
/// the length of the chain gRPC was told was validated ("IDENTITIES|LENGTH").
struct WhoAmIService: RegistrableRPCService {
    static let method = MethodDescriptor(fullyQualifiedService: "pincheck.test.WhoAmI", method: "Unary")
    let verifier: PincheckClientCertificateVerifier
    /// How many calls reached the handler.
    let handled: NIOLockedValueBox<Int>

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(forMethod: Self.method, deserializer: RawBytes(), serializer: RawBytes()) { request, context in
            _ = try await ServerRequest(stream: request).message
            handled.withLockedValue { $0 += 1 }
            let identities = verifier.decision(in: context)?.clientIdentities.map(\.description).joined(separator: ",") ?? "none"
            let validated = (context.transportSpecific as? HTTP2ServerTransport.Posix.Context)?.peerCertificateChain.map { Array($0).count } ?? 0
            return StreamingServerResponse(single: ServerResponse(message: Array("\(identities)|\(validated)".utf8)))
        }
    }
}

/// A gRPC Swift 2 server whose clients are judged by Pincheck, with SPIFFE trust domains (issue 44).
@Suite("gRPC server: client certificates judged by Pincheck (mTLS)", .serialized)
struct GRPCServerMTLSTests {
    static let pki = SPIFFEDomainsPKI.files

    static func verifier() throws -> PincheckClientCertificateVerifier {
        try PincheckClientCertificateVerifier(trustDomains: SPIFFETrustDomain.bundles(inFolder: pki.bundleFolder), now: { TestPKI.time })
    }

    /// One WhoAmI call presenting `client` (nil: no certificate); the answer, or the error the call
    /// ended with. The deadline guards against a hang, it does not time anything: the suites share
    /// 2 cores. A refused client's call ends at its deadline too (gRPC waits for a connection that
    /// is never let in), so refused calls are given a shorter one than the one expected to answer.
    static func call(_ verifier: PincheckClientCertificateVerifier, as client: SPIFFEDomainsPKI.Client?,
                     decisions: NIOLockedValueBox<[ChallengeDecision]>, handled: NIOLockedValueBox<Int> = .init(0),
                     deadline: Duration = .seconds(15), pinnedBy clientVerifier: PincheckNIOVerifier? = nil) async throws -> Result<String, any Error> {
        let server = HTTP2ServerTransport.Posix(
            address: .ipv4(host: "127.0.0.1", port: 0),
            transportSecurity: verifier.grpcServerTransportSecurity(
                certificateChain: [.file(path: TestPKI.path("rsa-leaf.pem"), format: .pem), .file(path: TestPKI.path("rsa-intermediate.pem"), format: .pem)],
                privateKey: .file(path: TestPKI.path("keys/rsa-leaf.key"), format: .pem)) { decision in
                    decisions.withLockedValue { $0.append(decision) }
                })
        return try await withGRPCServer(transport: server, services: [WhoAmIService(verifier: verifier, handled: handled)]) { server in
            let address = try #require(try await server.listeningAddress?.ipv4)
            let transport = try clientVerifier.map { pinned in
                // Pincheck's client settings, the client's identity in their TLS base.
                var base = TLSConfiguration.makeClientConfiguration()
                if let client {
                    base.certificateChain = try NIOSSLCertificate.fromPEMFile(client.certificate).map { .certificate($0) }
                    base.privateKey = .privateKey(try NIOSSLPrivateKey(file: client.key, format: .pem))
                }
                return try PincheckGRPCClientSettings(verifier: pinned, host: "www.example.test", port: address.port, base: base)
                    .makeTransport(connectingTo: .ipv4(address: address.host, port: address.port))
            } ?? HTTP2ClientTransport.Posix(
                target: .ipv4(address: address.host, port: address.port),
                transportSecurity: .tls { config in
                    if let client {
                        config.certificateChain = [.file(path: client.certificate, format: .pem)]
                        config.privateKey = .file(path: client.key, format: .pem)
                    }
                    config.trustRoots = .certificates([.file(path: TestPKI.path("rsa-root.pem"), format: .pem)])
                    config.serverCertificateVerification = .noHostnameVerification
                })
            return await Result(catching: {
                try await withGRPCClient(transport: transport) { grpc in
                    var options = CallOptions.defaults
                    options.timeout = deadline
                    return try await grpc.unary(request: ClientRequest(message: Array("who".utf8)), descriptor: WhoAmIService.method,
                                                serializer: RawBytes(), deserializer: RawBytes(), options: options) { response in
                        String(decoding: try response.message, as: UTF8.self)
                    }
                }
            })
        }
    }

    @Test("a client of its own trust domain: the RPC runs, and the handler reads the identity Pincheck let in")
    func rightClient() async throws {
        let decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        let answer = try await Self.call(try Self.verifier(), as: Self.pki.clientA, decisions: decisions, deadline: .seconds(60)).get()
        let seen = decisions.withLockedValue { $0 }
        #expect(seen.map(\.rule) == [.trusted])
        // gRPC's validated chain is Pincheck's verified path (leaf to A's root), not what was sent.
        let pathLength = try #require(seen.first?.verdict?.verifiedPath?.certificates.count)
        #expect(pathLength == 2)
        #expect(answer == "URI:\(SPIFFEDomainsPKI.identityA)|\(pathLength)")
    }

    @Test("B's CA issuing A's identity: the handshake fails, no handler runs, the decision says identity.trust-domain-mismatch")
    func crossDomain() async throws {
        let decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        let handled = NIOLockedValueBox(0)
        let result = try await Self.call(try Self.verifier(), as: Self.pki.bClaimingA, decisions: decisions, handled: handled)
        #expect(throws: (any Error).self) { try result.get() }
        #expect(handled.withLockedValue { $0 } == 0)
        let seen = decisions.withLockedValue { $0 }
        #expect(!seen.isEmpty && seen.allSatisfy { $0.rule != .trusted })
        #expect(seen.first?.verdict?.failures.map(\.code).contains(.trustDomainMismatch) == true)
        #expect(seen.allSatisfy { !$0.allowsConnection && $0.verdict.map { Disposition(serverTrust: $0) } == .cancelAuthenticationChallenge })
    }

    @Test("a client pinned by Pincheck presents the identity of its settings' TLS base: the mTLS server lets it in")
    func pinnedClientWithIdentity() async throws {
        let decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        let answer = try await Self.call(
            try Self.verifier(), as: Self.pki.clientA, decisions: decisions, deadline: .seconds(60),
            pinnedBy: try PinnedGRPCTests.verifier(pin: "rsa-intermediate")).get()
        #expect(decisions.withLockedValue { $0.map(\.rule) } == [.trusted])
        #expect(answer.hasPrefix("URI:\(SPIFFEDomainsPKI.identityA)|"))
    }

    @Test("the same client with a wrong pin: the server never sees it, and the RPC's error is Pincheck's refusal")
    func pinnedClientWithIdentityWrongPin() async throws {
        let decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        let handled = NIOLockedValueBox(0)
        let result = try await Self.call(
            try Self.verifier(), as: Self.pki.clientA, decisions: decisions, handled: handled,
            pinnedBy: try PinnedGRPCTests.verifier(pin: "attacker-root"))
        guard case .failure(let error) = result else {
            Issue.record("the RPC answered through a server whose key is not pinned")
            return
        }
        let refusal = try #require(PinnedGRPCTests.pincheckError(in: error), "no PincheckTrustError in \(error)")
        #expect(refusal.codes == [.pinMismatch])
        #expect(handled.withLockedValue { $0 } == 0)
    }

    @Test("a TLS base that offers a pre-shared key is refused: a PSK handshake presents no certificate to pin")
    func pskBaseRefused() throws {
        var base = TLSConfiguration.makeClientConfiguration()
        base.pskClientProvider = { _ in PSKClientIdentityResponse(key: NIOSSLSecureBytes([1, 2, 3]), identity: "lab") }
        let error = #expect(throws: PincheckError.self) {
            _ = try PincheckGRPCClientSettings(verifier: try PinnedGRPCTests.verifier(pin: "rsa-intermediate"), host: "www.example.test", base: base)
        }
        #expect(error?.code == .invalidPolicy)
        #expect(error?.message.contains("pskClientProvider") == true)
    }

    @Test("a client that presents no certificate: refused in the handshake, no handler runs")
    func noCertificate() async throws {
        let decisions = NIOLockedValueBox<[ChallengeDecision]>([])
        let handled = NIOLockedValueBox(0)
        let result = try await Self.call(try Self.verifier(), as: nil, decisions: decisions, handled: handled)
        #expect(throws: (any Error).self) { try result.get() }
        #expect(handled.withLockedValue { $0 } == 0)
        #expect(decisions.withLockedValue { $0.allSatisfy { $0.rule != .trusted } })
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
