import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("Concurrency: one Evaluator and one TrustAnchors shared by many tasks")
struct ConcurrencyTests {
    /// A mix of outcomes, so a race that flips any of them shows.
    static let chains = ["rsa-good", "rsa-expired", "rsa-wrong-host", "with-junk", "unpinned-ca-with-pinned-appended", "ec-good", "rsa-deep"]

    @Test("8 tasks × 50 evaluations give the single-threaded verdicts", arguments: ["none", "publicKey", "certificate"])
    func sharedEvaluator(mode: String) async throws {
        let anchors = try TrustAnchors(certificates: [Fixtures.rsaRoot, Fixtures.ecRoot])
        let pinning: TrustPolicy.Pinning = switch mode {
        case "publicKey": try Fixtures.keyPins("rsa-intermediate", "ec-intermediate", "rsa-deep-intermediate-1")
        case "certificate": try Fixtures.certificatePins("rsa-intermediate", "ec-intermediate", "rsa-deep-intermediate-1")
        default: .none
        }
        let evaluator = Evaluator(policy: Fixtures.policy(pinning, anchors: anchors))
        let served = Self.chains.map(Fixtures.chain)
        let expected = try served.map { try evaluator.evaluate($0, host: Fixtures.host, at: Fixtures.time).summary }
        #expect(expected.contains { $0.isTrusted } && expected.contains { !$0.isTrusted })

        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<50 {
                        let index = (task + round) % served.count
                        let verdict = try evaluator.evaluate(served[index], host: Fixtures.host, at: Fixtures.time)
                        if verdict.summary != expected[index] { mismatches += 1 }
                    }
                    return mismatches
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test("concurrent certificate parsing gives identical certificates and pins")
    func concurrentParsing() async throws {
        let bytes = Array(try #require(FileManager.default.contents(atPath: Fixtures.path("chains/rsa-deep.pem"))))
        let expected = try Certificate.parseBundle(bytes).map(\.publicKeyPin)
        let results = try await withThrowingTaskGroup(of: [PublicKeyPin].self) { group in
            for _ in 0..<8 { group.addTask { try Certificate.parseBundle(bytes).map(\.publicKeyPin) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        #expect(results.allSatisfy { $0 == expected })
    }
}
