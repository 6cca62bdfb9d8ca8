import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Android's `<trust-anchors>` as `XmlConfigSource` reads them, from an app layout made here:
/// `res/xml/network_security_config.xml` beside `res/raw/my_ca.pem` (the test RSA root).
@Suite("Android trust anchors", .serialized)
struct AndroidTrustAnchorTests {
    static let attackerPin = Fixtures.referencePins["attacker-root"]!.dropFirst("sha256/".count)

    /// Writes the app layout and loads the configuration (`systemStandIn`: the anchors that play
    /// the system store, as --ca-file does; nil: the real system store).
    static func load(_ body: String, systemStandIn: TrustAnchors? = Fixtures.anchors, resource: String = "rsa-root.pem") throws -> TrustManager {
        let app = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-android-\(UUID().uuidString)")
        let xml = app.appendingPathComponent("res/xml"), raw = app.appendingPathComponent("res/raw")
        try FileManager.default.createDirectory(at: xml, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: raw, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: app) }
        let name = "my_ca." + (resource.split(separator: ".").last.map(String.init) ?? "pem")
        try FileManager.default.copyItem(atPath: Fixtures.path(resource), toPath: raw.appendingPathComponent(name).path)
        let file = xml.appendingPathComponent("network_security_config.xml").path
        try "<network-security-config>\(body)</network-security-config>".write(toFile: file, atomically: true, encoding: .utf8)
        return try Configuration.load(contentsOf: file, anchors: systemStandIn, publicSuffixes: Fixtures.psl).trustManager
    }

    static func decide(_ manager: TrustManager, _ chain: String, host: String = "www.example.test") throws -> Verdict {
        try manager.evaluate(Fixtures.chain(chain), host: host, at: Fixtures.time)
    }

    @Test("@raw/NAME anchors replace the system store for that domain; a PKCS #7 resource gives each root in it, as CertificateFactory.generateCertificates reads it",
          arguments: [("rsa-root.pem", false), ("roots.p7b", true)])
    func rawAnchors(resource: String, holdsECRoot: Bool) throws {
        // The stand-in system store holds ec-root; res/raw/my_ca.pem is rsa-root, my_ca.p7b rsa-root and ec-root.
        let manager = try Self.load("""
            <domain-config><domain>www.example.test</domain>
              <trust-anchors><certificates src="@raw/my_ca"/></trust-anchors></domain-config>
            """, resource: resource)
        #expect(try Self.decide(manager, "rsa-good").allowsConnection)
        let ec = try Self.decide(manager, "ec-good")
        #expect(ec.allowsConnection == holdsECRoot)
        #expect(ec.failures.contains { $0.code == .unknownIssuer } == !holdsECRoot)
        #expect(!(try Self.decide(manager, "attacker").allowsConnection))
    }

    @Test("an empty <trust-anchors> trusts nothing, never the system store")
    func emptyTrustsNothing() throws {
        let manager = try Self.load("<domain-config><domain>www.example.test</domain><trust-anchors/></domain-config>")
        let decision = try Self.decide(manager, "rsa-good")
        #expect(!decision.allowsConnection)
        #expect(decision.failures.contains { $0.code == .unknownIssuer })
    }

    @Test("system and @raw together: both are trusted")
    func systemAndRaw() throws {
        let manager = try Self.load("""
            <domain-config><domain>www.example.test</domain>
              <trust-anchors><certificates src="system"/><certificates src="@raw/my_ca"/></trust-anchors></domain-config>
            """, systemStandIn: try TrustAnchors(certificates: [Fixtures.ecRoot]))
        #expect(try Self.decide(manager, "rsa-good").allowsConnection)
        #expect(try Self.decide(manager, "ec-good").allowsConnection)
    }

    @Test("base-config anchors reach domain-configs without their own and unlisted hosts; nested domain-configs inherit their parent's")
    func inheritance() throws {
        let manager = try Self.load("""
            <base-config><trust-anchors><certificates src="@raw/my_ca"/></trust-anchors></base-config>
            <domain-config><domain>example.test</domain>
              <domain-config><domain>www.example.test</domain></domain-config>
            </domain-config>
            """, systemStandIn: nil)
        #expect(try Self.decide(manager, "rsa-good").allowsConnection)                       // nested: base-config's my_ca
        #expect(try Self.decide(manager, "rsa-good", host: "example.test").allowsConnection)
        let nested = try Self.load("""
            <domain-config><domain>example.test</domain><trust-anchors/>
              <domain-config><domain>www.example.test</domain></domain-config>
            </domain-config>
            """)
        #expect(try !Self.decide(nested, "rsa-good").allowsConnection, "the nested domain inherits the parent's empty anchors")
    }

    @Test("overridePins: a chain to that anchor skips the pins; other chains must still match them")
    func overridePins() throws {
        let manager = try Self.load("""
            <domain-config><domain>www.example.test</domain>
              <pin-set><pin digest="SHA-256">\(Self.attackerPin)</pin></pin-set>
              <trust-anchors><certificates src="system"/><certificates src="@raw/my_ca" overridePins="true"/></trust-anchors>
            </domain-config>
            """, systemStandIn: try TrustAnchors(certificates: [Fixtures.ecRoot]))
        let overridden = try Self.decide(manager, "rsa-good")
        #expect(overridden.allowsConnection, "\(overridden.failures)")
        #expect(overridden.warnings.contains { $0.message.contains("overridePins") })
        let pinned = try Self.decide(manager, "ec-good")
        #expect(!pinned.allowsConnection)
        #expect(pinned.failures.map(\.code) == [.pinMismatch])
    }

    @Test("debug-overrides is ignored")
    func debugOverrides() throws {
        let manager = try Self.load("""
            <debug-overrides><trust-anchors><certificates src="@raw/my_ca"/></trust-anchors></debug-overrides>
            <domain-config><domain>www.example.test</domain><trust-anchors/></domain-config>
            """)
        #expect(try !Self.decide(manager, "rsa-good").allowsConnection)
    }

    @Test("a missing @raw resource is an error naming it")
    func missingRaw() {
        let error = #expect(throws: PincheckError.self) {
            try Self.load("<domain-config><domain>a.example.test</domain><trust-anchors><certificates src=\"@raw/nope\"/></trust-anchors></domain-config>")
        }
        #expect(error?.message.contains("@raw/nope") == true)
    }

    @Test("res/raw is the folder beside the file's own, whatever form the path takes; an explicit folder wins; imported names are absolute")
    func rawFolderLocation() throws {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(ConfigurationImporter.androidRawFolder(for: "/app/res/xml/nsc.xml") == "/app/res/raw")
        #expect(ConfigurationImporter.androidRawFolder(for: "nsc.xml") == ConfigurationImporter.absolute("../raw"))
        #expect(ConfigurationImporter.androidRawFolder(for: "./res/xml/../xml/nsc.xml") == ConfigurationImporter.absolute("res/raw"))
        #expect(ConfigurationImporter.absolute("a/./b/../c") == (cwd == "/" ? "/a/c" : cwd + "/a/c"))

        let app = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-android-raw-\(UUID().uuidString)")
        let xml = app.appendingPathComponent("res/xml"), elsewhere = app.appendingPathComponent("certs")
        try FileManager.default.createDirectory(at: xml, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: app) }
        try FileManager.default.copyItem(atPath: Fixtures.path("rsa-root.pem"), toPath: elsewhere.appendingPathComponent("my_ca.pem").path)
        let file = xml.appendingPathComponent("nsc.xml").path
        try """
            <network-security-config><domain-config><domain>www.example.test</domain>
              <trust-anchors><certificates src="@raw/my_ca"/></trust-anchors></domain-config></network-security-config>
            """.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: PincheckError.self) { try Configuration.load(contentsOf: file, publicSuffixes: Fixtures.psl) }
        let manager = try Configuration.load(contentsOf: file, androidRawFolder: elsewhere.path, publicSuffixes: Fixtures.psl).trustManager
        #expect(try Self.decide(manager, "rsa-good").allowsConnection)
        let json = try ConfigurationImporter.pincheckJSON(from: Data(contentsOf: URL(fileURLWithPath: file)), source: file, androidRawFolder: elsewhere.path)
        #expect(json.contains("\"\(elsewhere.path)/my_ca.pem\""), "\(json)")
    }
}
