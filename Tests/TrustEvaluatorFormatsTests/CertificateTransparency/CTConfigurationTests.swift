import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// `"certificateTransparency"` in the configuration file: per host, as the file's default, with
/// the log lists the file names or the caller gives; and Android's `<certificateTransparency>`.
@Suite("Certificate Transparency in configuration files")
struct CTConfigurationTests {
    typealias CT = CertificateTransparency

    static let logs = CTScenario.logs
    static let since = CTScenario.since
    /// The test PKI's chain with three embedded SCTs of the test logs (compliant under Chrome's policy).
    static let logged = CTScenario.logged
    /// The same chain with no SCT.
    static let unlogged = Fixtures.chain("rsa-good")

    /// A folder with `config.json` (the given text) and `logs.json` (a list of the test logs).
    static func folder(_ json: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-ct-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try TestCT.logListJSON(logs, since: since, timestamp: TestPKI.time).write(to: folder.appendingPathComponent("logs.json"))
        try json.write(to: folder.appendingPathComponent("config.json"), atomically: true, encoding: .utf8)
        return folder
    }

    static func load(_ json: String, logs: CT.Logs? = nil) throws -> Configuration {
        let folder = try folder(json)
        defer { try? FileManager.default.removeItem(at: folder) }
        let anchors = try TrustAnchors(certificates: [Fixtures.rsaRoot])
        return try Configuration.load(contentsOf: folder.appendingPathComponent("config.json").path, anchors: anchors,
                                      publicSuffixes: Fixtures.psl, certificateTransparencyLogs: logs)
    }

    static func loadError(_ json: String, logs: CT.Logs? = nil) -> String {
        do { _ = try load(json, logs: logs); return "" } catch { return "\(error)" }
    }

    @Test("a host's policy, with the file's log lists: its SCTs are verified and counted; a chain without SCTs is refused with ct.not-compliant")
    func hostPolicyWithFileLists() throws {
        let manager = try Self.load("""
            { "version": 1, "certificateTransparencyLogLists": ["logs.json"], "hosts": [
              { "pattern": "www.example.test", "mode": "none",
                "certificateTransparency": { "policy": "chrome", "scope": "every-anchor" } } ] }
            """).trustManager
        let trusted = try manager.evaluate(Self.logged, host: Fixtures.host, at: Fixtures.time)
        #expect(trusted.allowsConnection)
        #expect(trusted.certificateTransparency?.compliance == .compliant)
        #expect(trusted.certificateTransparency?.timestamps.filter(\.counted).count == 3)
        let refused = try manager.evaluate(Self.unlogged, host: Fixtures.host, at: Fixtures.time)
        #expect(!refused.allowsConnection)
        #expect(refused.failureCodes.contains(.ctNotCompliant))
    }

    @Test("report-only makes the same failure a warning")
    func reportOnly() throws {
        let manager = try Self.load("""
            { "version": 1, "certificateTransparencyLogLists": ["logs.json"], "hosts": [
              { "pattern": "www.example.test", "mode": "none",
                "certificateTransparency": { "policy": "chrome", "enforcement": "report-only", "scope": "every-anchor" } } ] }
            """).trustManager
        let verdict = try manager.evaluate(Self.unlogged, host: Fixtures.host, at: Fixtures.time)
        #expect(verdict.allowsConnection)
        #expect(verdict.warningCodes.contains(.ctNotCompliant))
    }

    @Test("the top-level requirement applies to hosts that set none and to unlisted hosts; \"off\" takes a host out")
    func fileDefault() throws {
        let configuration = try Self.load("""
            { "version": 1, "allHostsMustBeEvaluated": false, "certificateTransparencyLogLists": ["logs.json"],
              "certificateTransparency": { "policy": "apple", "scope": "every-anchor" },
              "hosts": [ { "pattern": "www.example.test", "mode": "none" },
                         { "pattern": "example.test", "mode": "none", "certificateTransparency": { "policy": "off" } } ] }
            """)
        let manager = configuration.trustManager
        #expect(try manager.policy(for: "www.example.test")?.validationPolicy.certificateTransparency?.policy == .apple)
        #expect(try manager.policy(for: "example.test")?.validationPolicy.certificateTransparency == nil)
        #expect(manager.defaultValidationPolicy.certificateTransparency?.policy == .apple)
        // example.test is a name of the same leaf: without CT the unlogged chain is trusted there.
        #expect(try manager.evaluate(Self.unlogged, host: "example.test", at: Fixtures.time).allowsConnection)
        #expect(try !manager.evaluate(Self.unlogged, host: Fixtures.host, at: Fixtures.time).allowsConnection)
    }

    @Test("lists given at load replace the file's: a list that lacks the logs leaves every SCT unknown")
    func listsAtLoad() throws {
        let other = CT.Logs([try TestCT.logList([try TestCTLog(name: "Gamma", operatorName: "Gamma")], since: Self.since, timestamp: TestPKI.time)])
        let manager = try Self.load("""
            { "version": 1, "certificateTransparencyLogLists": ["logs.json"], "hosts": [
              { "pattern": "www.example.test", "mode": "none", "certificateTransparency": { "policy": "chrome", "scope": "every-anchor" } } ] }
            """, logs: other).trustManager
        let verdict = try manager.evaluate(Self.logged, host: Fixtures.host, at: Fixtures.time)
        #expect(!verdict.allowsConnection)
        #expect(verdict.certificateTransparency?.timestamps.allSatisfy { $0.status == .unknownLog } == true)
    }

    @Test("refused at load, naming the key: a policy without log lists, an unknown policy or enforcement, off with options, an unknown key, a missing list file")
    func loadErrors() throws {
        let host = #"{ "version": 1, "hosts": [ { "pattern": "www.example.test", "mode": "none", "certificateTransparency": CT } ] }"#
        #expect(Self.loadError(host.replacingOccurrences(of: "CT", with: #"{ "policy": "chrome" }"#))
            .contains("hosts[0].certificateTransparency: a Certificate Transparency policy needs log lists"))
        #expect(Self.loadError(host.replacingOccurrences(of: "CT", with: #"{ "policy": "firefox" }"#), logs: CT.Logs([]))
            .contains("hosts[0].certificateTransparency.policy: \"firefox\" is not"))
        #expect(Self.loadError(host.replacingOccurrences(of: "CT", with: #"{ "policy": "chrome", "enforcement": "warn" }"#), logs: CT.Logs([]))
            .contains("hosts[0].certificateTransparency.enforcement: \"warn\" is not \"enforce\", \"report-only\""))
        #expect(Self.loadError(host.replacingOccurrences(of: "CT", with: #"{ "policy": "off", "scope": "every-anchor" }"#))
            .contains("policy \"off\" takes no enforcement"))
        #expect(Self.loadError(host.replacingOccurrences(of: "CT", with: #"{ "policy": "chrome", "logs": [] }"#))
            .contains("hosts[0].certificateTransparency.logs: unknown key"))
        #expect(Self.loadError(#"{ "version": 1, "certificateTransparencyLogLists": ["missing.json"], "hosts": [] }"#)
            .contains("certificateTransparencyLogLists[0]"))
        #expect(Self.loadError(#"{ "version": 1, "certificateTransparency": { "policy": "apple" }, "hosts": [] }"#)
            .contains("certificateTransparency: a Certificate Transparency policy needs log lists"))
    }

    // MARK: Android

    /// An Android app folder (`res/xml/NAME.xml`, `res/raw/ca_certs_pem.pem`) holding `xml`.
    static func android(_ xml: String, logs: CT.Logs? = CT.Logs([])) throws -> Configuration {
        let app = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-ct-android-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: app) }
        let folder = app.appendingPathComponent("res/xml"), raw = app.appendingPathComponent("res/raw")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: raw, withIntermediateDirectories: true)
        try Fixtures.rsaRoot.pemEncoded.write(to: raw.appendingPathComponent("ca_certs_pem.pem"), atomically: true, encoding: .utf8)
        let file = folder.appendingPathComponent("network_security_config.xml")
        try xml.write(to: file, atomically: true, encoding: .utf8)
        return try Configuration.load(contentsOf: file.path, anchors: try TrustAnchors(certificates: [Fixtures.rsaRoot]),
                                      publicSuffixes: Fixtures.psl, certificateTransparencyLogs: logs)
    }

    static func requiresCT(_ configuration: Configuration, _ host: String?) throws -> Bool {
        var validation = configuration.trustManager.defaultValidationPolicy
        if let host, let policy = try configuration.trustManager.policy(for: host) { validation = policy.validationPolicy }
        return validation.certificateTransparency != nil
    }

    /// AOSP's `testCertificateTransparencyDomainConfig`, over a file with the structure of its
    /// `res/xml/ct_domains.xml` (tests/NetworkSecurityConfigTest, aosp-mirror/platform_frameworks_base
    /// d618c46): base-config enables CT; a domain with system anchors inherits it; a domain whose
    /// own anchors are the user store or an inline (`@raw`) file has it off unless it says so itself.
    @Test("AOSP testCertificateTransparencyDomainConfig: inherited from base-config, off for user and inline anchors unless explicit")
    func aospDomainConfig() throws {
        let configuration = try Self.android("""
            <?xml version="1.0" encoding="utf-8"?>
            <network-security-config>
              <base-config><certificateTransparency enabled="true" /></base-config>
              <domain-config><domain>android.com</domain>
                <trust-anchors><certificates src="system" /></trust-anchors></domain-config>
              <domain-config><domain>subdomain_user.android.com</domain>
                <trust-anchors><certificates src="user" /></trust-anchors></domain-config>
              <domain-config><certificateTransparency enabled="true" /><domain>subdomain_user_ct.android.com</domain>
                <trust-anchors><certificates src="user" /></trust-anchors></domain-config>
              <domain-config><domain>subdomain_inline.android.com</domain>
                <trust-anchors><certificates src="@raw/ca_certs_pem" /></trust-anchors></domain-config>
              <domain-config><certificateTransparency enabled="true" /><domain>subdomain_inline_ct.android.com</domain>
                <trust-anchors><certificates src="@raw/ca_certs_pem" /></trust-anchors></domain-config>
            </network-security-config>
            """)
        #expect(try Self.requiresCT(configuration, nil))
        #expect(try Self.requiresCT(configuration, "android.com"))
        #expect(try !Self.requiresCT(configuration, "subdomain_user.android.com"))
        #expect(try Self.requiresCT(configuration, "subdomain_user_ct.android.com"))
        #expect(try !Self.requiresCT(configuration, "subdomain_inline.android.com"))
        #expect(try Self.requiresCT(configuration, "subdomain_inline_ct.android.com"))
    }

    /// AOSP's `testCertificateTransparencyUserConfig`, over a file shaped as its `res/xml/ct_users.xml`.
    @Test("AOSP testCertificateTransparencyUserConfig: base-config's user anchors turn CT off for it and what inherits; an explicit element turns it on")
    func aospUserConfig() throws {
        let configuration = try Self.android("""
            <network-security-config>
              <base-config><trust-anchors><certificates src="user" /></trust-anchors></base-config>
              <domain-config><domain>android.com</domain></domain-config>
              <domain-config><certificateTransparency enabled="true" /><domain>subdomain.android.com</domain></domain-config>
            </network-security-config>
            """)
        #expect(try !Self.requiresCT(configuration, nil))
        #expect(try !Self.requiresCT(configuration, "android.com"))
        #expect(try Self.requiresCT(configuration, "subdomain.android.com"))
    }

    @Test("a bare element means disabled (enabled defaults to false), overriding an enabled parent; nothing said means the platform default, off here")
    func bareElementAndDefault() throws {
        let configuration = try Self.android("""
            <network-security-config>
              <base-config><certificateTransparency enabled="true" /></base-config>
              <domain-config><domain>android.com</domain><certificateTransparency />
                <domain-config><domain>child.android.com</domain></domain-config></domain-config>
            </network-security-config>
            """)
        #expect(try !Self.requiresCT(configuration, "android.com"))
        #expect(try !Self.requiresCT(configuration, "child.android.com"))
        #expect(try Self.requiresCT(configuration, "other.android.com") == true)
        let silent = try Self.android("<network-security-config><domain-config><domain>android.com</domain></domain-config></network-security-config>")
        #expect(try !Self.requiresCT(silent, nil) && !Self.requiresCT(silent, "android.com"))
    }

    @Test("an imported CT requirement is Chrome's on every anchor's paths, and without log lists the file is refused at load")
    func androidRequirementAndLists() throws {
        let xml = """
            <network-security-config><domain-config><certificateTransparency enabled="true" /><domain>example.test</domain>
              <trust-anchors><certificates src="@raw/ca_certs_pem" /></trust-anchors></domain-config></network-security-config>
            """
        let requirement = try #require(try Self.android(xml).trustManager.policy(for: "example.test")?.validationPolicy.certificateTransparency)
        #expect(requirement.policy == .chrome)
        #expect(requirement.scope == .everyAnchor)
        #expect(throws: PincheckError.self) { try Self.android(xml, logs: nil) }
        // The private chain with no SCT is refused there, with the CT reason; with the logs of an
        // undated (here: empty) set of lists, CT cannot be judged, and that fails closed too.
        let verdict = try Self.android(xml, logs: try CTScenario.known()).trustManager.evaluate(Self.unlogged, host: "example.test", at: Fixtures.time)
        #expect(verdict.failureCodes == [.ctNotCompliant])
        let undated = try Self.android(xml).trustManager.evaluate(Self.logged, host: "example.test", at: Fixtures.time)
        #expect(undated.failureCodes == [.ctUnenforceable])
    }

    @Test("a nested domain-config inherits what its parent sets after it: pins and CT resolved once the file is read, as Android's builders do")
    func inheritanceIsOrderFree() throws {
        let pin = Fixtures.referencePins["rsa-intermediate"]!.dropFirst("sha256/".count)
        let configuration = try Self.android("""
            <network-security-config>
              <domain-config><domain>example.test</domain>
                <domain-config><domain>www.example.test</domain></domain-config>
                <certificateTransparency enabled="true" />
                <pin-set><pin digest="SHA-256">\(pin)</pin><pin digest="SHA-256">\(String(repeating: "A", count: 43))=</pin></pin-set>
              </domain-config>
            </network-security-config>
            """)
        let child = try #require(try configuration.trustManager.policy(for: "www.example.test"))
        #expect(child.pinSets.count == 1)
        #expect(child.validationPolicy.certificateTransparency != nil)
    }
}
