import Foundation
import Testing

/// A few golden runs of the real binary: argument parsing, exit codes and streams end to end.
@Suite("the pincheck binary")
struct BinaryTests {
    typealias F = CLIFixtures

    @Test("exit codes 0, 1 and 2 come out of the process")
    func exitCodes() throws {
        let trusted = try F.runBinary(["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test"] + F.anchors + F.at)
        #expect(trusted.status == 0)
        let untrusted = try F.runBinary(["verify", F.path("chains/self-signed.pem"), "--host", "www.example.test"] + F.anchors + F.at)
        #expect(untrusted.status == 1)
        #expect(untrusted.output.contains("chain.self-signed"))
        let bad = try F.runBinary(["verify", F.path("malformed/truncated.der")])
        #expect(bad.status == 2)
        #expect(bad.errors.contains("truncated.der"))
        let usage = try F.runBinary(["verify", "--no-such-option"])
        #expect(usage.status == 2)
    }

    @Test("demo prints its table and exits 0")
    func demo() throws {
        let result = try F.runBinary(["demo"])
        #expect(result.status == 0)
        #expect(result.output.contains("13 of 13 scenarios gave the expected verdict"))
        #expect(!result.output.contains("\u{1B}["), "no colour when not on a terminal")
    }
}
