import Foundation
import Testing
@testable import PincheckCLI

@Suite("pincheck verify")
struct VerifyCommandTests {
    typealias F = CLIFixtures

    @Test("a valid chain for its host is trusted, exit 0, with the verified path in the report")
    func trusted() {
        let result = F.run(["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test"] + F.anchors + F.at)
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("TRUSTED"))
        #expect(result.output.contains("Verified path"))
        #expect(result.output.contains("CN=Pincheck Test RSA Root CA"))
    }

    @Test("verify prints check's report: the pins matched, and both certificate lines with key and issuer")
    func sameReportAsCheck() throws {
        let pin = try #require(try PinsCommandTests.referencePins()["rsa-intermediate"])
        let result = F.run(["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test", "--pin", pin] + F.anchors + F.at)
        #expect(result.status == 0)
        #expect(result.output.contains("Pins matched:\n  \(pin)  depth 1  CN=Pincheck Test RSA Intermediate CA"), "\(result.output)")
        #expect(result.output.contains("issuer: CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests"))
        #expect(result.output.contains("RSA 2048 key, expires 2099-12-31"))
        #expect(result.output.contains("Served chain (2 certificates):"), "no connection: the chain is the file's, not 'as sent'")
        #expect(!result.output.contains("Connection:"))
    }

    @Test("--json: each reason says which requirement produced it")
    func reasonRequirementInJSON() throws {
        let result = F.run(["verify", F.path("chains/rsa-rotated.pem"), "--host", "www.example.test",
                            "--pin-cert", F.path("rsa-leaf.pem"), "--json"] + F.anchors + F.at)
        #expect(result.status == 1)
        let reasons = try #require(try F.json(result.output)["reasons"] as? [[String: Any]])
        #expect(reasons.map { $0["code"] as? String } == ["pin.mismatch"])
        #expect(reasons.map { $0["requirement"] as? String } == ["pins"])
    }

    @Test("an expired leaf is not trusted, exit 1, and the reason is named")
    func expired() {
        let result = F.run(["verify", F.path("chains/rsa-expired.pem"), "--host", "www.example.test"] + F.anchors + F.at)
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("NOT TRUSTED"))
        #expect(result.output.contains("chain.expired"))
    }

    @Test("without --host no name is checked, and the output says so")
    func noHost() {
        let result = F.run(["verify", F.path("chains/rsa-wrong-host.pem")] + F.anchors + F.at)
        #expect(result.status == 0)
        #expect(result.output.contains("no host name checked"))
        #expect(result.output.contains("host.not-checked"))
    }

    @Test("a pin mismatch lists the verified path's pins and the configured pins, and shows the path built")
    func pinMismatch() throws {
        let result = F.run(["verify", F.path("chains/rsa-rotated.pem"), "--host", "www.example.test",
                            "--pin-cert", F.path("rsa-leaf.pem")] + F.anchors + F.at)
        #expect(result.status == 1)
        #expect(result.output.contains("pin.mismatch"))
        let pins = try String(contentsOfFile: F.path("pins.txt"), encoding: .utf8)
        let leafPin = try #require(pins.split(separator: "\n").first { $0.hasPrefix("rsa-leaf ") }?.split(separator: " ").last)
        #expect(result.output.contains(String(leafPin)))
        #expect(result.output.contains("Path built (ends at a trust anchor), refused for the reasons above:"), "the path the pins were compared with")
        #expect(!result.output.contains("✓ pinned"))
    }

    @Test("JSON output for a trusted chain has the contract's fields")
    func jsonTrusted() throws {
        let result = F.run(["verify", F.path("chains/ec-good.pem"), "--host", "www.example.test", "--json",
                            "--pin-cert", F.path("ec-intermediate.pem")] + F.anchors + F.at)
        #expect(result.status == 0)
        let json = try F.json(result.output)
        #expect(json["trusted"] as? Bool == true)
        #expect(json["disposition"] as? String == "useCredential")
        #expect((json["reasons"] as? [Any])?.isEmpty == true)
        let chain = try #require(json["chain"] as? [[String: Any]])
        #expect(chain.count == 3)
        for certificate in chain {
            for key in ["subject", "issuer", "notBefore", "notAfter", "spkiSHA256"] {
                #expect(certificate[key] != nil, "chain entries carry \(key)")
            }
            #expect((certificate["spkiSHA256"] as? String)?.hasPrefix("sha256/") == true)
        }
        #expect((json["served"] as? [Any])?.count == 2)
        let matched = try #require(json["matchedPins"] as? [[String: Any]])
        #expect(matched.first?["depth"] as? Int == 1)
    }

    @Test("JSON output for an untrusted chain has a disposition of cancel and coded reasons")
    func jsonUntrusted() throws {
        let result = F.run(["verify", F.path("chains/rsa-wrong-host.pem"), "--host", "www.example.test", "--json"] + F.anchors + F.at)
        #expect(result.status == 1)
        let json = try F.json(result.output)
        #expect(json["trusted"] as? Bool == false)
        #expect(json["disposition"] as? String == "cancelAuthenticationChallenge")
        let reasons = try #require(json["reasons"] as? [[String: Any]])
        #expect(reasons.first?["code"] as? String == "host.mismatch")
        #expect((reasons.first?["message"] as? String)?.isEmpty == false)
        #expect((json["chain"] as? [Any])?.isEmpty == true)
    }

    @Test("malformed input exits 2 with a message naming the file",
          arguments: ["malformed/empty.pem", "malformed/garbage.pem", "malformed/bad-der-in-pem.pem",
                      "malformed/truncated.der", "malformed/truncated.pem", "malformed/private-key.pem",
                      "malformed/not-pem.txt", "malformed/second-cert-broken.pem", "does-not-exist.pem"])
    func malformed(file: String) {
        let path = F.path(file)
        let result = F.run(["verify", path, "--host", "www.example.test"] + F.anchors + F.at)
        #expect(result.status == 2)
        #expect(result.errors.contains(path))
        #expect(result.output.isEmpty)
    }

    @Test("a malformed pin, CA file or pinned certificate exits 2 naming it")
    func badPolicyInput() {
        let chain = F.path("chains/rsa-good.pem")
        let badPin = F.run(["verify", chain, "--pin", "sha256/AAAA"] + F.anchors)
        #expect(badPin.status == 2)
        #expect(badPin.errors.contains("sha256/AAAA"))
        let badCA = F.run(["verify", chain, "--ca-file", F.path("malformed/garbage.pem")])
        #expect(badCA.status == 2)
        #expect(badCA.errors.contains("garbage.pem"))
        let badPinCert = F.run(["verify", chain, "--pin-cert", F.path("malformed/private-key.pem")] + F.anchors)
        #expect(badPinCert.status == 2)
        #expect(badPinCert.errors.contains("private-key.pem"))
    }

    @Test("usage errors exit 2, not swift-argument-parser's 64",
          arguments: [["verify"], ["verify", "x.pem", "--mode", "sideways"], ["verify", "x.pem", "--mode", "certificate"],
                      ["verify", "x.pem", "--mode", "none", "--pin", "sha256/x"], ["verify", "x.pem", "--at", "tomorrow"],
                      ["frobnicate"]])
    func usage(arguments: [String]) {
        let result = F.run(arguments)
        #expect(result.status == 2)
        #expect(!result.errors.isEmpty)
    }

    @Test("--help exits 0 and documents the exit codes")
    func help() {
        let result = F.run(["--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("0 trusted"))
        #expect(result.output.contains("2 usage or bad input"))
    }
}

@Suite("--verbose: the libraries' swift-log records on standard error")
struct VerboseLoggingTests {
    @Test("--verbose logs the trust decision with its codes; without it nothing is logged")
    func verbose() throws {
        let arguments = ["verify", CLIFixtures.path("chains/rsa-good.pem"), "--host", "www.example.test",
                         "--ca-file", CLIFixtures.path("rsa-root.pem"), "--pin", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="] + CLIFixtures.at
        let logged = try CLIFixtures.runBinary(arguments + ["--verbose"])
        #expect(logged.status == 1)
        #expect(logged.errors.contains("trust decision"))
        #expect(logged.errors.contains("disposition=cancelAuthenticationChallenge"))
        #expect(logged.errors.contains("pin.mismatch"))
        let quiet = try CLIFixtures.runBinary(arguments)
        #expect(quiet.status == 1)
        #expect(!quiet.errors.contains("trust decision"))
    }
}

/// The subcommand named first is parsed by itself (the quicker start); whatever that parse does
/// not turn into one of Pincheck's commands is answered by the whole tree, as before.
@Suite("a subcommand parsed by itself")
struct SubcommandAloneTests {
    typealias F = CLIFixtures

    @Test("help names the command as pincheck's", arguments: [
        ["verify", "--help"], ["check", "-h"], ["pins", "--help"], ["import", "--help"], ["root-programs", "--help"], ["help", "verify"],
    ])
    func help(_ arguments: [String]) {
        let result = F.run(arguments)
        let name = arguments[0] == "help" ? arguments[1] : arguments.filter { !$0.hasPrefix("-") }.joined(separator: " ")
        #expect(result.status == 0)
        #expect(result.output.contains("USAGE: pincheck \(name)"), "\(result.output.prefix(400))")
    }

    @Test("usage errors keep their one line, code and exit status")
    func usageError() {
        let result = F.run(["verify", "--no-such-option", F.path("chains/rsa-good.pem")])
        #expect(result.status == 2)
        #expect(result.errors.hasPrefix("pincheck: error[input.usage]: Unknown option '--no-such-option'"), "\(result.errors)")
        #expect(result.errors.contains("Usage: pincheck verify"), "\(result.errors)")
    }
}
