import Foundation
import Testing
@testable import PincheckCLI
import PincheckTestSupport
import TrustEvaluator

/// `pincheck audit` against `openssl s_server` on loopback: the app's verdict per host, the pin
/// that matched, backup pins, expiry and what a leaf-key rotation would do.
@Suite("pincheck audit", .serialized)
struct AuditCommandTests {
    typealias F = CLIFixtures

    static func pin(_ name: String) throws -> String { try CheckCommandTests.pin(name) }

    /// A configuration pinning www.example.test at the intermediate (with a backup), example.test
    /// at the leaf only, a wildcard pattern, and bad.example.test with pins that match nothing.
    static func configuration() throws -> String {
        try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["CERTS/rsa-root.pem"], "hosts": [
              { "pattern": "www.example.test", "pins": ["\(try pin("rsa-intermediate"))", "\(try pin("attacker-root"))"] },
              { "pattern": "example.test", "pins": ["\(try pin("rsa-leaf"))"] },
              { "pattern": "*.api.example.test", "pins": ["\(try pin("rsa-intermediate"))", "\(try pin("attacker-root"))"] },
              { "pattern": "bad.example.test", "pins": ["\(try pin("attacker-leaf"))", "\(try pin("attacker-root"))"] } ] }
            """)
    }

    static func hosts(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-audit-hosts-\(UUID().uuidString).txt").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("each host: verdict, matched pin and depth, backup pins, expiry, leaf rotation; the wildcard without a name is listed")
    func report() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let config = try Self.configuration()
        let refusing = try TestRawServer(.refuse)
        defer { refusing.stop() }
        let hosts = try Self.hosts(["# where the app's names live here", "www.example.test \(server.target)", "example.test \(server.target)",
                                    "bad.example.test \(refusing.target)   # nothing listens here"])
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: hosts) }
        let result = F.run(["audit", config, "--hosts", hosts, "--at", "2030-06-01T00:00:00Z"])
        #expect(result.status == 3, "nothing listens where bad.example.test is: \(result.output)")
        let sections = result.output.components(separatedBy: "\n\n")
        let www = try #require(sections.first { $0.hasPrefix("www.example.test (\(server.target)): ALLOWED") }, "\(result.output)")
        #expect(www.contains("matched        \(try Self.pin("rsa-intermediate")) at depth 1"))
        #expect(www.contains("backup         1 pin not on the current chain"))
        #expect(www.contains("expires        depth 1 in 25416 days (2100-01-01)"))
        #expect(www.contains("leaf rotation  survives: a pin matches at depth 1, above the leaf"))
        let apex = try #require(sections.first { $0.hasPrefix("example.test (\(server.target)): ALLOWED") }, "\(result.output)")
        #expect(apex.contains("at depth 0: CN=www.example.test"))
        #expect(apex.contains("the pin set for example.test has no backup pin: only one pin"))
        #expect(apex.contains("would break: only the leaf key is pinned and there is no backup pin"))
        #expect(result.output.contains("*.api.example.test: no host name given for this pattern"))
        #expect(result.output.contains("bad.example.test (\(refusing.target)): NO CONNECTION — network.refused"))
    }

    @Test("a refused host makes the exit code 1, with the app's reasons; --json gives one line per host")
    func refusedAndJSON() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        // *.example.test: a valid certificate for bad.example.test, so only its pins refuse it.
        let wildcard = try CheckTLSServer(certificate: "rsa-wildcard", chain: ["rsa-intermediate"])
        defer { wildcard.stop() }
        let config = try Self.configuration()
        let hosts = try Self.hosts(["www.example.test \(server.target)", "example.test \(server.target)", "bad.example.test \(wildcard.target)",
                                    "x.api.example.test \(server.target)"])
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: hosts) }
        let text = F.run(["audit", config, "--hosts", hosts, "--at", "2030-06-01T00:00:00Z"])
        #expect(text.status == 1, "\(text.output)")
        #expect(text.output.contains("bad.example.test (\(wildcard.target)): REFUSED (cancelAuthenticationChallenge, hostPolicy)"))
        #expect(text.output.contains("pin.mismatch"))
        #expect(text.output.contains("already refused: no pin matches the current chain"))
        // x.api.example.test is served a certificate for www.example.test: refused for its name.
        #expect(text.output.contains("x.api.example.test (\(server.target)): REFUSED"))
        #expect(!text.output.contains("no host name given"), "the wildcard is audited through x.api.example.test")

        let json = F.run(["audit", config, "--hosts", hosts, "--at", "2030-06-01T00:00:00Z", "--json"])
        #expect(json.status == 1)
        let lines = json.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let byHost = Dictionary(uniqueKeysWithValues: objects.map { ($0["host"] as! String, $0) })
        #expect(byHost["www.example.test"]?["outcome"] as? String == "allowed")
        #expect(byHost["www.example.test"]?["backupPins"] as? [String] == [try Self.pin("attacker-root")])
        let matched = try #require((byHost["www.example.test"]?["matchedPins"] as? [[String: Any]])?.first)
        #expect(matched["depth"] as? Int == 1 && matched["daysLeft"] as? Int == 25416)
        #expect(byHost["example.test"]?["leafRotation"] as? String == "would break: only the leaf key is pinned and there is no backup pin")
        #expect(byHost["bad.example.test"]?["outcome"] as? String == "refused")
        #expect(byHost["bad.example.test"]?["reasons"] as? [String] == ["pin.mismatch"])
    }

    @Test("a chain refused for another reason still shows the pin that holds it; one refused before its pins says so")
    func refusedForAnotherReason() throws {
        let server = try RevokedStapleTests.server()
        defer { server.stop() }
        let leafPin = try Certificate.load(contentsOf: F.path("revocation/rsa-direct-leaf.pem"))[0].publicKeyPin.description
        let hosts = try Self.hosts(["www.example.test \(server.target)"])
        var configs: [String] = []
        defer { (configs + [hosts]).forEach { try? FileManager.default.removeItem(atPath: $0) } }
        for anchor in ["rsa-root", "ec-root"] {
            configs.append(try ConfigAndLintCommandTests.write("""
                { "version": 1, "anchors": ["CERTS/\(anchor).pem"],
                  "hosts": [ { "pattern": "www.example.test", "pins": ["\(leafPin)", "\(try Self.pin("attacker-root"))"] } ] }
                """))
        }
        // The server staples a revoked response: refused for that, and the leaf pin still matches.
        let revoked = F.run(["audit", configs[0], "--hosts", hosts, "--at", "2030-06-01T00:00:00Z"])
        #expect(revoked.status == 1, "\(revoked.output)")
        #expect(revoked.output.contains("revocation.revoked"))
        #expect(revoked.output.contains("matched        \(leafPin) at depth 0: CN=www.example.test"), "\(revoked.output)")
        #expect(revoked.output.contains("leaf rotation  survives only if the new leaf key is one of the 1 backup pin"))
        let json = F.run(["audit", configs[0], "--hosts", hosts, "--at", "2030-06-01T00:00:00Z", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect((object["matchedPins"] as? [[String: Any]])?.first?["pin"] as? String == leafPin)
        #expect(object["pinsCompared"] as? Bool == true)
        // Anchored elsewhere, no path is built: the pins were never compared, and the audit does not say they failed.
        let unanchored = F.run(["audit", configs[1], "--hosts", hosts, "--at", "2030-06-01T00:00:00Z"])
        #expect(unanchored.status == 1, "\(unanchored.output)")
        #expect(unanchored.output.contains("chain.unknown-issuer"))
        #expect(unanchored.output.contains("matched        not compared: the chain is refused before its pins are"), "\(unanchored.output)")
        #expect(unanchored.output.contains("leaf rotation  unknown: the chain is refused before its pins are compared"))
        #expect(!unanchored.output.contains("no pin matches"))
    }

    @Test("any supported format: an OkHttp pin list is audited with OkHttp's meaning")
    func otherFormat() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let pins = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-audit-okhttp-\(UUID().uuidString).txt").path
        try "www.example.test \(try Self.pin("attacker-root"))\n*.example.test \(try Self.pin("rsa-intermediate"))\n".write(toFile: pins, atomically: true, encoding: .utf8)
        let hosts = try Self.hosts(["www.example.test \(server.target)"])
        defer { try? FileManager.default.removeItem(atPath: pins); try? FileManager.default.removeItem(atPath: hosts) }
        let result = F.run(["audit", pins, "--hosts", hosts, "--ca-file", F.path("rsa-root.pem"), "--at", "2030-06-01T00:00:00Z"])
        // OkHttp checks the union of every matching pattern's pins: the intermediate's pin counts.
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("www.example.test (\(server.target)): ALLOWED"))
        #expect(result.output.contains("\(try Self.pin("rsa-intermediate")) at depth 1"))
    }

    @Test("bad input: an unreadable configuration or a malformed hosts line is exit 2")
    func badInput() throws {
        #expect(F.run(["audit", "/nonexistent/config.json"]).status == 2)
        let config = try Self.configuration()
        let hosts = try Self.hosts(["www.example.test 127.0.0.1:1 extra"])
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: hosts) }
        let result = F.run(["audit", config, "--hosts", hosts])
        #expect(result.status == 2)
        #expect(result.errors.contains("is not NAME [ADDRESS[:PORT]]"), "\(result.errors)")
    }
}
