import Foundation
import Testing
@testable import PincheckCLI
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats
import PincheckTestSupport

/// The "Rotating pins" walk-through (a DocC article of TrustEvaluator), run as written (paths made absolute, the key file
/// made unique): plan's verdicts and output, keygen, sign, and the app applying the signed update.
@Suite("Rotating pins article, as written", .serialized)
struct ReadmeRotationTests {
    typealias F = CLIFixtures
    static let repository = URL(fileURLWithPath: F.path("")).deletingLastPathComponent().path

    static let article = "/Sources/TrustEvaluatorFormats/TrustEvaluatorFormats.docc/RotatingPins.md"

    /// The article's `$ swift run pincheck …` lines.
    static func commands() throws -> [String] {
        let section = try String(contentsOfFile: repository + article, encoding: .utf8)
        return section.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "swift run pincheck ") else { return nil }
            return String(line[range.upperBound...]).components(separatedBy: "   #").first!.trimmingCharacters(in: .whitespaces)
        }
    }

    static func arguments(_ command: String, key: String, signature: String) -> [String] {
        command.split(separator: " ").map { word in
            var word = String(word)
            if word.hasPrefix("Examples/") || word.hasPrefix("Certificates/") { word = repository + "/" + word }
            return word.replacingOccurrences(of: "/tmp/pincheck-update.key", with: key).replacingOccurrences(of: "/tmp/pincheck-update.sig", with: signature)
        }
    }

    @Test("plan, keygen and sign as the article shows them; the app accepts what was signed")
    func walkThrough() throws {
        let commands = try Self.commands()
        #expect(commands.count == 3, "\(commands)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("update.key").path, signature = folder.appendingPathComponent("update.sig").path

        let plan = F.run(Self.arguments(commands[0], key: key, signature: signature))
        #expect(plan.status == 1)
        let shown = try String(contentsOfFile: Self.repository + Self.article, encoding: .utf8)
        for line in plan.output.split(separator: "\n") { #expect(shown.contains(String(line)), "the article shows \(line)") }

        let keygen = F.run(Self.arguments(commands[1], key: key, signature: signature))
        #expect(keygen.status == 0)
        let verification = try PinSetVerificationKey(base64: keygen.output)
        let sign = F.run(Self.arguments(commands[2], key: key, signature: signature))
        #expect(sign.status == 0, "\(sign.errors)")
        #expect(sign.output.hasPrefix("signed"))

        let update = Self.repository + "/Examples/Rotation/update.json"
        let compiledIn = try Configuration.load(contentsOf: Self.repository + "/Examples/Rotation/app.json").trustManager
        let manager = UpdatableTrustManager(compiledIn: compiledIn, keys: [verification], baseDirectory: Self.repository + "/Examples/Rotation", at: TestPKI.time)
        let renewed = [TestPKI.certificate("rsa-leaf-rotated"), TestPKI.certificate("rsa-intermediate")]
        #expect(try !manager.evaluate(renewed, host: "www.example.test", at: TestPKI.time).isTrusted, "the compiled-in leaf pin refuses the renewal")
        try manager.apply(document: Array(try Data(contentsOf: URL(fileURLWithPath: update))),
                          signature: Array(try Data(contentsOf: URL(fileURLWithPath: signature))), at: TestPKI.time)
        #expect(try manager.evaluate(renewed, host: "www.example.test", at: TestPKI.time).isTrusted, "the update's pins accept it")
        #expect(try manager.evaluate(TestPKI.chain("ec-good"), host: "www.example.test", at: TestPKI.time).isTrusted, "and the CA move")
    }
}
