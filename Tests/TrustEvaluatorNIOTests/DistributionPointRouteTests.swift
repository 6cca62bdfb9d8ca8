import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PincheckTLS
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// CRLs from distribution points on the challenge adapter and the NIO route: the adapter fetches
/// (off the caller's thread) before it judges, when the host's policy checks them. The CRLs come
/// from a local HTTP server the fetcher reaches as its proxy (Certificates/crl-fetch).
@Suite("Adapter and NIO: CRLs from distribution points", .serialized)
struct DistributionPointRouteTests {
    static let host = "www.example.test"

    static func crlServer() throws -> TestCRLServer {
        let crl = Array(FileManager.default.contents(atPath: TestPKI.path("crl-fetch/intermediate.crl")) ?? Data())
        return try TestCRLServer(["/intermediate.crl": .bytes(crl)])
    }

    static func adapter(_ crls: TestCRLServer, failure: DistributionPointCRLs.Failure = .hard) throws -> ChallengeAdapter {
        let anchors = try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")])
        let policy = HostPolicy(pattern: try HostPattern(host, publicSuffixes: nil), pinSets: [], validation: ValidationPolicy(anchors: anchors),
                                revocation: RevocationPolicy(distributionPointCRLs: DistributionPointCRLs(failure: failure)))
        var adapter = ChallengeAdapter(trustManager: TrustManager(policies: [policy], allHostsMustBeEvaluated: true,
                                                                 defaultValidation: ValidationPolicy(anchors: anchors)),
                                       now: { TestPKI.time })
        adapter.revocationLists = RevocationListFetcher(limits: .init(timeout: .seconds(10)), proxy: .url(crls.proxyURL))
        return adapter
    }

    static func challenge(_ name: String) throws -> Challenge {
        Challenge(protectionSpace: ProtectionSpace(host: host, port: 443, authenticationMethod: .serverTrust,
            serverTrust: PeerTrust(servedChain: try Certificate.load(contentsOf: TestPKI.path("crl-fetch/\(name)-chain.pem")))))
    }

    static func server(_ name: String) throws -> LocalTLSServer {
        try LocalTLSServer(chain: try Certificate.load(contentsOf: TestPKI.path("crl-fetch/\(name)-chain.pem")),
                           privateKeyPEM: try String(contentsOfFile: TestPKI.path("keys/crl-fetch/\(name).key"), encoding: .utf8))
    }

    @Test("the adapter: the revoked leaf is cancelled with revocation.revoked; the good one gets its credential")
    func adapter() async throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let adapter = try Self.adapter(crls)
        let revoked = await adapter.handle(try Self.challenge("revoked"))
        #expect(revoked.disposition == .cancelAuthenticationChallenge)
        #expect(revoked.verdict?.failures.map(\.code) == [.revoked])
        #expect(revoked.verdict?.failures.first?.evidence.revocationList?.url == "http://crl.pincheck.test/intermediate.crl")
        let good = await adapter.handle(try Self.challenge("good"))
        #expect(good.disposition == .useCredential, "\(String(describing: good.verdict?.failures))")
        #expect(good.verdict?.revocationStatuses.map(\.outcome) == [.good])
        #expect(crls.requests(for: "/intermediate.crl") == 1)
        // decide(_:) answers at once with what the challenge carries: no CRL, so a hard policy refuses.
        #expect(adapter.decide(try Self.challenge("good")).verdict?.failures.map(\.code) == [.crlUnavailable])
    }

    @Test("a road's own fetcher stands in when the adapter has none, and is asked only when the host's policy wants CRLs")
    func defaultFetcher() async throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        var adapter = try Self.adapter(crls)
        adapter.revocationLists = nil
        let roadFetcher = RevocationListFetcher(limits: .init(timeout: .seconds(10)), proxy: .url(crls.proxyURL))
        let manager = adapter.trustManager(at: TestPKI.time)
        let chain = try Certificate.load(contentsOf: TestPKI.path("crl-fetch/revoked-chain.pem"))
        let revoked: ChallengeDecision = await withCheckedContinuation { done in
            adapter.judgeServerTrust(chain, host: Self.host, port: 443, staple: nil, manager: manager, at: TestPKI.time,
                                     defaultFetcher: roadFetcher) { done.resume(returning: $0) }
        }
        #expect(revoked.verdict?.failures.map(\.code) == [.revoked], "\(String(describing: revoked.verdict?.failures))")
        #expect(crls.totalRequests == 1)
        // A host whose policy asks for no CRLs (here an unlisted one, refused by the manager's rule)
        // is judged at once: the fetcher is not asked.
        let other: ChallengeDecision = await withCheckedContinuation { done in
            adapter.judgeServerTrust(chain, host: "other.example.test", port: 443, staple: nil, manager: manager, at: TestPKI.time,
                                     defaultFetcher: roadFetcher) { done.resume(returning: $0) }
        }
        #expect(other.verdict?.coverage == .unlistedRefused)
        #expect(crls.totalRequests == 1)
    }

    @Test("NIO's first initializer takes the fetcher: PincheckNIOVerifier(policy:revocationLists:) refuses the revoked leaf for revocation.revoked")
    func firstInitializerTakesTheFetcher() async throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        var policy = TrustPolicy(pinning: .none, anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")]))
        policy.validation.revocation.distributionPointCRLs = DistributionPointCRLs(failure: .hard)
        let verifier = PincheckNIOVerifier(
            policy: policy, revocationLists: RevocationListFetcher(limits: .init(timeout: .seconds(10)), proxy: .url(crls.proxyURL)),
            now: { TestPKI.time })
        #expect(verifier.adapter.revocationLists != nil)
        let revokedServer = try Self.server("revoked")
        defer { revokedServer.stop() }
        let (refused, refusedCompleted) = try await StapledOCSPRouteTests.handshake(port: revokedServer.port, verifier: verifier)
        #expect(!refusedCompleted)
        // Through the process's fetcher the CRL host would not be reached (crl-unavailable); the
        // fetcher given here reaches it, so the revocation itself is what refuses.
        #expect(StapledOCSPRouteTests.failures(refused) == [.revoked], "\(String(describing: refused.first?.verdict?.failures))")
        #expect(crls.requests(for: "/intermediate.crl") == 1)
    }

    @Test("NIO: a handshake with the revoked leaf fails with revocation.revoked; the good one completes")
    func nio() async throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let verifier = PincheckNIOVerifier(adapter: try Self.adapter(crls), offloadEvaluation: false)
        let revokedServer = try Self.server("revoked")
        defer { revokedServer.stop() }
        let (refused, refusedCompleted) = try await StapledOCSPRouteTests.handshake(port: revokedServer.port, verifier: verifier)
        #expect(!refusedCompleted)
        #expect(StapledOCSPRouteTests.failures(refused) == [.revoked], "\(String(describing: refused.first?.verdict?.failures))")
        let goodServer = try Self.server("good")
        defer { goodServer.stop() }
        let (accepted, completed) = try await StapledOCSPRouteTests.handshake(port: goodServer.port, verifier: verifier)
        #expect(completed, "\(String(describing: accepted.first?.verdict?.failures))")
        #expect(accepted.first?.verdict?.revocationStatuses.map(\.outcome) == [.good])
    }
}
