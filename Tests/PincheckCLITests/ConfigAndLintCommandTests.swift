import Foundation
import PincheckTestSupport
import Testing
@testable import PincheckCLI

@Suite("pincheck --config and lint")
struct ConfigAndLintCommandTests {
    typealias F = CLIFixtures

    static func pin(_ name: String) throws -> String {
        let text = try String(contentsOfFile: F.path("pins.txt"), encoding: .utf8)
        return String(text.split(separator: "\n").first { $0.hasPrefix(name + " ") }!.split(separator: " ")[1])
    }

    /// Writes a configuration next to the certificates (so relative paths resolve) and returns its path.
    static func write(_ json: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-\(UUID().uuidString).json").path
        try json.replacingOccurrences(of: "CERTS", with: F.path("")).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("verify --config: enforced pins decide, report-only pins allow with the failure recorded")
    func config() throws {
        let path = try Self.write("""
            { "version": 1, "anchors": ["CERTS/rsa-root.pem", "CERTS/ec-root.pem"],
              "hosts": [ { "pattern": "www.example.test", "pins": ["\(try Self.pin("rsa-intermediate"))", "\(try Self.pin("ec-intermediate"))"] },
                         { "pattern": "example.test", "enforce": false, "pins": ["\(try Self.pin("attacker-root"))"] } ] }
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let good = F.run(["verify", F.path("chains/rsa-good.pem"), "--config", path, "--host", "www.example.test"] + F.at)
        #expect(good.status == 0, "\(good.errors)")
        let reportOnly = F.run(["verify", F.path("chains/rsa-good.pem"), "--config", path, "--host", "example.test", "--json"] + F.at)
        #expect(reportOnly.status == 0)
        let json = try F.json(reportOnly.output)
        #expect(json["trusted"] as? Bool == true)
        #expect((json["reasons"] as? [[String: Any]])?.isEmpty == true, "report-only failures do not count")
        #expect((json["reportOnly"] as? [[String: Any]])?.first?["code"] as? String == "pin.mismatch")
        #expect(json["disposition"] as? String == "useCredential")
        #expect(json["coverage"] as? String == "hostPolicy")
        let unlisted = F.run(["verify", F.path("chains/rsa-good.pem"), "--config", path, "--host", "other.example.test"] + F.at)
        #expect(unlisted.status == 1)
        #expect(unlisted.output.contains("policy.host-not-listed"))
    }

    @Test("a broken configuration exits 2 naming the file and key")
    func brokenConfig() throws {
        let path = try Self.write(#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pinz": [] } ] }"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = F.run(["verify", F.path("chains/rsa-good.pem"), "--config", path, "--host", "a.example.test"])
        #expect(result.status == 2)
        #expect(result.errors.contains(path))
        #expect(result.errors.contains("hosts[0].pinz: unknown key"))
    }

    @Test("--config cannot be mixed with command-line pins and needs --host", arguments: [
        ["--pin", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], ["--mode", "none"], ["--no-validate-domain-name"],
    ])
    func conflicts(extra: [String]) {
        let result = F.run(["verify", F.path("chains/rsa-good.pem"), "--config", "x.json", "--host", "a.example.test"] + extra)
        #expect(result.status == 2)
        let noHost = F.run(["verify", F.path("chains/rsa-good.pem"), "--config", "x.json"])
        #expect(noHost.status == 2)
        #expect(noHost.errors.contains("--config needs --host"))
    }

    @Test("lint exits 1 on a missing backup pin and 0 on a healthy file")
    func lint() throws {
        let single = try Self.write(#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": ["PIN"] } ] }"#
            .replacingOccurrences(of: "PIN", with: try Self.pin("rsa-intermediate")))
        let healthy = try Self.write(#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": ["A", "B"] } ] }"#
            .replacingOccurrences(of: "\"A\"", with: "\"\(try Self.pin("rsa-intermediate"))\"")
            .replacingOccurrences(of: "\"B\"", with: "\"\(try Self.pin("ec-intermediate"))\""))
        defer { try? FileManager.default.removeItem(atPath: single); try? FileManager.default.removeItem(atPath: healthy) }
        let bad = F.run(["lint", single, "--at", "2030-06-01"])
        #expect(bad.status == 1)
        #expect(bad.output.contains("error"))
        #expect(bad.output.contains("backup pin"))
        let good = F.run(["lint", healthy, "--at", "2030-06-01"])
        #expect(good.status == 0)
        #expect(good.output.contains("no findings"))
        #expect(F.run(["lint", "/nonexistent.json"]).status == 2)
    }

    @Test("lint --ct-log-list: the lists given replace the file's; lists too old for an enforced Chrome policy exit 1, fresh ones 0")
    func lintTransparency() throws {
        let log = try TestCTLog(name: "Lint 2030", operatorName: "Lint")
        let stale = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-stale-\(UUID().uuidString).json").path
        let fresh = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-fresh-\(UUID().uuidString).json").path
        try TestCT.logListJSON([log], since: TestPKI.time.addingTimeInterval(-86_400 * 400), timestamp: TestPKI.time.addingTimeInterval(-86_400 * 71))
            .write(to: URL(fileURLWithPath: stale))
        try TestCT.logListJSON([log], since: TestPKI.time.addingTimeInterval(-86_400 * 400), timestamp: TestPKI.time.addingTimeInterval(-86_400))
            .write(to: URL(fileURLWithPath: fresh))
        let config = try Self.write("""
            { "version": 1, "anchors": ["CERTS/rsa-root.pem"], "hosts": [ { "pattern": "a.example.test",
              "pins": ["\(try Self.pin("rsa-intermediate"))", "\(try Self.pin("ec-intermediate"))"],
              "certificateTransparency": { "policy": "chrome", "scope": "every-anchor" } } ] }
            """)
        defer { for path in [stale, fresh, config] { try? FileManager.default.removeItem(atPath: path) } }
        let old = F.run(["lint", config, "--at", "2030-06-01", "--ct-log-list", stale])
        #expect(old.status == 1, "\(old.errors)")
        #expect(old.output.contains("more than 70 days ago"))
        #expect(old.output.contains("[ct-lists-stale]"))
        let new = F.run(["lint", config, "--at", "2030-06-01", "--ct-log-list", fresh])
        #expect(new.status == 0, "\(new.output)\(new.errors)")
        // Without lists the file cannot be read: its requirement names none.
        let none = F.run(["lint", config, "--at", "2030-06-01"])
        #expect(none.status == 2)
        #expect(none.errors.contains("certificateTransparency"))
    }

    @Test("import of an Android file that turns CT on: the JSON carries the requirement, and a note says it loads only with log lists")
    func importTransparency() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-nsc-\(UUID().uuidString).xml").path
        try """
            <?xml version="1.0" encoding="utf-8"?>
            <network-security-config>
              <domain-config>
                <domain includeSubdomains="true">example.com</domain>
                <certificateTransparency enabled="true" />
              </domain-config>
            </network-security-config>
            """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The binary, whose standard error the note goes to.
        let result = try F.runBinary(["import", "android", path])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("certificateTransparency"))
        #expect(result.errors.contains("requires Certificate Transparency"))
        // Without CT, no note.
        let plain = try F.runBinary(["import", "android", F.repository.appendingPathComponent("Tests/TrustEvaluatorFormatsTests/Importers/network_security_config.xml").path])
        #expect(plain.status == 0)
        #expect(!plain.errors.contains("Certificate Transparency"))
    }

    @Test("import prints Pincheck JSON for each format, and exits 2 on what it cannot import", arguments: [
        ("trustkit", "Info.plist"), ("android", "network_security_config.xml"), ("okhttp", "okhttp-pins.txt"),
    ])
    func importCommand(kind: String, file: String) throws {
        let path = F.repository.appendingPathComponent("Tests/TrustEvaluatorFormatsTests/Importers/\(file)").path
        let result = F.run(["import", kind, path])
        #expect(result.status == 0, "\(result.errors)")
        let json = try F.json(result.output)
        #expect(json["version"] as? Int == 1)
        #expect((json["hosts"] as? [Any])?.isEmpty == false)
        let wrongKind = F.run(["import", kind == "okhttp" ? "android" : "okhttp", path])
        #expect(wrongKind.status == 2)
    }
}
