import ArgumentParser
import FoundationEssentials
import TrustEvaluator
import PincheckTLS

/// `pincheck demo`: the engine on its own test PKI, offline, with a bundled policy.
struct Demo: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        _superCommandName: Pincheck.name,
        abstract:
            "Serve bundled scenarios (good, expired, wrong host, self-signed, missing intermediate, pinned CA, rotated key, attacks, a revoked stapled OCSP response) from local TLS servers and check each through a real handshake.",
        discussion:
            "Needs no network: the servers listen on 127.0.0.1 (ephemeral ports) and stop when done. Exits 0 when every scenario gives its expected verdict, 1 otherwise, 3 when a local server or handshake fails."
    )

    @OptionGroup var output: OutputOptions

    func execute(_ console: Console) throws -> ExitStatus {
        let outcomes: [DemoOutcome]
        do {
            outcomes = try DemoScenario.all.map { try $0.run() }
        } catch let error as ProbeError {
            console.line("pincheck demo: a local handshake failed: \(error.code): \(error.message)")
            return .networkFailure
        } catch let error as PincheckError where error.code == .openSSL {
            // A local server that cannot start (no thread, no socket) is the demo's network
            // failure, as its help says: exit 3, not "bad input".
            console.line("pincheck demo: a local server could not start: \(error.code): \(error.message)")
            return .networkFailure
        }
        if output.json {
            for outcome in outcomes {
                console.line(JSONLines.line(DemoJSON(outcome)))
            }
        } else {
            render(outcomes, console)
        }
        return outcomes.allSatisfy(\.asExpected) ? .trusted : .notTrusted
    }

    private func render(_ outcomes: [DemoOutcome], _ console: Console) {
        console.line(
            console.paint("Pincheck demo", .bold) + " — \(outcomes.count) local TLS servers on 127.0.0.1, each checked through a real handshake")
        console.line("anchors: the test RSA and ECDSA roots; host \(DemoScenario.host); time \(Format.timestamp(DemoScenario.time))")
        console.line()
        var table = Table()
        table.add(["#", "scenario", "served from", "policy", "expected", "verdict", "why"].map { console.paint($0, .bold) })
        for (index, outcome) in outcomes.enumerated() {
            let verdict = outcome.verdict.isTrusted ? console.paint("trusted", .green) : console.paint("rejected", .red)
            let why =
                outcome.verdict.isTrusted
                ? outcome.verdict.matchedPins.first.map { "pin matched at depth \($0.depth)" } ?? "chain valid"
                : outcome.verdict.failures.map(\.code.description).joined(separator: ", ")
            let mark = outcome.asExpected ? console.paint("✓", .green) : console.paint("✗ UNEXPECTED", .red)
            table.add([
                "\(index + 1)", outcome.scenario.title, "127.0.0.1:\(outcome.port) \(outcome.protocolVersion)", outcome.scenario.policy.title,
                outcome.scenario.expectTrusted ? "trusted" : "rejected", verdict, "\(why)  \(mark)",
            ])
        }
        table.render().forEach(console.line)
        let good = outcomes.filter(\.asExpected).count
        console.line()
        console.line("\(good) of \(outcomes.count) scenarios gave the expected verdict.")
        console.line()
        Self.legend.forEach(console.line)
        console.line()
        console.line(console.paint("Why each row matters", .bold))
        for (index, outcome) in outcomes.enumerated() {
            let number = String(index + 1)
            console.line(number + String(repeating: " ", count: max(1, 4 - number.count)) + outcome.scenario.lesson)
        }
        console.line()
        Self.nextSteps.forEach(console.line)
    }

    /// What the columns say.
    static let legend = [
        "policy    what the client pins: public-key (the SPKI hash of a CA's or the leaf's key), certificate (the",
        "          whole certificate, AFNetworking's mode), or none (the chain and the host name only)",
        "why       for a trusted row, the pin that matched and its depth in the verified path (0 is the leaf,",
        "          1 the intermediate); for a rejected one, its reason codes (the Reason codes article lists them)",
        "time      the demo's clock is fixed at 2030-06-01 so its certificates give the same verdicts forever;",
        "          real checks use the current time (or --at)",
    ]

    /// Where to go from here.
    static let nextSteps = [
        "Next: pin a real host's CA with its backup —  pincheck pins HOST  prints the pins of the chain it serves,",
        "then  pincheck check HOST --pin sha256/…  judges it as the demo did; the README's \"library in ten lines\"",
        "does the same in Swift.",
    ]
}

struct DemoJSON: Encodable {
    let scenario: String
    let policy: String
    let expectedTrusted: Bool
    let asExpected: Bool
    let port: UInt16
    let verdict: VerdictJSON

    init(_ outcome: DemoOutcome) {
        scenario = outcome.scenario.title
        policy = outcome.scenario.policy.title
        expectedTrusted = outcome.scenario.expectTrusted
        asExpected = outcome.asExpected
        port = outcome.port
        verdict = VerdictJSON(outcome.verdict, requestedHost: DemoScenario.host)
    }
}
