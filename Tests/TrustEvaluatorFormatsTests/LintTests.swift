import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("configuration lint")
struct LintTests {
    static func lint(_ json: String, publicRoots: [Certificate] = [], days: Int = 30, at time: Date = Fixtures.time) throws -> [LintFinding] {
        try ConfigurationTests.decode(json).lint(at: time, expiringWithinDays: days, publicRoots: publicRoots)
    }

    static let pinA = Fixtures.certificate("rsa-intermediate").publicKeyPin.description
    static let pinB = Fixtures.certificate("ec-intermediate").publicKeyPin.description

    @Test("a healthy configuration has no findings")
    func healthy() throws {
        #expect(try Self.lint(#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": ["A", "B"] } ] }"#
            .replacingOccurrences(of: "\"A\"", with: "\"\(Self.pinA)\"").replacingOccurrences(of: "\"B\"", with: "\"\(Self.pinB)\"")).isEmpty)
    }

    @Test("each problem is found at its level", arguments: [
        (#"{ "pattern": "a.example.test", "pins": ["A"] }"#, "no-backup-pin", LintFinding.Level.error),
        (#"{ "pattern": "a.example.test", "pins": ["A", "B"], "expires": "2030-05-31" }"#, "pin-set-expired", .error),
        (#"{ "pattern": "a.example.test", "mode": "none" }"#, "no-pins", .warning),
        (#"{ "pattern": "*.example.test", "pins": ["A", "B"] }"#, "deeper-subdomains-unpinned", .warning),
        (#"{ "pattern": "a.example.test", "pins": ["A", "B", "sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA="] }"#, "sha1-pin", .warning),
        (#"{ "pattern": "a.example.test", "pins": ["R", "B"] }"#, "public-root-pin", .warning),
        (#"{ "pattern": "a.example.test", "mode": "certificate", "pinnedCertificates": ["rsa-leaf.pem", "rsa-intermediate.pem"] }"#, "leaf-pin-expiring", .warning),
    ])
    func finding(host: String, code: String, level: LintFinding.Level) throws {
        let json = #"{ "version": 1, "hosts": [ HOST ] }"#.replacingOccurrences(of: "HOST", with: host)
            .replacingOccurrences(of: "\"A\"", with: "\"\(Self.pinA)\"").replacingOccurrences(of: "\"B\"", with: "\"\(Self.pinB)\"")
            .replacingOccurrences(of: "\"R\"", with: "\"\(Fixtures.rsaRoot.publicKeyPin)\"")
        // The leaf expires 2099-12-31: "within 30 days" of 2099-12-15.
        let time = code == "leaf-pin-expiring" ? Date(timeIntervalSince1970: 4_100_457_600) : Fixtures.time
        let findings = try Self.lint(json, publicRoots: [Fixtures.rsaRoot], at: time)
        let match = findings.first { $0.code == code }
        #expect(match?.level == level, "\(findings)")
        #expect(match?.path == "hosts[0]")
    }
}
