import Foundation
import ServerTrust
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("configuration file")
struct ConfigurationTests {
    static func decode(_ json: String) throws(PincheckError) -> Configuration {
        try Configuration.decode(Data(json.utf8), source: "test.json", baseDirectory: Fixtures.root.path,
                                 publicSuffixes: Fixtures.psl)
    }

    static func message(_ json: String) -> String? {
        do { _ = try decode(json); return nil } catch { return error.description }
    }

    static let intermediatePin = Fixtures.certificate("rsa-intermediate").publicKeyPin.description
    static let ecPin = Fixtures.certificate("ec-intermediate").publicKeyPin.description

    @Test("a full configuration decodes into a working trust manager")
    func full() throws {
        let configuration = try Self.decode("""
            { "version": 1, "allHostsMustBeEvaluated": true, "anchors": ["rsa-root.pem", "ec-root.pem"],
              "hosts": [
                { "pattern": "www.example.test", "includeSubdomains": false, "mode": "public-key",
                  "pins": ["\(Self.intermediatePin)", "\(Self.ecPin)"], "enforce": true, "expires": "2099-06-30",
                  "validatesDomainName": true, "allowInvalidCertificates": false,
                  "reportURIs": ["https://reports.example.test/pins"] },
                { "pattern": "*.example.test", "mode": "certificate", "pinnedCertificates": ["ec-intermediate.pem"] } ] }
            """)
        #expect(configuration.hosts.count == 2)
        let manager = configuration.trustManager
        let good = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(good.disposition == .useCredential)
        let wildcard = try manager.evaluate(Fixtures.chain("rsa-good"), host: "api.example.test", at: Fixtures.time)
        #expect(wildcard.disposition == .cancelAuthenticationChallenge, "api.example.test is pinned to the ECDSA intermediate")
        let unlisted = try manager.evaluate(Fixtures.chain("rsa-good"), host: "example.test", at: Fixtures.time)
        #expect(unlisted.disposition == .cancelAuthenticationChallenge)
    }

    @Test("only version, the pattern and the pins are required; defaults fail closed")
    func defaults() throws {
        let configuration = try Self.decode("""
            { "version": 1, "hosts": [ { "pattern": "www.example.test", "pins": ["\(Self.intermediatePin)"] } ] }
            """)
        let entry = try #require(configuration.hosts.first)
        #expect(entry.enforce)
        #expect(entry.expires == nil)
        #expect(configuration.trustManager.allHostsMustBeEvaluated)
        #expect(entry.policy.validationPolicy.anchors === TrustAnchors.system)
        guard case .publicKeys = entry.policy.pinSets.first?.pinning else { Issue.record("public-key mode by default"); return }
    }

    @Test("every configuration error names where it is", arguments: [
        (#"{ "version": 1, "hosts": [], "extra": 1 }"#, "extra: unknown key"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pinz": [] } ] }"#, "hosts[0].pinz: unknown key"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": [] } ] }"#, "hosts[0].pins"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": ["sha256/AAAA"] } ] }"#, "hosts[0].pins[0]"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "mode": "certificate", "pinnedCertificates": ["nope.pem"] } ] }"#, "hosts[0].pinnedCertificates[0]"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "mode": "certificate", "pinnedCertificates": [] } ] }"#, "hosts[0].pinnedCertificates"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "mode": "sideways", "pins": ["x"] } ] }"#, "hosts[0].pins[0]"),
        (#"{ "version": 1, "hosts": [ { "pattern": "co.uk", "includeSubdomains": true, "pins": [] } ] }"#, "hosts[0].pattern"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "expires": "June", "pins": [] } ] }"#, "hosts[0]"),
        (#"{ "version": 2, "hosts": [] }"#, "version"),
        (#"{ "hosts": [] }"#, "version: required key missing"),
        (#"{ "version": 1, "anchors": ["malformed/garbage.pem"], "hosts": [] }"#, "anchors"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "reportURIs": ["http://x"], "pins": [] } ] }"#, "hosts[0]"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "revocation": { "crls": ["x.pem"] } } ] }"#, "hosts[0].revocation.crls[0]"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "revocation": { "crls": ["rsa-leaf.pem"] } } ] }"#, "is labelled CERTIFICATE, not X509 CRL"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "revocation": { "crlScope": "all" } } ] }"#, "hosts[0].revocation.crlScope"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "revocation": { "crl": [] } } ] }"#, "hosts[0].revocation.crl: unknown key"),
        ("not json", "none of the formats Pincheck reads"),
    ])
    func errors(json: String, expected: String) throws {
        let message = try #require(Self.message(json), "must be rejected: \(json)")
        #expect(message.contains(expected), "\(message)")
        #expect(message.hasPrefix("test.json: "))
    }

    @Test("a duplicate pattern is an error")
    func duplicate() throws {
        let message = try #require(Self.message("""
            { "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": ["\(Self.ecPin)"] },
                                       { "pattern": "A.example.test.", "pins": ["\(Self.ecPin)"] } ] }
            """))
        #expect(message.contains("hosts[1].pattern"))
    }

    @Test("backupPins error makes a single enforced pin a load error")
    func backupPinsError() throws {
        let single = #"{ "version": 1, "backupPins": "error", "hosts": [ { "pattern": "a.example.test", "pins": ["PIN"] } ] }"#
            .replacingOccurrences(of: "PIN", with: Self.ecPin)
        #expect(Self.message(single)?.contains("backup pin") == true)
        let reportOnly = #"{ "version": 1, "backupPins": "error", "hosts": [ { "pattern": "a.example.test", "enforce": false, "pins": ["PIN"] } ] }"#
            .replacingOccurrences(of: "PIN", with: Self.ecPin)
        #expect(Self.message(reportOnly) == nil)
    }

    @Test("--ca-file stands in for the system store; anchors the file names itself keep their meaning")
    func anchorOverride() throws {
        let rsaStandIn = try TrustAnchors(certificates: [Fixtures.rsaRoot])
        func decide(_ json: String, anchors: TrustAnchors?) throws -> Disposition {
            try Configuration.decode(Data(json.utf8), baseDirectory: Fixtures.root.path, anchors: anchors, publicSuffixes: Fixtures.psl)
                .trustManager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time).disposition
        }
        let system = #"{ "version": 1, "hosts": [ { "pattern": "www.example.test", "mode": "none" } ] }"#
        #expect(try decide(system, anchors: rsaStandIn) == .useCredential, "the system store is what --ca-file replaces")
        #expect(try decide(system, anchors: try TrustAnchors(certificates: [Fixtures.ecRoot])) == .cancelAuthenticationChallenge)
        let named = #"{ "version": 1, "anchors": ["ec-root.pem"], "hosts": [ { "pattern": "www.example.test", "mode": "none" } ] }"#
        #expect(try decide(named, anchors: nil) == .cancelAuthenticationChallenge)
        #expect(try decide(named, anchors: rsaStandIn) == .cancelAuthenticationChallenge, "the file's own anchors are not replaced")
        let empty = #"{ "version": 1, "anchors": [], "hosts": [ { "pattern": "www.example.test", "mode": "none" } ] }"#
        #expect(try decide(empty, anchors: rsaStandIn) == .cancelAuthenticationChallenge, "an empty list trusts nothing, whatever --ca-file says")
        let withSystem = #"{ "version": 1, "anchors": ["@system", "ec-root.pem"], "hosts": [ { "pattern": "www.example.test", "mode": "none" } ] }"#
        #expect(try decide(withSystem, anchors: rsaStandIn) == .useCredential, "@system beside files is the stand-in too")
    }

    @Test("a missing file is an unreadable-file error naming it")
    func missingFile() {
        do {
            _ = try Configuration.load(contentsOf: "/nonexistent/pincheck.json")
            Issue.record("must throw")
        } catch {
            #expect(error.code == .unreadableFile)
            #expect(error.source == "/nonexistent/pincheck.json")
        }
    }
}
