import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// `lint` on CT requirements: one that can never apply, and log lists too old (or soon too old)
/// for the policy.
@Suite("Certificate Transparency in lint")
struct CTLintTests {
    /// The findings of a one-host file whose `certificateTransparency` is `ct`, anchored on `anchors`,
    /// with the test logs' list dated `listAge` days before the lint time.
    static func findings(_ ct: String, anchors: String = #"["rsa-root.pem"]"#, listAge: Int) throws -> [LintFinding] {
        let json = """
            { "version": 1, "anchors": \(anchors), "hosts": [
              { "pattern": "www.example.test", "pins": ["\(LintTests.pinA)", "\(LintTests.pinB)"], "certificateTransparency": \(ct) } ] }
            """
        let logs = CertificateTransparency.Logs([try TestCT.logList(CTScenario.logs, since: CTConfigurationTests.since,
                                                                    timestamp: Fixtures.time.addingTimeInterval(Double(-86_400 * listAge)))])
        return try Configuration.decode(Data(json.utf8), source: "test.json", baseDirectory: Fixtures.root.path, publicSuffixes: Fixtures.psl,
                                        certificateTransparencyLogs: logs).lint(at: Fixtures.time)
    }

    static func codes(_ findings: [LintFinding]) -> [String: LintFinding.Level] {
        Dictionary(findings.map { ($0.code, $0.level) }, uniquingKeysWith: { first, _ in first })
    }

    @Test("a policy scoped to public anchors on a host whose anchors are all private never applies: a warning; every-anchor, or the system store, has none")
    func neverApplies() throws {
        #expect(Self.codes(try Self.findings(#"{ "policy": "chrome" }"#, listAge: 1)) == ["ct-never-applies": .warning])
        #expect(try Self.findings(#"{ "policy": "chrome", "scope": "every-anchor" }"#, listAge: 1).isEmpty)
        #expect(try Self.findings(#"{ "policy": "chrome" }"#, anchors: #"["@system", "rsa-root.pem"]"#, listAge: 1).isEmpty)
    }

    @Test("lists older than Chrome's 70 days: an error when the host is then refused, a warning when it is allowed or report-only; Apple's policy has no age limit")
    func staleLists() throws {
        let enforced = try Self.findings(#"{ "policy": "chrome", "scope": "every-anchor" }"#, listAge: 71)
        #expect(Self.codes(enforced) == ["ct-lists-stale": .error])
        #expect(enforced.first?.message.contains("refused") == true)
        #expect(Self.codes(try Self.findings(#"{ "policy": "chrome", "scope": "every-anchor", "whenUnenforceable": "allow" }"#, listAge: 71))
                == ["ct-lists-stale": .warning])
        #expect(Self.codes(try Self.findings(#"{ "policy": "chrome", "scope": "every-anchor", "enforcement": "report-only" }"#, listAge: 71))
                == ["ct-lists-stale": .warning])
        #expect(try Self.findings(#"{ "policy": "apple", "scope": "every-anchor" }"#, listAge: 400).isEmpty)
        // Exactly 70 days old, the lists are still young enough, as the evaluation judges them.
        #expect(Self.codes(try Self.findings(#"{ "policy": "chrome", "scope": "every-anchor" }"#, listAge: 70)) == ["ct-lists-expiring": .warning])
    }

    @Test("lists that become too old within the lint's days: a warning naming the day")
    func expiringLists() throws {
        let findings = try Self.findings(#"{ "policy": "chrome", "scope": "every-anchor" }"#, listAge: 50)
        #expect(Self.codes(findings) == ["ct-lists-expiring": .warning])
        #expect(findings.first?.message.contains("in 20 days") == true)
        #expect(try Self.findings(#"{ "policy": "chrome", "scope": "every-anchor" }"#, listAge: 30).isEmpty)
    }
}
