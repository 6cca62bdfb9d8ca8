import Foundation
import Testing
@testable import PincheckCLI
import PincheckTestSupport
import TrustEvaluator

/// RFC 7469 §2.5's backup-pin rule is one rule (``BackupPinFinding``, judged by the plan's
/// `BackupPinCheck`): the engine's verdict, `check`, `audit` and `lint` give the same finding for
/// the same configuration and chain.
@Suite("backup pins: one rule on every road", .serialized)
struct BackupPinRuleTests {
    typealias F = CLIFixtures

    static func pin(_ name: String) throws -> String { try CheckCommandTests.pin(name) }

    /// Two configurations of www.example.test, with what each must be told.
    static func cases() throws -> [(config: String, expected: String)] {
        // The first set has a backup (attacker-root is on no chain); the second, Apple's caPins, a single pin.
        let secondSetSingle = """
            { "version": 1, "anchors": ["CERTS/rsa-root.pem"], "hosts": [ { "pattern": "www.example.test",
              "pins": ["\(try pin("rsa-leaf"))", "\(try pin("attacker-root"))"], "caPins": ["\(try pin("rsa-intermediate"))"] } ] }
            """
        // Two pins, both on the served chain: a rotation of either key locks clients out.
        let allOnChain = """
            { "version": 1, "anchors": ["CERTS/rsa-root.pem"], "hosts": [ { "pattern": "www.example.test",
              "pins": ["\(try pin("rsa-leaf"))", "\(try pin("rsa-intermediate"))"] } ] }
            """
        return [
            (secondSetSingle, "the pin set for www.example.test (set 2 of 2) has no backup pin: only one pin"),
            (allOnChain, "the pin set for www.example.test has no backup pin: every pin matches the current chain"),
        ]
    }

    static func messages(_ objects: [[String: Any]], _ key: String, code: String) -> [String] {
        objects.compactMap { $0["code"] as? String == code ? $0[key] as? String : nil }
    }

    @Test("the engine, check, audit and lint say the same of a second set with one pin, and of pins all on the chain")
    func sameFindingEverywhere() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let chainFile = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-backup-\(UUID().uuidString).pem").path
        let chain = try Certificate.load(contentsOf: F.path("rsa-leaf.pem")) + Certificate.load(contentsOf: F.path("rsa-intermediate.pem"))
        try (String(contentsOfFile: F.path("rsa-leaf.pem"), encoding: .utf8) + String(contentsOfFile: F.path("rsa-intermediate.pem"), encoding: .utf8))
            .write(toFile: chainFile, atomically: true, encoding: .utf8)
        let hosts = try AuditCommandTests.hosts(["www.example.test \(server.target)"])
        defer { try? FileManager.default.removeItem(atPath: chainFile); try? FileManager.default.removeItem(atPath: hosts) }
        let time = try #require(ISO8601DateFormatter().date(from: "2030-06-01T00:00:00Z"))

        for (json, expected) in try Self.cases() {
            let config = try ConfigAndLintCommandTests.write(json)
            defer { try? FileManager.default.removeItem(atPath: config) }

            // The engine's verdict.
            let manager = try Configuration.load(contentsOf: config).trustManager
            let verdict = try manager.evaluate(chain, host: "www.example.test", at: time)
            #expect(verdict.isTrusted, "a missing backup pin is a warning, never a refusal")
            let engine = verdict.warnings.filter { $0.code == .noBackupPin }.map(\.message)
            #expect(engine.count == 1 && engine[0].hasPrefix(expected), "engine: \(engine)")

            // check --json: the verdict's warnings, nothing of its own.
            let check = F.run(["check", server.target, "--host", "www.example.test", "--config", config, "--json"] + F.at)
            #expect(check.status == 0, "\(check.output)\(check.errors)")
            let warnings = try F.json(check.output)["warnings"] as? [[String: Any]] ?? []
            #expect(Self.messages(warnings, "message", code: "pin.no-backup") == engine, "check: \(check.output)")

            // audit --json.
            let audit = F.run(["audit", config, "--hosts", hosts, "--json"] + F.at)
            #expect(audit.status == 0, "\(audit.output)\(audit.errors)")
            #expect(try F.json(audit.output)["noBackupPin"] as? String == engine.first, "audit: \(audit.output)")

            // lint --json, with the chain the host serves.
            let lint = F.run(["lint", config, "--chain", chainFile, "--host", "www.example.test", "--json"] + F.at)
            #expect(lint.status == 1, "a missing backup pin is a lint error: \(lint.output)\(lint.errors)")
            let findings = try F.json(lint.output)["findings"] as? [[String: Any]] ?? []
            let linted = Self.messages(findings, "message", code: "no-backup-pin")
            #expect(linted.count == 1 && linted[0].hasPrefix(expected), "lint: \(linted)")
        }
    }

    @Test("lint without a chain finds a single pin in any set, not only the first")
    func lintEverySet() throws {
        let config = try ConfigAndLintCommandTests.write(try Self.cases()[0].config)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let lint = F.run(["lint", config, "--json"] + F.at)
        #expect(lint.status == 1, "\(lint.output)\(lint.errors)")
        let findings = try F.json(lint.output)["findings"] as? [[String: Any]] ?? []
        #expect(Self.messages(findings, "message", code: "no-backup-pin").map { $0.hasPrefix(try! Self.cases()[0].expected) } == [true])
    }

    @Test("a report-only set never lacks a backup pin; two pins, one off the chain, have one")
    func noFinding() throws {
        let leaf = try Certificate.load(contentsOf: F.path("rsa-leaf.pem"))[0]
        let intermediate = try Certificate.load(contentsOf: F.path("rsa-intermediate.pem"))[0]
        let single = try PinnedPublicKeys(pins: [leaf.publicKeyPin])
        #expect(PinSet(.publicKeys(single), enforcement: .reportOnly).backupPinFinding(onChain: [leaf]) == nil)
        #expect(PinSet(.publicKeys(single)).backupPinFinding(onChain: nil) == .tooFewPins(1))
        let spare = try PinnedPublicKeys(pins: [leaf.publicKeyPin, try PublicKeyPin(try Self.pin("attacker-root"))])
        #expect(PinSet(.publicKeys(spare)).backupPinFinding(onChain: [leaf, intermediate]) == nil)
        let both = try PinnedPublicKeys(pins: [leaf.publicKeyPin, intermediate.publicKeyPin])
        #expect(PinSet(.publicKeys(both)).backupPinFinding(onChain: [leaf, intermediate]) == .everyPinOnChain)
        #expect(PinSet(.publicKeys(both)).backupPinFinding(onChain: [leaf]) == nil, "the intermediate's key is off this chain")
    }
}
