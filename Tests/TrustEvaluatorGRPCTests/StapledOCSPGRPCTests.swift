import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import PincheckTLS
import PincheckTestSupport
import ServerTrust
import Synchronization
import Testing
import TrustEvaluator
import TrustEvaluatorGRPC
import TrustEvaluatorNIO

/// gRPC over Pincheck's NIO verifier gets the server's stapled OCSP response as the NIO route
/// does (a second connection, `StapleRetrieval`): a revoked staple refuses the RPC.
@Suite("gRPC: a revoked stapled OCSP response refuses the RPC", .serialized)
struct StapledOCSPGRPCTests {
    /// One unary RPC to 127.0.0.1:`port` for www.example.test through `verifier`: it must fail, every
    /// decision and the RPC's error naming `revocation.revoked`.
    static func expectRefusedAsRevoked(verifier: PincheckNIOVerifier, port: UInt16) async throws {
        let decisions = Mutex<[ChallengeDecision]>([])
        let settings = try PincheckGRPCClientSettings(verifier: verifier, host: "www.example.test", port: Int(port)) { decision in
            decisions.withLock { $0.append(decision) }
        }
        // The RPC fails as soon as the connection does (it does not wait for ready). Under the whole
        // suite on two cores, an RPC has sat queued past its deadline while the refused connections
        // were retried (every decision revoked, the RPC's error only "deadline exceeded"): a fresh
        // client gets up to three tries, and one of them must fail with the refusal itself.
        var options = CallOptions.defaults
        options.timeout = .seconds(20)
        options.waitForReady = false
        var error: RPCError?
        for _ in 1...3 {
            let transport = try settings.makeTransport(connectingTo: .ipv4(address: "127.0.0.1", port: Int(port)))
            do {
                _ = try await withGRPCClient(transport: transport) { client in
                    try await client.unary(request: ClientRequest(message: Array("ping".utf8)), descriptor: EchoService.method,
                                           serializer: RawBytes(), deserializer: RawBytes(), options: options) { try $0.message }
                }
                Issue.record("the RPC succeeded through a refused connection")
                return
            } catch let failure as RPCError {
                error = failure
                if failure.code != .deadlineExceeded { break }
            }
        }
        let seen = decisions.withLock { $0 }
        #expect(!seen.isEmpty)
        for decision in seen {
            #expect(decision.verdict?.failures.map(\.code) == [.revoked], "\(String(describing: decision.verdict?.failures))")
        }
        let failure = try #require(error)
        #expect(PinnedGRPCTests.pincheckError(in: failure)?.codes == [.revoked], "\(failure)")
    }

    @Test("required by the policy (default retrieval), or fetched always", arguments: [
        (true, StapleRetrieval.Scope.whenRequired), (false, .always),
    ])
    func revoked(requireStapledOCSP: Bool, scope: StapleRetrieval.Scope) async throws {
        // The leaf rsa-root issued directly; the server staples its revoked response and then
        // closes every connection after the handshake (it speaks no HTTP/2): only the decision counts.
        let server = try LocalTLSServer(
            chain: [TestPKI.certificate("revocation/rsa-direct-leaf")],
            privateKeyPEM: try String(contentsOfFile: TestPKI.path("keys/revocation/rsa-direct-leaf.key"), encoding: .utf8),
            stapledOCSPResponse: Array(try Data(contentsOf: URL(fileURLWithPath: TestPKI.path("revocation/ocsp-direct-revoked.der")))))
        defer { server.stop() }
        let anchors = try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")])
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [],
                                validation: ValidationPolicy(anchors: anchors), revocation: RevocationPolicy(requireStapledOCSP: requireStapledOCSP))
        let manager = TrustManager(policies: [policy], allHostsMustBeEvaluated: true, defaultValidation: ValidationPolicy(anchors: anchors))
        // Evaluated on the event loop (see StapledOCSPRouteTests: a busy cooperative pool can
        // outwait the local server).
        let verifier = PincheckNIOVerifier(adapter: ChallengeAdapter(trustManager: manager, now: { TestPKI.time }), offloadEvaluation: false,
                                           staples: StapleRetrieval(scope, timeout: .seconds(30), cache: StapleCache()))
        try await Self.expectRefusedAsRevoked(verifier: verifier, port: server.port)
    }
}

/// gRPC over Pincheck's NIO verifier with an adapter that fetches the CRLs at the leaf's
/// distribution point: a leaf the CRL lists refuses the RPC.
@Suite("gRPC: a leaf revoked by the CRL at its distribution point refuses the RPC", .serialized)
struct DistributionPointGRPCTests {
    @Test("revocation.revoked, from a CRL fetched through the adapter")
    func revoked() async throws {
        let crl = Array(try Data(contentsOf: URL(fileURLWithPath: TestPKI.path("crl-fetch/intermediate.crl"))))
        let crls = try TestCRLServer(["/intermediate.crl": .bytes(crl)])
        defer { crls.stop() }
        let server = try LocalTLSServer(
            chain: try Certificate.load(contentsOf: TestPKI.path("crl-fetch/revoked-chain.pem")),
            privateKeyPEM: try String(contentsOfFile: TestPKI.path("keys/crl-fetch/revoked.key"), encoding: .utf8))
        defer { server.stop() }
        let anchors = try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")])
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [],
                                validation: ValidationPolicy(anchors: anchors),
                                revocation: RevocationPolicy(distributionPointCRLs: DistributionPointCRLs(failure: .hard)))
        let manager = TrustManager(policies: [policy], allHostsMustBeEvaluated: true, defaultValidation: ValidationPolicy(anchors: anchors))
        var adapter = ChallengeAdapter(trustManager: manager, now: { TestPKI.time })
        adapter.revocationLists = RevocationListFetcher(proxy: .url(crls.proxyURL))
        let verifier = PincheckNIOVerifier(adapter: adapter, offloadEvaluation: false)
        try await StapledOCSPGRPCTests.expectRefusedAsRevoked(verifier: verifier, port: server.port)
        #expect(crls.requests(for: "/intermediate.crl") == 1)
    }
}
