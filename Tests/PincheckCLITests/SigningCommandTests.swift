import Foundation
import Testing
@testable import PincheckCLI
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats
import PincheckTestSupport

/// `pincheck keygen` and `pincheck sign`: the key an app embeds verifies what sign signed.
@Suite("pincheck keygen and sign")
struct SigningCommandTests {
    typealias F = CLIFixtures

    @Test("keygen writes a 0600 key and prints the key an app embeds; sign checks the update, then signs it")
    func keygenAndSign() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-sign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("update.key").path
        let keygen = F.run(["keygen", "--out", key])
        #expect(keygen.status == 0)
        let verification = try PinSetVerificationKey(base64: keygen.output)
        #expect(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int == 0o600)
        #expect(F.run(["keygen", "--out", key]).status == 2, "never overwrites a key")

        let update = folder.appendingPathComponent("update.json").path
        let pin = try CheckCommandTests.pin("rsa-intermediate"), backup = try CheckCommandTests.pin("attacker-root")
        try #"{ "serial": 4, "expires": "2031-01-01T00:00:00Z", "configuration": { "version": 1, "anchors": ["ROOT"], "hosts": [ { "pattern": "www.example.test", "pins": ["\#(pin)", "\#(backup)"] } ] } }"#
            .replacingOccurrences(of: "ROOT", with: F.path("rsa-root.pem")).write(toFile: update, atomically: true, encoding: .utf8)
        // Without --out the signature goes to standard output; with it, to a new file.
        let printed = F.run(["sign", update, "--key", key, "--at", "2030-06-01"])
        #expect(printed.status == 0, "\(printed.errors)")
        #expect(printed.output.trimmingCharacters(in: .whitespacesAndNewlines).count == 88, "base64 of 64 bytes")
        let sign = F.run(["sign", update, "--key", key, "--at", "2030-06-01", "--out", update + ".sig"])
        #expect(sign.status == 0, "\(sign.errors)")
        #expect(sign.output.contains("serial 4") && sign.output.contains("verification key: \(verification)"))
        #expect(try String(contentsOfFile: update + ".sig", encoding: .utf8) == printed.output, "Ed25519 signatures are deterministic")

        // What the app does with the two files.
        let manager = UpdatableTrustManager(compiledIn: TrustManager(), keys: [verification], at: TestPKI.time)
        try manager.apply(document: Array(try Data(contentsOf: URL(fileURLWithPath: update))),
                          signature: Array(try Data(contentsOf: URL(fileURLWithPath: update + ".sig"))), at: TestPKI.time)
        #expect(manager.serial == 4)
        #expect(try manager.evaluate(TestPKI.chain("rsa-good"), host: "www.example.test", at: TestPKI.time).matchedPins.map(\.depth) == [1])

        // An update that would be refused is never signed.
        let expired = folder.appendingPathComponent("expired.json").path
        try #"{ "serial": 5, "expires": "2020-01-01", "configuration": { "version": 1, "hosts": [] } }"#.write(toFile: expired, atomically: true, encoding: .utf8)
        let refused = F.run(["sign", expired, "--key", key, "--at", "2030-06-01"])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("update.expired"))
        #expect(!FileManager.default.fileExists(atPath: expired + ".sig"))
    }
}
