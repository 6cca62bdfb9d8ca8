import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// What lint says of pins on the root programs' roots and of CA families.
@Suite("root programs: CA families in lint")
struct CAFamilyLintTests {
    @Test("a pinned Let's Encrypt intermediate is 1 of the 5 its CA rotates between: lint says so; a pin on a test CA says nothing",
          SharedData.requires("realworld"))
    func partlyPinnedFamily() throws {
        let chain = SharedData.url("realworld").appendingPathComponent("chains/rpv-letsencrypt_org_valid-04e9d2d4.pem").path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-family-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let e6 = try Certificate.load(contentsOf: chain)[1]
        try e6.pemEncoded.write(to: folder.appendingPathComponent("e6.pem"), atomically: true, encoding: .utf8)
        let json = #"{ "version": 1, "hosts": [ { "pattern": "lencr.org", "mode": "certificate", "pinnedCertificates": ["\#(folder.path)/e6.pem", "rsa-intermediate.pem"] } ] }"#
        let findings = try LintTests.lint(json, at: Timestamp.parse("2024-07-15")!)
        let finding = try #require(findings.first { $0.code == "ca-family-partly-pinned" }, "\(findings)")
        #expect(finding.message.contains("1 of the 5 intermediates") && finding.message.contains("E5, E6, E7, E8, E9"))
        let testOnly = #"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "mode": "certificate", "pinnedCertificates": ["rsa-intermediate.pem", "ec-intermediate.pem"] } ] }"#
        #expect(!(try LintTests.lint(testOnly)).contains { $0.code == "ca-family-partly-pinned" })
    }

    @Test("lint: a pin on a program root is a public-root pin naming the programs; on a distrusted one, a distrusted-root pin")
    func lintProgramRoots() throws {
        let entrust = try #require(RootPrograms.bundled.roots.first { $0.name == "Entrust Root Certification Authority - G2" && $0.publicKeySHA256 != nil })
        let pin = try PublicKeyPin("sha256/" + Data(entrust.publicKeySHA256!).base64EncodedString())
        let json = #"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": ["\#(pin)", "\#(LintTests.pinB)"] } ] }"#
        let findings = try LintTests.lint(json)
        #expect(findings.contains { $0.code == "public-root-pin" && $0.message.contains("Entrust Root Certification Authority - G2") })
        #expect(findings.contains { $0.code == "distrusted-root-pin" && $0.message.contains("2024-11-30") })
        let healthy = #"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": ["\#(LintTests.pinA)", "\#(LintTests.pinB)"] } ] }"#
        #expect(try LintTests.lint(healthy).isEmpty)
    }
}
