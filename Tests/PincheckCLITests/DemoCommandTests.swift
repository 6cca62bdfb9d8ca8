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
        for word in ["good", "expired", "another host", "self-signed", "pinned intermediate", "rotated", "attacker"] {
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

    @Test("the table and the exit code")
    func table() throws {
        let result = CLIFixtures.run(["demo"])
        #expect(result.status == 0)
        #expect(result.output.contains("10 of 10 scenarios gave the expected verdict."))
        let json = CLIFixtures.run(["demo", "--json"])
        #expect(json.status == 0)
        #expect(json.output.contains("\"asExpected\" : true"))
        #expect(!json.output.contains("\"asExpected\" : false"))
    }
}
