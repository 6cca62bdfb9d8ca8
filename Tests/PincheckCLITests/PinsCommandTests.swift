import Foundation
import Testing
@testable import PincheckCLI

@Suite("pincheck pins")
struct PinsCommandTests {
    typealias F = CLIFixtures

    static func referencePins() throws -> [String: String] {
        let text = try String(contentsOfFile: F.path("pins.txt"), encoding: .utf8)
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 { result[String(parts[0])] = String(parts[1]) }
        }
        return result
    }

    @Test("prints the openssl-computed pin of every certificate in a bundle, in order")
    func bundle() throws {
        let result = F.run(["pins", F.path("chains/rsa-deep.pem"), "--at", "2030-06-01"])
        #expect(result.status == 0)
        let pins = try Self.referencePins()
        let expected = ["rsa-deep-leaf", "rsa-deep-intermediate-2", "rsa-deep-intermediate-1"].map { pins[$0]! }
        let printed = result.output.split(separator: "\n").filter { $0.hasPrefix("sha256/") }.map(String.init)
        #expect(printed == expected)
        #expect(result.output.contains("subject  CN=www.example.test"))
        #expect(result.output.contains("25415 days left"))
    }

    @Test("JSON lists subject, issuer, expiry and pin for each certificate")
    func json() throws {
        let result = F.run(["pins", F.path("chains/rsa-good.der"), "--json"])
        #expect(result.status == 0)
        let object = try F.json(result.output)
        #expect(object["schema"] as? Int == 1)
        let array = try #require(object["certificates"] as? [[String: Any]])
        #expect(array.count == 1)
        #expect(array[0]["spkiSHA256"] as? String == (try Self.referencePins())["rsa-leaf"])
        #expect(array[0]["notAfter"] as? String == "2099-12-31T23:59:59Z")
    }

    @Test("a file that is not a certificate exits 2")
    func bad() {
        let result = F.run(["pins", F.path("malformed/not-pem.txt")])
        #expect(result.status == 2)
        #expect(result.errors.contains("not-pem.txt"))
    }
}
