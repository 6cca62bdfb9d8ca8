import Foundation
import Testing
@testable import PincheckCLI

@Suite("pincheck demo")
struct DemoCommandTests {
    @Test("every scenario gets its expected verdict")
    func scenarios() throws {
        for scenario in DemoScenario.all {
            let outcome = try scenario.run()
            #expect(outcome.asExpected, "\(scenario.title): \(outcome.verdict.failures)")
            if !scenario.expectTrusted { #expect(!outcome.verdict.failures.isEmpty) }
        }
    }

    @Test("the scenarios cover what the demo promises")
    func coverage() {
        let titles = DemoScenario.all.map(\.title).joined(separator: "|")
        for word in ["good", "expired", "another host", "self-signed", "missing", "pinned intermediate", "rotated", "attacker", "revoked"] {
            #expect(titles.contains(word), "a scenario for \(word)")
        }
        #expect(DemoScenario.all.contains { $0.expectTrusted } && DemoScenario.all.contains { !$0.expectTrusted })
    }

    @Test("the embedded certificates are the ones in Certificates/", arguments: DemoCertificates.pem.keys.sorted())
    func embedded(name: String) throws {
        let file = try String(contentsOfFile: CLIFixtures.path("\(name).pem"), encoding: .utf8)
        let embedded = try #require(DemoCertificates.pem[name])
        #expect(embedded.trimmingCharacters(in: .whitespacesAndNewlines) == file.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("the embedded keys are the ones in Certificates/keys/", arguments: DemoCertificates.keys.keys.sorted())
    func embeddedKeys(name: String) throws {
        let file = try String(contentsOfFile: CLIFixtures.path("keys/\(name).key"), encoding: .utf8)
        let embedded = try #require(DemoCertificates.keys[name])
        #expect(embedded.trimmingCharacters(in: .whitespacesAndNewlines) == file.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("the embedded OCSP responses are the ones in Certificates/revocation/", arguments: DemoCertificates.staples.keys.sorted())
    func embeddedStaples(name: String) throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: CLIFixtures.path("revocation/\(name).der")))
        #expect(try DemoScenario.staple(name) == Array(file))
    }

    @Test("the revoked staple reached the evaluator through the handshake, and alone refuses the good chain")
    func revokedStaple() throws {
        let scenario = try #require(DemoScenario.all.first { $0.staple != nil })
        let outcome = try scenario.run()
        #expect(outcome.verdict.failures.map(\.code) == [.revoked], "\(outcome.verdict.failures)")
        var unstapled = scenario
        unstapled.staple = nil
        #expect(try unstapled.run().verdict.isTrusted, "without the staple the same chain and policy are trusted")
    }

    @Test("each scenario went through a real handshake with a local server")
    func handshakes() throws {
        let outcomes = try DemoScenario.all.map { try $0.run() }
        #expect(Set(outcomes.map(\.port)).allSatisfy { $0 > 0 })
        #expect(outcomes.allSatisfy { $0.protocolVersion.hasPrefix("TLSv1.") })
        let missing = try #require(outcomes.first { $0.scenario.title.contains("missing") })
        #expect(missing.verdict.servedChain.count == 1, "the server really sent the leaf alone")
    }

    @Test("the table and the exit code")
    func table() throws {
        let result = CLIFixtures.run(["demo"])
        #expect(result.status == 0)
        #expect(result.output.contains("\(DemoScenario.all.count) of \(DemoScenario.all.count) scenarios gave the expected verdict."))
        #expect(DemoScenario.all.count == 13)
        // The table is explained: a legend, one line per row on why it matters, and the next step.
        // (Checked on this run of the demo: every run blocks a thread of the shared pool for seconds.)
        for line in Demo.legend + Demo.nextSteps { #expect(result.output.contains(line), "\(line)") }
        for scenario in DemoScenario.all { #expect(result.output.contains(scenario.lesson), "\(scenario.title)") }
        #expect(Set(DemoScenario.all.map(\.lesson)).count == DemoScenario.all.count, "every row says something of its own")
        let json = CLIFixtures.run(["demo", "--json"])
        #expect(json.status == 0)
        #expect(!json.output.contains("Why each row matters"), "JSON Lines carry no prose")
        // One line per scenario (JSON Lines), each with the schema version.
        let lines = json.output.split(separator: "\n")
        #expect(lines.count == DemoScenario.all.count)
        for line in lines {
            let object = try CLIFixtures.json(String(line))
            #expect(object["asExpected"] as? Bool == true, "\(line.prefix(120))")
            #expect(object["schema"] as? Int == 1)
        }
    }
}
