import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// CRLs fetched from the certificates' distribution points (Certificates/crl-fetch, made with
/// `openssl ca` by scripts/make-crl-fetch-fixtures.sh), served by a local HTTP server that the
/// fetcher reaches as its proxy.
@Suite("CRLs from distribution points")
struct DistributionPointCRLTests {
    static func bytes(_ name: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: TestPKI.path("crl-fetch/\(name)")) ?? Data())
    }

    static func chain(_ name: String) throws -> [Certificate] {
        try Certificate.load(contentsOf: TestPKI.path("crl-fetch/\(name)-chain.pem"))
    }

    static let intermediateCRL = bytes("intermediate.crl")

    /// Every distribution point of the fixtures, as a CA would serve it (with the failures).
    static func server(slowSeconds: Double = 3) throws -> TestCRLServer {
        try TestCRLServer([
            "/intermediate.crl": .bytes(intermediateCRL),
            "/shard-1.crl": .bytes(bytes("shard-1.crl")),
            // Shard 1 served where shard 2 should be: it does not cover shard 2's certificates.
            "/shard-2.crl": .bytes(bytes("shard-1.crl")),
            "/stale.crl": .bytes(bytes("stale.crl")),
            "/slow.crl": .slow(intermediateCRL, seconds: slowSeconds),
            "/oversize.crl": .bytes([UInt8](repeating: 0x30, count: 5_000)),
            "/unreachable.crl": .hangUp,
            "/wrong-signer.crl": .bytes(bytes("wrong-signer.crl")),
            "/other-issuer.crl": .bytes(bytes("other-issuer.crl")),
            "/garbage.crl": .bytes(Array("not a CRL at all".utf8)),
        ])
    }

    static func policy(_ failure: DistributionPointCRLs.Failure = .soft) throws -> TrustPolicy {
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")]))
        policy.validation.revocation.distributionPointCRLs = DistributionPointCRLs(scope: .leaf, failure: failure)
        return policy
    }

    static func fetcher(_ server: TestCRLServer, maximumBytes: Int = 1 << 20, timeout: Duration = .seconds(1),
                        directory: String? = nil) -> RevocationListFetcher {
        RevocationListFetcher(limits: .init(maximumBytes: maximumBytes, timeout: timeout), cacheDirectory: directory,
                              proxy: .url(server.proxyURL))
    }

    static func evaluate(_ name: String, _ failure: DistributionPointCRLs.Failure = .soft, fetcher: RevocationListFetcher,
                         at time: Date = TestPKI.time) async throws -> Verdict {
        try await Evaluator(policy: policy(failure)).evaluate(chain(name), host: "www.example.test", at: time,
                                                              fetchingRevocationListsWith: fetcher)
    }

    /// One row: the leaf, what its distribution point says, and what a hard policy then decides.
    struct Row: Sendable, CustomTestStringConvertible {
        let leaf: String
        let outcome: RevocationStatus.Outcome
        let code: Reason.Code?
        let detail: String
        var testDescription: String { "\(leaf) → \(outcome.rawValue)" }
    }

    static let rows: [Row] = [
        Row(leaf: "revoked", outcome: .revoked, code: .revoked, detail: "listed as revoked on 2030-01-01T00:00:00Z (reason code 1)"),
        Row(leaf: "good", outcome: .good, code: nil, detail: "not listed"),
        Row(leaf: "shard-1", outcome: .good, code: nil, detail: "not listed"),
        Row(leaf: "shard-2", outcome: .notCovered, code: .crlNotCovered, detail: "a shard for http://crl.pincheck.test/shard-1.crl"),
        Row(leaf: "stale", outcome: .stale, code: .crlStale, detail: "nextUpdate was 2030-03-01T00:00:00Z"),
        Row(leaf: "oversize", outcome: .unavailable, code: .crlUnavailable, detail: "larger than the 4096 bytes allowed"),
        Row(leaf: "unreachable", outcome: .unavailable, code: .crlUnavailable, detail: "could not be fetched"),
        Row(leaf: "slow", outcome: .unavailable, code: .crlUnavailable, detail: "took longer than"),
        Row(leaf: "wrong-signer", outcome: .unavailable, code: .crlUnavailable, detail: "signature does not verify"),
        Row(leaf: "other-issuer", outcome: .notCovered, code: .crlNotCovered, detail: "issued by another CA"),
        Row(leaf: "garbage", outcome: .unavailable, code: .crlUnavailable, detail: "not a DER CRL"),
    ]

    @Test("each distribution point's answer is named, with the URL; hard failure refuses all but good", arguments: rows)
    func hard(_ row: Row) async throws {
        let server = try Self.server()
        defer { server.stop() }
        let verdict = try await Self.evaluate(row.leaf, .hard, fetcher: Self.fetcher(server, maximumBytes: 4096))
        let url = "http://crl.pincheck.test/\(row.leaf == "good" || row.leaf == "revoked" ? "intermediate" : row.leaf).crl"
        let status = try #require(verdict.revocationStatuses.first)
        #expect(verdict.revocationStatuses.count == 1)
        #expect(status.outcome == row.outcome)
        #expect(status.url == url)
        #expect(status.detail.contains(row.detail), "\(status.detail)")
        if let code = row.code {
            #expect(!verdict.isTrusted)
            let reason = try #require(verdict.failures.first { $0.code == code }, "\(verdict.failures)")
            #expect(reason.evidence.revocationList?.url == url)
        } else {
            #expect(verdict.isTrusted, "\(verdict.failures)")
            #expect(status.nextUpdate == Timestamp.parseDay("2031-01-01"))
        }
        // The slow server answers with a good CRL after 3 s: "took longer than" the 1 s allowed
        // shows the fetch ended at its bound instead of waiting for the answer.
    }

    @Test("soft failure: only a revoked certificate is refused; the rest are warnings", arguments: rows)
    func soft(_ row: Row) async throws {
        let server = try Self.server()
        defer { server.stop() }
        let verdict = try await Self.evaluate(row.leaf, .soft, fetcher: Self.fetcher(server, maximumBytes: 4096))
        #expect(verdict.isTrusted == (row.outcome != .revoked), "\(verdict.failures)")
        if let code = row.code, code != .revoked {
            #expect(verdict.warnings.contains { $0.code == code && $0.message.contains("soft failure") })
        }
    }

    @Test("two distribution points: a good answer from one is enough when the other fails")
    func twoPoints() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let verdict = try await Self.evaluate("two-points", .hard, fetcher: Self.fetcher(server))
        #expect(verdict.isTrusted, "\(verdict.failures)")
        #expect(verdict.revocationStatuses.map(\.outcome) == [.unavailable, .good])
    }

    @Test("concurrent evaluations wait for one fetch; a fresh CRL is not fetched again; past nextUpdate it is")
    func singleFlight() async throws {
        let server = try TestCRLServer(["/intermediate.crl": .slow(Self.intermediateCRL, seconds: 0.5)])
        defer { server.stop() }
        let fetcher = Self.fetcher(server, timeout: .seconds(5))
        let verdicts = try await withThrowingTaskGroup(of: Verdict.self) { group in
            for _ in 0..<16 { group.addTask { try await Self.evaluate("good", .hard, fetcher: fetcher) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(verdicts.count == 16 && verdicts.allSatisfy(\.isTrusted))
        #expect(server.requests(for: "/intermediate.crl") == 1)
        #expect(fetcher.fetchCount == 1)
        let again = try await Self.evaluate("revoked", .hard, fetcher: fetcher)
        #expect(again.failures.map(\.code) == [.revoked])
        #expect(server.requests(for: "/intermediate.crl") == 1, "fresh until its nextUpdate: no second fetch")
        // After the CRL's nextUpdate (2031-01-01) it is fetched again; what comes back is as old.
        let later = try await Self.evaluate("good", .hard, fetcher: fetcher, at: Timestamp.parseDay("2031-02-01")!)
        #expect(server.requests(for: "/intermediate.crl") == 2)
        #expect(later.failures.map(\.code) == [.crlStale])
    }

    @Test("one pass: the path is verified once, its CRL fetched and judged, on the asynchronous and the waiting road")
    func onePass() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let evaluator = Evaluator(policy: try Self.policy(.hard))
        let counter = VerificationCounter()
        let revoked = try await ChainVerifier.$counter.withValue(counter) {
            try await evaluator.evaluate(Self.chain("revoked"), host: "www.example.test", at: TestPKI.time,
                                         fetchingRevocationListsWith: Self.fetcher(server))
        }
        #expect(revoked.failures.map(\.code) == [.revoked])
        #expect(counter.value == 1, "the path is verified once, not once to find it and again to judge it")
        #expect(server.requests(for: "/intermediate.crl") == 1)
        let waiting = VerificationCounter()
        let good = try ChainVerifier.$counter.withValue(waiting) {
            try evaluator.evaluate(Self.chain("good"), host: "www.example.test", at: TestPKI.time,
                                   waitingForRevocationListsFrom: Self.fetcher(server))
        }
        #expect(good.isTrusted, "\(good.failures)")
        #expect(good.revocationStatuses.map(\.outcome) == [.good])
        #expect(waiting.value == 1)
        // The lists at hand and fresh: judged at once, still one verification.
        let fetcher = Self.fetcher(server)
        _ = try await evaluator.evaluate(Self.chain("good"), host: "www.example.test", at: TestPKI.time, fetchingRevocationListsWith: fetcher)
        let fresh = VerificationCounter()
        let again = try await ChainVerifier.$counter.withValue(fresh) {
            try await evaluator.evaluate(Self.chain("good"), host: "www.example.test", at: TestPKI.time, fetchingRevocationListsWith: fetcher)
        }
        #expect(again.isTrusted && fresh.value == 1)
    }

    @Test("a chain refused for another reason fetches nothing")
    func refusedFirst() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let fetcher = Self.fetcher(server)
        let verdict = try await Evaluator(policy: Self.policy(.hard)).evaluate(
            Self.chain("revoked"), host: "other.example.test", at: TestPKI.time, fetchingRevocationListsWith: fetcher)
        #expect(verdict.failures.contains { $0.code == .hostMismatch })
        #expect(fetcher.fetchCount == 0)
        #expect(server.requests(for: "/intermediate.crl") == 0)
    }

    @Test("a cache directory serves the next fetcher without a fetch")
    func directory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-crl-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try Self.server()
        defer { server.stop() }
        // A generous timeout: this test is about the directory, and a loaded machine that stalls the
        // local server past the usual second would answer the waiters before the fetch is made.
        let first = try await Self.evaluate("good", .hard, fetcher: Self.fetcher(server, timeout: .seconds(30), directory: directory))
        #expect(first.isTrusted, "\(first.failures)")
        #expect(server.requests(for: "/intermediate.crl") == 1)
        let empty = try TestCRLServer([:])
        defer { empty.stop() }
        let verdict = try await Self.evaluate("revoked", .hard, fetcher: Self.fetcher(empty, directory: directory))
        #expect(verdict.failures.map(\.code) == [.revoked])
        #expect(empty.requests(for: "/intermediate.crl") == 0)
    }

    @Test("a road that does not fetch says so: hard failure refuses, and the library's default fetches nothing")
    func synchronousRoad() throws {
        let hard = try Evaluator(policy: Self.policy(.hard)).evaluate(Self.chain("good"), host: "www.example.test", at: TestPKI.time)
        #expect(hard.failures.map(\.code) == [.crlUnavailable])
        #expect(hard.failures[0].message.contains("not fetched"))
        var plain = TrustPolicy(anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")]))
        plain.validation.revocation = RevocationPolicy()
        let unchecked = try Evaluator(policy: plain).evaluate(Self.chain("revoked"), host: "www.example.test", at: TestPKI.time)
        #expect(unchecked.isTrusted && unchecked.revocationStatuses.isEmpty, "no distribution point is consulted unless asked")
    }

    @Test("with a verdict cache, a verdict that relied on a CRL is not reused past its nextUpdate")
    func verdictCache() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let fetcher = Self.fetcher(server)
        let evaluator = Evaluator(policy: try Self.policy(.hard), verdictCache: VerdictCache(capacity: 16))
        let first = try await evaluator.evaluate(Self.chain("good"), host: "www.example.test", at: TestPKI.time, fetchingRevocationListsWith: fetcher)
        let second = try await evaluator.evaluate(Self.chain("good"), host: "www.example.test", at: TestPKI.time, fetchingRevocationListsWith: fetcher)
        #expect(first.isTrusted && second.isTrusted)
        #expect(second.revocationStatuses.map(\.outcome) == [.good])
        let later = try await evaluator.evaluate(Self.chain("good"), host: "www.example.test", at: Timestamp.parseDay("2031-02-01")!,
                                                 fetchingRevocationListsWith: fetcher)
        #expect(later.failures.map(\.code) == [.crlStale])
    }
}
