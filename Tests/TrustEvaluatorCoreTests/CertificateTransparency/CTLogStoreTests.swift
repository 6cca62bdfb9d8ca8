import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Log lists replaced while the process runs: `CertificateTransparency.LogStore`, read once per
/// evaluation, with verdicts of older lists never reused and rollbacks refused.
@Suite("Certificate Transparency log-list updates")
struct CTLogStoreTests {
    typealias CT = CertificateTransparency
    /// The test PKI's chain with three embedded SCTs of the test logs (compliant under Chrome's policy).
    static let logged = CTScenario.logged

    /// A Google list of the test logs, each in `state` since a year before the SCTs, dated `day` days before the test time.
    static func list(_ state: String, day: Int) throws -> CT.Logs {
        CT.Logs([try TestCT.logList(CTTestLogTests.logs, state: state, since: CTScenario.since,
                                    timestamp: TestPKI.time.addingTimeInterval(Double(-86_400 * day)))])
    }

    static func evaluator(_ store: CT.LogStore, cache: VerdictCache? = nil) throws -> Evaluator {
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")]))
        var requirement = CT.Requirement(policy: .chrome, logStore: store)
        requirement.scope = .everyAnchor
        policy.validation.certificateTransparency = requirement
        return Evaluator(policy: policy, verdictCache: cache)
    }

    @Test("an update reaches the next evaluation, and a verdict cached under the old lists is not reused")
    func updateReachesNextEvaluation() throws {
        let store = CT.LogStore(try Self.list("usable", day: 2))
        let cache = VerdictCache()
        let evaluator = try Self.evaluator(store, cache: cache)
        let before = try evaluator.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time)
        #expect(before.isTrusted, "\(before.failures)")
        #expect(before.certificateTransparency?.compliance == .compliant)
        _ = try evaluator.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time)
        #expect(cache.count == 1, "the second evaluation was a hit on the first one's verdict")

        // The publisher rejects all three logs: the same chain, the same evaluator, the same cache.
        let generation = store.generation
        try store.update(try Self.list("rejected", day: 1))
        #expect(store.generation != generation)
        let after = try evaluator.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time)
        #expect(after.failureCodes == [.ctNotCompliant])
        #expect(after.certificateTransparency?.timestamps.allSatisfy { $0.status == .verified && !$0.counted } == true)
        #expect(cache.count == 2)
    }

    @Test("a publisher's older list, or an undated one in place of a dated one, is refused and leaves the lists in force")
    func rollbackRefused() throws {
        let store = CT.LogStore(try Self.list("usable", day: 2))
        let generation = store.generation
        #expect(throws: PincheckError.self) { try store.update(try Self.list("usable", day: 3)) }
        var json = try JSONSerialization.jsonObject(with: TestCT.logListJSON(CTTestLogTests.logs, since: CTScenario.since, timestamp: TestPKI.time)) as! [String: Any]
        json["log_list_timestamp"] = nil
        let undated = try CT.LogList(json: Array(try JSONSerialization.data(withJSONObject: json)), source: "undated.json", publisher: .google)
        #expect(undated.timestamp == nil)
        do {
            try store.update(CT.Logs([undated]))
            Issue.record("an undated list replaced a dated one")
        } catch {
            #expect(error.code == .invalidPolicy)
            #expect(error.description.contains("undated.json"))
        }
        #expect(store.generation == generation)
        #expect(store.logs.newestTimestamp == TestPKI.time.addingTimeInterval(-86_400 * 2))
        // The same list again, and a newer one, are accepted.
        try store.update(try Self.list("usable", day: 2))
        try store.update(try Self.list("usable", day: 1))
        #expect(store.logs.newestTimestamp == TestPKI.time.addingTimeInterval(-86_400))
    }

    @Test("updates under concurrent evaluations: every verdict is whole (all three SCTs counted, or none), and the last update decides the next one")
    func concurrentUpdates() async throws {
        let updates = try (0..<12).map { try Self.list($0.isMultiple(of: 2) ? "usable" : "rejected", day: 40 - $0) }
        let store = CT.LogStore(try Self.list("usable", day: 41))
        let evaluator = try Self.evaluator(store, cache: VerdictCache())
        let verdicts = try await withThrowingTaskGroup(of: [Verdict].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try (0..<30).map { _ in try evaluator.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time) }
                }
            }
            group.addTask {
                for update in updates { try store.update(update); await Task.yield() }
                return []
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(verdicts.count == 120)
        for verdict in verdicts {
            let counted = verdict.certificateTransparency?.timestamps.filter(\.counted).count
            if verdict.isTrusted {
                #expect(counted == 3)
            } else {
                #expect(verdict.failureCodes == [.ctNotCompliant])
                #expect(counted == 0)
            }
        }
        // The last update rejected the logs.
        #expect(try evaluator.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time).failureCodes == [.ctNotCompliant])
    }

    @Test("a configuration loaded with a store: every host's requirement reads it, so one update reaches them all")
    func configurationReadsStore() throws {
        let store = CT.LogStore(try Self.list("usable", day: 2))
        let json = """
            { "version": 1, "anchors": ["rsa-root.pem"],
              "certificateTransparency": { "policy": "chrome", "scope": "every-anchor" },
              "hosts": [ { "pattern": "www.example.test", "mode": "none" },
                         { "pattern": "*.example.test", "mode": "none" } ] }
            """
        let manager = try Configuration.decode(Data(json.utf8), baseDirectory: Fixtures.root.path, publicSuffixes: Fixtures.psl,
                                               certificateTransparencyLogStore: store).trustManager
        #expect(try manager.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time).allowsConnection)
        try store.update(try Self.list("rejected", day: 1))
        #expect(try manager.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time).failureCodes == [.ctNotCompliant])
        // Without a store or lists the same file is refused at load, naming the key.
        do {
            _ = try Configuration.decode(Data(json.utf8), baseDirectory: Fixtures.root.path, publicSuffixes: Fixtures.psl)
            Issue.record("a CT policy without logs loaded")
        } catch {
            #expect(error.description.contains("certificateTransparency"))
        }
    }

    @Test("a signed pin-set update whose configuration asks for CT reads the manager's store")
    func pinSetUpdateReadsStore() throws {
        let signer = try PinSetSigner()
        let store = CT.LogStore(try Self.list("usable", day: 2))
        let compiledIn = try Configuration.decode(Data(#"{ "version": 1, "anchors": ["rsa-root.pem"], "hosts": [] }"#.utf8),
                                                  baseDirectory: Fixtures.root.path, publicSuffixes: Fixtures.psl).trustManager
        let document = Array(#"""
            { "serial": 1, "expires": "2031-01-01T00:00:00Z", "configuration": { "version": 1, "anchors": ["rsa-root.pem"],
              "hosts": [ { "pattern": "www.example.test", "mode": "none",
                           "certificateTransparency": { "policy": "chrome", "scope": "every-anchor" } } ] } }
            """#.utf8)
        let withStore = UpdatableTrustManager(compiledIn: compiledIn, keys: [signer.key], baseDirectory: Fixtures.root.path,
                                              certificateTransparencyLogStore: store, at: TestPKI.time)
        try withStore.apply(document: document, signature: signer.sign(document), at: TestPKI.time)
        #expect(try withStore.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time).allowsConnection)
        try store.update(try Self.list("rejected", day: 1))
        #expect(try withStore.evaluate(Self.logged, host: "www.example.test", at: TestPKI.time).failureCodes == [.ctNotCompliant])
        // Without a store, the update names no lists of its own and is refused.
        let without = UpdatableTrustManager(compiledIn: compiledIn, keys: [signer.key], baseDirectory: Fixtures.root.path, at: TestPKI.time)
        #expect(throws: PinSetUpdateError.self) { try without.apply(document: document, signature: signer.sign(document), at: TestPKI.time) }
    }
}
