#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOPosix
import PincheckAsyncHTTPClient
import PincheckTestSupport
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// CRLs from distribution points on AsyncHTTPClient's road, which shows Pincheck the leaf alone:
/// the issuer comes from the leaf's caIssuers URL, and the CRL is verified with it. A local HTTP
/// server stands in for crl.pincheck.test (the fetcher reaches it as its proxy); the TLS servers
/// serve the crl-fetch leaves (named for 127.0.0.1) with the RSA intermediate.
@Suite("AsyncHTTPClient: CRLs from distribution points", .serialized)
struct AsyncHTTPClientDistributionPointTests {
    static let root = TestPKI.certificate("rsa-root")

    /// The CRL server: the intermediate's CRL (which revokes aia-revoked) and the intermediate
    /// at its caIssuers URL, unless `issuer` says otherwise.
    static func crlServer(issuer: TestCRLServer.Answer? = nil) throws -> TestCRLServer {
        let crl = Array(FileManager.default.contents(atPath: TestPKI.path("crl-fetch/intermediate.crl")) ?? Data())
        return try TestCRLServer(["/intermediate.crl": .bytes(crl),
                                  "/rsa-intermediate.cer": issuer ?? .bytes(TestPKI.certificate("rsa-intermediate").derBytes)])
    }

    /// The obvious policy: the root as the anchor, and CRLs from the distribution points.
    static func pinning(_ failure: DistributionPointCRLs.Failure, fetcher: RevocationListFetcher) throws -> PincheckHTTPClient {
        var policy = TrustPolicy(pinning: .none, anchors: try TrustAnchors(certificates: [root]))
        policy.validation.revocation.distributionPointCRLs = DistributionPointCRLs(failure: failure)
        var pinning = try PincheckHTTPClient(policy: policy, now: { TestPKI.time })
        pinning.revocationLists = fetcher
        return pinning
    }

    static func fetcher(_ crls: TestCRLServer) -> RevocationListFetcher {
        RevocationListFetcher(limits: .init(timeout: .seconds(10)), proxy: .url(crls.proxyURL))
    }

    /// One GET over a fresh client (a fresh connection, so a fresh check) to a server of `leaf`.
    static func get(_ leaf: String, _ pinning: PincheckHTTPClient) async throws -> (Result<HTTPClientResponse, any Error>, CountingHTTPSServer) {
        let server = try await CountingHTTPSServer(group: MultiThreadedEventLoopGroup.singleton, leaf: "crl-fetch/\(leaf)")
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(150)))
        try configuration.pin(with: pinning)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        let result: Result<HTTPClientResponse, any Error>
        do {
            // A long deadline (a CI run on 2 cores once took over 60 s to connect): the check awaits its fetches on Swift's cooperative pool, which the
            // suites running beside this one (the command's, waiting for child processes) can hold.
            let response = try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(server.port)/"), timeout: .seconds(180))
            _ = try await response.body.collect(upTo: 1 << 20)
            result = .success(response)
        } catch {
            result = .failure(error)
        }
        try await client.shutdown()
        try await server.stop()
        return (result, server)
    }

    @Test("a revoked leaf is refused with revocation.revoked, soft or hard, before any request byte",
          arguments: [DistributionPointCRLs.Failure.soft, .hard])
    func revoked(failure: DistributionPointCRLs.Failure) async throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let (result, server) = try await Self.get("aia-revoked", try Self.pinning(failure, fetcher: Self.fetcher(crls)))
        let error = try #require(throws: PincheckTrustError.self) { try result.get() }
        #expect(error.codes == [.revoked], "\(error)")
        #expect(error.verdict?.failures.first?.evidence.revocationList?.url == "http://crl.pincheck.test/intermediate.crl")
        #expect(server.applicationBytes == 0)
        #expect(crls.requests(for: "/rsa-intermediate.cer") == 1)
        #expect(crls.requests(for: "/intermediate.crl") == 1)
    }

    @Test("pinned(by:revocationLists:) carries the fetcher: the revoked leaf is refused for revocation.revoked, the good one connects")
    func pinnedByTakesTheFetcher() async throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        var policy = TrustPolicy(pinning: .none, anchors: try TrustAnchors(certificates: [Self.root]))
        policy.validation.revocation.distributionPointCRLs = DistributionPointCRLs(failure: .hard)
        let fetcher = Self.fetcher(crls)
        for (leaf, expected) in [("aia-revoked", [Reason.Code.revoked]), ("aia-good", [])] {
            let server = try await CountingHTTPSServer(group: MultiThreadedEventLoopGroup.singleton, leaf: "crl-fetch/\(leaf)")
            let configuration = try HTTPClient.Configuration.pinned(
                by: policy, revocationLists: fetcher, now: { TestPKI.time },
                base: HTTPClient.Configuration(timeout: .init(connect: .seconds(150))))
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            var codes: [Reason.Code] = []
            do {
                let response = try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(server.port)/"), timeout: .seconds(180))
                _ = try await response.body.collect(upTo: 1 << 20)
            } catch let error as PincheckTrustError {
                codes = error.codes
            } catch {
                Issue.record("\(leaf): \(error)")
            }
            try await client.shutdown()
            try await server.stop()
            #expect(codes == expected, "\(leaf)")
        }
        // One fetcher for both connections: the CRL fetched for the first is kept for the second.
        #expect(crls.requests(for: "/intermediate.crl") == 1)
    }

    @Test("a good leaf connects with one fetch of its issuer and of its CRL; the next connection uses both as kept",
          arguments: [DistributionPointCRLs.Failure.soft, .hard])
    func good(failure: DistributionPointCRLs.Failure) async throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let pinning = try Self.pinning(failure, fetcher: Self.fetcher(crls))
        for _ in 0..<2 {
            let (result, server) = try await Self.get("aia-good", pinning)
            #expect(try result.get().status == .ok)
            #expect(server.accepted == 1)
        }
        #expect(crls.requests(for: "/rsa-intermediate.cer") == 1)
        #expect(crls.requests(for: "/intermediate.crl") == 1)
    }

    @Test("a leaf whose issuer cannot be found: refused as revocation.crl-unavailable when the policy fails hard, connects when soft")
    func issuerNotFound() async throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let (hard, _) = try await Self.get("no-aia", try Self.pinning(.hard, fetcher: Self.fetcher(crls)))
        let error = try #require(throws: PincheckTrustError.self) { try hard.get() }
        #expect(error.codes == [.crlUnavailable])
        #expect(error.description.contains("caIssuers"), "\(error)")
        let (soft, _) = try await Self.get("no-aia", try Self.pinning(.soft, fetcher: Self.fetcher(crls)))
        #expect(try soft.get().status == .ok)
        #expect(crls.totalRequests == 0)
    }

    @Test("what a caIssuers URL serves is untrusted: another CA's certificate is not taken for the issuer, nor kept, and the failure is remembered")
    func wrongIssuerServed() async throws {
        let crls = try Self.crlServer(issuer: .bytes(TestPKI.certificate("attacker-root").derBytes))
        defer { crls.stop() }
        let pinning = try Self.pinning(.hard, fetcher: Self.fetcher(crls))
        for _ in 0..<2 {
            let (result, _) = try await Self.get("aia-revoked", pinning)
            let error = try #require(throws: PincheckTrustError.self) { try result.get() }
            #expect(error.codes == [.crlUnavailable], "\(error)")
            #expect(error.description.contains("no certificate whose key signed"), "\(error)")
        }
        // Asked once: the second connection met the remembered failure. No CRL was fetched
        // without an issuer to verify it with.
        #expect(crls.requests(for: "/rsa-intermediate.cer") == 1)
        #expect(crls.requests(for: "/intermediate.crl") == 0)
    }

    @Test("an oversized answer at the caIssuers URL is refused at the issuer's byte budget")
    func oversizedIssuer() async throws {
        let crls = try Self.crlServer(issuer: .bytes([UInt8](repeating: 0x30, count: IssuerLookup.maximumBytes + 1)))
        defer { crls.stop() }
        let (result, _) = try await Self.get("aia-good", try Self.pinning(.hard, fetcher: Self.fetcher(crls)))
        let error = try #require(throws: PincheckTrustError.self) { try result.get() }
        #expect(error.codes == [.crlUnavailable])
        #expect(error.description.contains("bytes allowed for an issuer"), "\(error)")
    }

    @Test("distribution-point CRLs are accepted when the configuration is made; CRLs given to the policy and required staples are still refused")
    func configuration() throws {
        var policy = TrustPolicy(pinning: .none, anchors: try TrustAnchors(certificates: [Self.root]))
        policy.validation.revocation.distributionPointCRLs = DistributionPointCRLs(failure: .hard)
        #expect(throws: Never.self) { try HTTPClient.Configuration.pinned(by: policy) }
        policy.validation.revocationLists = [try CertificateRevocationList(derEncoded: Array(FileManager.default.contents(atPath: TestPKI.path("crl-fetch/intermediate.crl"))!))]
        let error = try #require(throws: PincheckError.self) { try PincheckHTTPClient(policy: policy) }
        #expect(error.message.contains("(revocation)") && error.message.contains("distribution points"), "\(error.message)")
    }
}
#endif  // AsyncHTTPClient trait
