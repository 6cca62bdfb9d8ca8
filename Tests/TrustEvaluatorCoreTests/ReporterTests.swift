import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("failure reporters")
struct ReporterTests {
    static func report(port: Int = 443) throws -> PinFailureReport {
        let set = PinSet(.publicKeys(try PinnedPublicKeys(certificates: [Fixtures.certificate("attacker-root")])), enforcement: .reportOnly)
        let policy = try TrustManagerTests.policy("www.example.test", [set], reports: [URL(string: "https://reports.example.test/")!])
        let manager = TrustManagerTests.manager([policy])
        let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", port: port, at: Fixtures.time)
        return try #require(decision.reports.first)
    }

    actor Counter: Reporter {
        var sent: [PinFailureReport] = []
        func send(_ report: PinFailureReport) { sent.append(report) }
    }

    final class Clock: @unchecked Sendable {
        // @unchecked: only mutated by the test between awaits.
        var now = Fixtures.time
    }

    @Test("the file reporter appends one JSON object per line, mode 0600")
    func file() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reporter = FileReporter(path: path)
        try await reporter.send(try Self.report())
        try await reporter.send(try Self.report(port: 8443))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(second["port"] as? Int == 8443)
        #expect(second["hostname"] as? String == "www.example.test")
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }

    @Test("duplicates within the window are dropped; after it, or when different, they pass")
    func deduplication() async throws {
        let counter = Counter()
        let clock = Clock()
        let reporter = DeduplicatingReporter(counter, window: 60, now: { clock.now })
        try await reporter.send(try Self.report())
        try await reporter.send(try Self.report())
        #expect(await counter.sent.count == 1)
        try await reporter.send(try Self.report(port: 8443))
        #expect(await counter.sent.count == 2, "a different report is not a duplicate")
        clock.now = clock.now.addingTimeInterval(61)
        try await reporter.send(try Self.report())
        #expect(await counter.sent.count == 3, "after the window the same report goes out again")
    }

    @Test("an unwritable report file is an error naming it")
    func unwritable() async throws {
        let reporter = FileReporter(path: "/nonexistent-dir/reports.jsonl")
        await #expect(throws: PincheckError.self) { try await reporter.send(try Self.report()) }
    }
}
