import Foundation
import Testing
@testable import TrustEvaluator

@Suite("configuration importers")
struct ImporterTests {
    static func sample(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Importers/\(name)"))
    }

    static func load(_ name: String) throws -> Configuration {
        try Configuration.decode(try sample(name), source: name, baseDirectory: ".",
                                 anchors: Fixtures.anchors, publicSuffixes: HostPatternTests.psl)
    }

    @Test("formats are recognised from their bytes", arguments: [
        ("Info.plist", ConfigurationFormat.trustKit), ("network_security_config.xml", .android), ("okhttp-pins.txt", .okHttp),
    ])
    func detection(file: String, format: ConfigurationFormat) throws {
        #expect(ConfigurationImporter.detect(try Self.sample(file)) == format)
        #expect(ConfigurationImporter.detect(Data(#"{ "version": 1 }"#.utf8)) == .pincheck)
    }

    @Test("TrustKit: enforced, report-only, includeSubdomains, expiry, report URIs and exclusion are kept")
    func trustKit() throws {
        let configuration = try Self.load("Info.plist")
        let manager = configuration.trustManager
        #expect(!manager.allHostsMustBeEvaluated, "TrustKit leaves unlisted hosts to default validation")
        let www = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(www.action == .useCredential)
        #expect(try manager.policy(for: "www.example.test")?.reportURIs.first?.absoluteString == "https://reports.example.test/pins")
        #expect(try manager.policy(for: "www.example.test")?.pinSets.first?.expires == PinSet.expiryDate("2099-12-01"))
        // example.test and its subdomains: report-only pins on the ECDSA intermediate.
        let api = try manager.evaluate(Fixtures.chain("rsa-good"), host: "example.test", at: Fixtures.time)
        #expect(api.action == .useCredential)
        #expect(api.verdict.failures.map(\.code) == [.pinMismatch])
        // Excluded from the parent's policy: default validation only, no pin failure.
        let legacy = try manager.evaluate(Fixtures.chain("rsa-wildcard"), host: "legacy.example.test", at: Fixtures.time)
        #expect(legacy.action == .useCredential)
        #expect(legacy.verdict.failures.isEmpty)
    }

    @Test("Android: domain-config pins, includeSubdomains, expiration, inheritance by nested domain-configs")
    func android() throws {
        let manager = try Self.load("network_security_config.xml").trustManager
        #expect(try manager.policy(for: "deep.example.test")?.pattern.kind == .includingSubdomains)
        let inherited = try #require(try manager.policy(for: "cdn.example.test"))
        #expect(inherited.pattern.kind == .exact)
        #expect(inherited.pinSets.first?.pinCount == 2, "nested domain-configs inherit the parent's pin set")
        #expect(inherited.pinSets.first?.expires == PinSet.expiryDate("2099-01-01"))
        #expect(try manager.policy(for: "plain.example.test")?.pinSets.isEmpty == true)
        #expect(try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time).action == .useCredential)
    }

    @Test("OkHttp: pins grouped by pattern, ** patterns kept")
    func okHttp() throws {
        let manager = try Self.load("okhttp-pins.txt").trustManager
        #expect(try manager.policy(for: "www.example.test")?.pinSets.first?.pinCount == 2)
        #expect(try manager.policy(for: "a.b.example.test")?.pattern.kind == .anyDepth)
        #expect(try manager.evaluate(Fixtures.chain("rsa-good"), host: "a.b.example.test", at: Fixtures.time).action == .reject)
    }

    @Test("a malformed OkHttp line is an error naming the line")
    func okHttpError() {
        #expect(throws: PincheckError.self) {
            try ConfigurationImporter.pincheckJSON(from: Data("www.example.test sha256/AAAA\nwww.example.test not-a-pin\n".utf8), source: "pins")
        }
        do {
            _ = try ConfigurationImporter.pincheckJSON(from: Data("a.example.test oops".utf8), format: .okHttp, source: "pins")
        } catch {
            #expect(error.description.contains("line 1"))
        }
    }

    @Test("import produces Pincheck JSON that loads to the same policies")
    func roundTrip() throws {
        let json = try ConfigurationImporter.pincheckJSON(from: try Self.sample("Info.plist"), source: "Info.plist")
        #expect(json.contains("\"pattern\" : \"www.example.test\""))
        let again = try Configuration.decode(Data(json.utf8), baseDirectory: ".", anchors: Fixtures.anchors, publicSuffixes: HostPatternTests.psl)
        #expect(again.hosts.count == 3)
    }

    @Test("what cannot be imported is an error naming it", arguments: [
        ("<plist version=\"1.0\"><dict><key>TSKPinnedDomains</key><dict><key>a.example.test</key><dict><key>TSKPublicKeyHashez</key><array/></dict></dict></dict></plist>", "TSKPublicKeyHashez"),
        ("<plist version=\"1.0\"><dict><key>Other</key><string/></dict></plist>", "TSKPinnedDomains"),
        ("<network-security-config><domain-config><domain>a.example.test</domain><pin-set><pin digest=\"SHA-1\">AAAA</pin></pin-set></domain-config></network-security-config>", "SHA-256"),
        ("<network-security-config><domain-config><domain>a.example.test</domain><trust-anchors><certificates src=\"@raw/ca\"/></trust-anchors></domain-config></network-security-config>", "--ca-file"),
    ])
    func errors(text: String, expected: String) {
        do {
            _ = try Configuration.decode(Data(text.utf8), source: "sample", baseDirectory: ".", publicSuffixes: HostPatternTests.psl)
            Issue.record("must be rejected")
        } catch {
            #expect(error.description.contains(expected), "\(error)")
        }
    }
}
