import Foundation
import PincheckTestSupport
import Testing
@testable import PincheckCLI
import TrustEvaluator

/// `pincheck plan`: will a renewal or a CA move break the app's pins, and which pins keep both working.
@Suite("pincheck plan", .serialized)
struct PlanCommandTests {
    typealias F = CLIFixtures

    static func pin(_ name: String) throws -> String { try CheckCommandTests.pin(name) }

    /// A configuration pinning www.example.test to `pins`, trusting both test roots.
    static func configuration(_ pins: [String]) throws -> String {
        try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["CERTS/rsa-root.pem", "CERTS/ec-root.pem"],
              "hosts": [ { "pattern": "www.example.test", "pins": [\(pins.map { "\"\($0)\"" }.joined(separator: ", "))] } ] }
            """)
    }

    static func plan(_ config: String, next: [String], extra: [String] = []) -> CLIFixtures.Result {
        F.run(["plan", config, "--current", F.path("chains/rsa-good.pem")] + next.flatMap { ["--next", $0] } + ["--at", "2030-06-01"] + extra)
    }

    @Test("leaf-only pins: a renewal with a new leaf key breaks; the suggestion pins the intermediate and keeps the backup")
    func leafOnly() throws {
        let config = try Self.configuration([try Self.pin("rsa-leaf"), try Self.pin("attacker-root")])
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = Self.plan(config, next: [F.path("rsa-leaf-rotated.pem")])
        #expect(result.status == 1)
        #expect(result.output.contains("www.example.test: BREAKS — only the leaf key is pinned and the next leaf has a new key"))
        #expect(result.output.contains(#""pins": ["\#(try Self.pin("rsa-intermediate"))", "\#(try Self.pin("attacker-root"))"]"#), "\(result.output)")
    }

    @Test("a pin on Let's Encrypt's E6 covers 1 of the 5 intermediates of ISRG Root X2: plan names the family, its expiry and its CRL partitions",
          SharedData.requires("realworld"))
    func caFamily() throws {
        let chain = SharedData.url("realworld/chains/rpv-letsencrypt_org_valid-04e9d2d4.pem").path
        let root = SharedData.url("realworld/roots/ISRG-Root-X2-69729b8e.pem").path
        let e6 = "sha256/0Bbh/jEZSKymTy3kTOhsmlHKBB32EDu1KojrP3YfV9c="
        let config = try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["\(root)"], "hosts": [ { "pattern": "lencr.org", "pins": ["\(e6)", "\(try Self.pin("attacker-root"))"] } ] }
            """)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = F.run(["plan", config, "--current", chain, "--next", chain, "--at", "2024-07-15"])
        #expect(result.output.contains("the pin on E6 covers 1 of the 5 intermediates Internet Security Research Group issues from under ISRG Root X2 (E5, E6, E7, E8, E9)"), "\(result.output)")
        #expect(result.output.contains("E6 expires 2027-03-12"))
        #expect(result.output.contains("E6 is also issued under ISRG Root X1"), "the cross-sign")
        #expect(result.output.contains("partitions"))
        // Pinned on the root instead: the intermediates it issued, E5–E9 among them.
        let x2 = try Certificate.load(contentsOf: root)[0].publicKeyPin.description
        let rootConfig = try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["\(root)"], "hosts": [ { "pattern": "lencr.org", "pins": ["\(x2)", "\(try Self.pin("attacker-root"))"] } ] }
            """)
        defer { try? FileManager.default.removeItem(atPath: rootConfig) }
        let rooted = F.run(["plan", rootConfig, "--current", chain, "--next", chain, "--at", "2024-07-15"])
        #expect(rooted.output.contains("the pin on ISRG Root X2 covers the") && rooted.output.contains("E5, E6, E7, E8, E9"), "\(rooted.output)")
    }

    @Test("a pin on the root above an intermediate the store trusts itself can never match: plan says why")
    func pinAboveThePath() throws {
        let config = try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["CERTS/rsa-intermediate.pem"],
              "hosts": [ { "pattern": "www.example.test", "pins": ["\(try Self.pin("rsa-root"))", "\(try Self.pin("attacker-root"))"] } ] }
            """)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = Self.plan(config, next: [F.path("rsa-leaf-rotated.pem")])
        #expect(result.output.contains("the verified path ends at CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests, an anchor of the store although it is not a root"), "\(result.output)")
        #expect(result.output.contains("can never match"))
        // Pins on the path itself give no such line.
        let fine = try Self.configuration([try Self.pin("rsa-intermediate"), try Self.pin("attacker-root")])
        defer { try? FileManager.default.removeItem(atPath: fine) }
        #expect(!Self.plan(fine, next: [F.path("rsa-leaf-rotated.pem")]).output.contains("can never match"))
    }

    @Test("CA pins: the same renewal survives")
    func caPins() throws {
        let config = try Self.configuration([try Self.pin("rsa-intermediate"), try Self.pin("attacker-root")])
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = Self.plan(config, next: [F.path("rsa-leaf-rotated.pem")])
        #expect(result.status == 0)
        #expect(result.output.contains("SURVIVES — a pinned key is on the next path (depth 1)"))
    }

    @Test("a backup pin for the next leaf key: the renewal survives")
    func backupPin() throws {
        let config = try Self.configuration([try Self.pin("rsa-leaf"), try Self.pin("rsa-leaf-rotated")])
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = Self.plan(config, next: [F.path("rsa-leaf-rotated.pem")])
        #expect(result.status == 0)
        #expect(result.output.contains("SURVIVES — a pinned key is on the next path (depth 0)"))
        #expect(result.output.contains("no backup pin:"), "neither pin is off both chains, so a spare key is asked for")
    }

    @Test("today's chain refused before its pins are compared: the plan does not say no pin matches it")
    func todayRefusedFirst() throws {
        // Only the EC root is trusted: today's RSA chain builds no path, so its pins are never
        // compared; the next chain (EC) is valid and carries no pinned key.
        let config = try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["CERTS/ec-root.pem"],
              "hosts": [ { "pattern": "www.example.test", "pins": ["\(try Self.pin("rsa-leaf"))", "\(try Self.pin("attacker-root"))"] } ] }
            """)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = Self.plan(config, next: [F.path("chains/ec-good.pem")])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("today's chain is refused before its pins are compared"), "\(result.output)")
        #expect(!result.output.contains("no pin matches today's chain"))
    }

    @Test("a CSR as --next: no certificate needed; leaf pins break, CA pins survive")
    func csr() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let csr = folder.appendingPathComponent("next.csr").path
        try #require(try OpenSSLCLI.run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                          "-keyout", folder.appendingPathComponent("next.key").path, "-subj", "/CN=www.example.test", "-out", csr]) == 0)
        let leaf = try Self.configuration([try Self.pin("rsa-leaf"), try Self.pin("attacker-root")])
        let ca = try Self.configuration([try Self.pin("rsa-intermediate"), try Self.pin("attacker-root")])
        defer { try? FileManager.default.removeItem(atPath: leaf); try? FileManager.default.removeItem(atPath: ca) }
        let broken = Self.plan(leaf, next: [csr], extra: ["--json"])
        #expect(broken.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(broken.output.utf8)) as? [String: Any])
        #expect(object["next"] as? String == "breaks")
        #expect(object["reason"] as? String == "only the leaf key is pinned and the next leaf has a new key")
        #expect(Self.plan(ca, next: [csr]).status == 0)
        // The new key as the backup of the leaf pins: pinning it now makes the renewal survive.
        let withBackup = Self.plan(leaf, next: [F.path("rsa-leaf-rotated.pem")], extra: ["--backup", folder.appendingPathComponent("next.key").path])
        #expect(withBackup.status == 1)
        #expect(!withBackup.output.contains("no backup pin:"))
    }

    @Test("a CA move: the intermediate pin breaks; the suggestion holds both CAs' keys through the move")
    func caMove() throws {
        let config = try Self.configuration([try Self.pin("rsa-intermediate"), try Self.pin("attacker-root")])
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = Self.plan(config, next: [F.path("chains/ec-good.pem")])
        #expect(result.status == 1)
        #expect(result.output.contains("no pinned key is on the next path: today's pins match at depth 1"))
        #expect(result.output.contains(#""pins": ["\#(try Self.pin("rsa-intermediate"))", "\#(try Self.pin("ec-intermediate"))", "\#(try Self.pin("attacker-root"))"]"#), "\(result.output)")
    }

    @Test("the suggestion in the configuration's own format: OkHttp, TrustKit, Android")
    func formats() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-plan-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let leaf = try Self.pin("rsa-leaf"), backup = try Self.pin("attacker-root"), intermediate = try Self.pin("rsa-intermediate")
        let okhttp = folder.appendingPathComponent("pins.txt").path
        try "www.example.test \(leaf)\nwww.example.test \(backup)\n".write(toFile: okhttp, atomically: true, encoding: .utf8)
        let ok = Self.plan(okhttp, next: [F.path("rsa-leaf-rotated.pem")], extra: ["--ca-file", F.path("rsa-root.pem")])
        #expect(ok.output.contains("    www.example.test \(intermediate)\n    www.example.test \(backup)"), "\(ok.output)")

        let android = folder.appendingPathComponent("nsc.xml").path
        try """
            <network-security-config><domain-config><domain>www.example.test</domain>
              <pin-set><pin digest="SHA-256">\(leaf.dropFirst(7))</pin><pin digest="SHA-256">\(backup.dropFirst(7))</pin></pin-set>
            </domain-config></network-security-config>
            """.write(toFile: android, atomically: true, encoding: .utf8)
        let xml = Self.plan(android, next: [F.path("rsa-leaf-rotated.pem")], extra: ["--ca-file", F.path("rsa-root.pem")])
        #expect(xml.status == 1)
        #expect(xml.output.contains(#"<pin digest="SHA-256">\#(intermediate.dropFirst(7))</pin>"#), "\(xml.output)")
    }

    @Test("bad input is exit 2: no --next, an unreadable file")
    func badInput() throws {
        let config = try Self.configuration([try Self.pin("rsa-intermediate"), try Self.pin("attacker-root")])
        defer { try? FileManager.default.removeItem(atPath: config) }
        #expect(F.run(["plan", config]).status == 2)
        #expect(F.run(["plan", config, "--next", "/nonexistent.pem", "--current", F.path("chains/rsa-good.pem")]).status == 2)
    }

    @Test("today's chain fetched live (as check does), and the suggestion for an ATS Info.plist in NSPinnedDomains' form")
    func liveAndATS() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-plan-ats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let plist = folder.appendingPathComponent("Info.plist").path
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>NSAppTransportSecurity</key><dict><key>NSPinnedDomains</key><dict>
              <key>www.example.test</key><dict><key>NSPinnedLeafIdentities</key><array>
                <dict><key>SPKI-SHA256-BASE64</key><string>\(try Self.pin("rsa-leaf").dropFirst(7))</string></dict>
              </array></dict>
            </dict></dict></dict></plist>
            """.write(toFile: plist, atomically: true, encoding: .utf8)
        let result = F.run(["plan", plist, "--address", server.target, "--next", F.path("rsa-leaf-rotated.pem"),
                            "--ca-file", F.path("rsa-root.pem"), "--at", "2030-06-01"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("today: allowed"), "the live chain was judged")
        #expect(result.output.contains("only the leaf key is pinned and the next leaf has a new key"))
        // The intermediate, on both paths, goes to the CA identities.
        #expect(result.output.contains("<key>NSPinnedCAIdentities</key>"))
        #expect(result.output.contains("<string>\(try Self.pin("rsa-intermediate").dropFirst(7))</string>"))
        #expect(!result.output.contains("<key>NSPinnedLeafIdentities</key>"))
    }
}
