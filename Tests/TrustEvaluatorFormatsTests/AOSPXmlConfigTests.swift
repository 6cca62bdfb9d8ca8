import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// AOSP's `XmlConfigTests` (frameworks/base, tests/NetworkSecurityConfigTest), transcribed: the
/// test's own `res/xml` fixtures from `../shared/peers/fixtures/android/`, loaded by Pincheck's
/// importer, and every connection the AOSP test asserts, with its answer.
///
/// The AOSP test connects to real hosts through Android's system store; here the same structure
/// runs on the test PKI, with these substitutions made in each fixture's text:
/// - `android.com` → `example.test`, `developer.android.com` → `www.example.test` (both names of
///   rsa-leaf, under the RSA root), `google.com` → `www.allowed.test` (rsa-nc-leaf, also under the RSA root);
/// - the system store → the RSA root alone (the loader's `anchors:`, as `--ca-file` stands in for it);
/// - the pin that matches android.com's chain (`od4Ex…`) → the RSA intermediate's pin; the pins
///   that must not match (`1HIpactk…`, `aaaa…`) stay as they are, and match nothing here either;
/// - `res/raw/ca_certs_pem` and `ca_certs_der` → the RSA and ECDSA roots (two anchors, as AOSP's two CAs).
///
/// Where Android checks something Pincheck does not model (cleartext traffic, HSTS) or a debug
/// build (debug-overrides), the README's Android rows say so; those assertions are not transcribed.
@Suite("AOSP: NetworkSecurityConfigTest's XmlConfigTests, transcribed", .serialized, SharedData.requires("peers/fixtures/android"))
struct AOSPXmlConfigTests {
    static let fixtures = SharedData.url("peers/fixtures/android/res/xml")
    static let goodPin = "od4ExHUXm9LayTtm8sgxJsmooHjLt2O1wdxiaq7+P9g="

    /// The app as AOSP's test builds it: `res/xml/NAME.xml` (substituted) beside `res/raw/`.
    struct App {
        let configuration: Configuration
        var manager: TrustManager { configuration.trustManager }

        /// Whether a TLS connection to `host` would be allowed (AOSP's assertConnectionSucceeds/Fails).
        func connects(_ host: String) throws -> Bool {
            let chain = host == "www.allowed.test" ? Fixtures.chain("rsa-nc-good") : Fixtures.chain("rsa-good")
            return try manager.evaluate(chain, host: host, at: Fixtures.time).allowsConnection
        }

        /// The pins of the policy `host` gets (empty for an unpinned or unlisted host).
        func pins(_ host: String) throws -> [PinSet] { try manager.policy(for: host)?.pinSets ?? [] }

        var hasPerDomainConfigs: Bool { !configuration.hosts.isEmpty }
    }

    static func load(_ name: String) throws -> App {
        let app = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-aosp-\(UUID().uuidString)")
        let xml = app.appendingPathComponent("res/xml"), raw = app.appendingPathComponent("res/raw")
        try FileManager.default.createDirectory(at: xml, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: raw, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: app) }
        let roots = [Fixtures.rsaRoot, Fixtures.ecRoot]
        try roots.map(\.pemEncoded).joined().write(to: raw.appendingPathComponent("ca_certs_pem.pem"), atomically: true, encoding: .utf8)
        try Data(roots.flatMap(\.derBytes)).write(to: raw.appendingPathComponent("ca_certs_der.der"))

        var text = try String(contentsOf: fixtures.appendingPathComponent("\(name).xml"), encoding: .utf8)
        for (from, to) in [("developer.android.com", "www.example.test"), ("android.com", "example.test"), ("google.com", "www.allowed.test"),
                           (goodPin, String(Fixtures.referencePins["rsa-intermediate"]!.dropFirst("sha256/".count)))] {
            text = text.replacingOccurrences(of: from, with: to)
        }
        let file = xml.appendingPathComponent("\(name).xml").path
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let system = try TrustAnchors(certificates: [Fixtures.rsaRoot])
        return App(configuration: try Configuration.load(contentsOf: file, anchors: system, publicSuffixes: Fixtures.psl))
    }

    @Test("the fixtures are there (../shared/peers)")
    func fixturesPresent() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.path)
        #expect(names.filter { $0.hasSuffix(".xml") }.count >= 20)
    }

    @Test("testEmptyConfigFile: no per-domain configs, no pins, the system store for every host")
    func emptyConfigFile() throws {
        let app = try Self.load("empty_config")
        #expect(!app.hasPerDomainConfigs)
        #expect(try app.pins("unlisted.test").isEmpty)
        #expect(try app.connects("example.test") && app.connects("www.example.test") && app.connects("www.allowed.test"))
    }

    @Test("testEmptyAnchors: an empty <trust-anchors> in base-config trusts nothing")
    func emptyAnchors() throws {
        let app = try Self.load("empty_trust")
        #expect(!app.hasPerDomainConfigs)
        #expect(try !app.connects("example.test") && !app.connects("www.example.test") && !app.connects("www.allowed.test"))
    }

    @Test("testBasicDomainConfig: only the listed domain has anchors")
    func basicDomainConfig() throws {
        let app = try Self.load("domain1")
        #expect(app.hasPerDomainConfigs)
        #expect(try app.pins("example.test").isEmpty)
        #expect(try app.connects("example.test"))
        #expect(try !app.connects("www.example.test"))
        #expect(try !app.connects("www.allowed.test"))
    }

    @Test("testBasicPinning: the pinned domain connects with its pin; others use the system store")
    func basicPinning() throws {
        let app = try Self.load("pins1")
        #expect(try !app.pins("example.test").isEmpty)
        #expect(try app.connects("example.test"))
        #expect(try app.connects("www.allowed.test"))
    }

    @Test("testExpiredPin: an expired pin-set no longer pins")
    func expiredPin() throws {
        let app = try Self.load("expired_pin")
        #expect(try !app.pins("example.test").isEmpty)
        #expect(try app.connects("example.test"))
    }

    @Test("testOverridesPins: a chain to an overridePins anchor connects although no pin matches")
    func overridesPins() throws {
        let app = try Self.load("override_pins")
        #expect(try !app.pins("example.test").isEmpty)
        #expect(try app.connects("example.test"))
    }

    @Test("testBadPin: a pin that matches nothing refuses the domain, not the others")
    func badPin() throws {
        let app = try Self.load("bad_pin")
        #expect(try !app.pins("example.test").isEmpty)
        #expect(try !app.connects("example.test"))
        #expect(try app.connects("www.allowed.test"))
    }

    @Test("testMultipleDomains: one domain-config, two domains, one policy")
    func multipleDomains() throws {
        let app = try Self.load("multiple_domains")
        #expect(app.hasPerDomainConfigs)
        #expect(try app.pins("example.test").isEmpty)
        #expect(try app.connects("example.test") && app.connects("www.allowed.test"))
        #expect(try !app.connects("www.example.test"))
    }

    @Test("testMultipleDomainConfigs: two domain-configs, both connect")
    func multipleDomainConfigs() throws {
        let app = try Self.load("multiple_configs")
        #expect(app.configuration.hosts.count == 2)
        #expect(try app.connects("example.test") && app.connects("www.allowed.test"))
    }

    @Test("testIncludeSubdomains: includeSubdomains covers the subdomain, nothing else")
    func includeSubdomains() throws {
        let app = try Self.load("subdomains")
        #expect(try app.connects("example.test") && app.connects("www.example.test"))
        #expect(try !app.connects("www.allowed.test"))
    }

    @Test("testAttributes: cleartextTrafficPermitted and hstsEnforced load (Pincheck judges TLS only)")
    func attributes() throws {
        let app = try Self.load("attributes")
        #expect(!app.hasPerDomainConfigs)
        #expect(try app.connects("example.test"))
    }

    @Test("testResourcePemCertificateSource / testResourceDerCertificateSource: @raw anchors for the domain only", arguments: ["resource_anchors_pem", "resource_anchors_der"])
    func resourceCertificateSource(_ name: String) throws {
        let app = try Self.load(name)
        #expect(try app.connects("example.test"))
        #expect(try !app.connects("www.example.test"))
        #expect(try !app.connects("www.allowed.test"))
    }

    @Test("testNestedDomainConfigs: the child inherits its parent's anchors and adds pins")
    func nestedDomainConfigs() throws {
        let app = try Self.load("nested_domains")
        #expect(app.hasPerDomainConfigs)
        #expect(try app.pins("example.test").isEmpty)
        #expect(try !app.pins("www.example.test").isEmpty)
        #expect(try app.connects("example.test") && app.connects("www.example.test"))
    }

    @Test("testDebugOverridesDisabled: debug-overrides do nothing in a release build")
    func debugOverridesDisabled() throws {
        let app = try Self.load("debug_basic")
        #expect(try !app.connects("example.test") && !app.connects("www.example.test"))
    }

    @Test("testBadConfig0…5: each is refused at load time", arguments: ["bad_config0", "bad_config1", "bad_config2", "bad_config3", "bad_config4", "bad_config5"])
    func badConfig(_ name: String) throws {
        #expect(throws: PincheckError.self) { try Self.load(name) }
    }

    @Test("testDomainWhitespaceTrimming: domains and pins are trimmed")
    func domainWhitespaceTrimming() throws {
        let app = try Self.load("domain_whitespace")
        #expect(try !app.pins("example.test").isEmpty && !app.pins("www.example.test").isEmpty)
        #expect(try app.connects("example.test") && app.connects("www.example.test"))
    }

    // MARK: NetworkSecurityConfigTests (the same folder): its configurations as the nsc_* fixtures

    @Test("NetworkSecurityConfigTests: every connection each configuration allows or refuses", arguments: [
        ("nsc_testEmptyConfig", ["example.test": false]),
        ("nsc_testEmptyPerNetworkSecurityConfig", ["example.test": false, "www.example.test": false, "www.allowed.test": true]),
        ("nsc_testBadPin", ["example.test": false, "www.allowed.test": true]),
        ("nsc_testGoodPin", ["example.test": true, "www.example.test": true]),
        ("nsc_testOverridePins", ["example.test": true]),
        ("nsc_testMostSpecificNetworkSecurityConfig", ["example.test": false, "www.example.test": true]),
        ("nsc_testSubdomainIncluded_incl", ["example.test": true, "www.example.test": true]),
        ("nsc_testSubdomainIncluded_noincl", ["example.test": true, "www.example.test": false]),
        ("nsc_testWithUrlConnection", ["example.test": true]),
    ])
    func networkSecurityConfigTests(_ name: String, _ expected: [String: Bool]) throws {
        let app = try Self.load(name)
        for (host, connects) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(try app.connects(host) == connects, "\(name): \(host)")
        }
    }
}
