import Foundation
import ServerTrust
import Testing
import TrustEvaluator

private typealias F = CLIFixtures

/// One verdict, one answer: the command's JSON, the challenge adapter and the engine's verdict
/// agree because all of them answer through `Disposition(serverTrust:)`.
@Suite("one disposition everywhere")
struct DispositionAgreementTests {
    static let configuration = """
        { "version": 1, "allHostsMustBeEvaluated": false, "anchors": ["CERTS/rsa-root.pem"],
          "hosts": [ { "pattern": "pinned.example.test", "pins": ["PIN", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="] } ] }
        """

    @Test("an unlisted host whose default validation fails is cancelled by the engine, the adapter and the command alike",
          arguments: [
            ("rsa-good", "www.example.test", "performDefaultHandling", "unlistedDefaultValidation"),
            ("rsa-wrong-host", "www.example.test", "cancelAuthenticationChallenge", "unlistedDefaultValidation"),
            ("attacker", "www.example.test", "cancelAuthenticationChallenge", "unlistedDefaultValidation"),
          ])
    func unlistedHost(chain: String, host: String, disposition: String, coverage: String) throws {
        let pin = try ConfigAndLintCommandTests.pin("rsa-intermediate")
        let path = try ConfigAndLintCommandTests.write(Self.configuration.replacingOccurrences(of: "PIN", with: pin))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let time = Date(timeIntervalSince1970: 1_906_502_400)  // 2030-06-01T00:00:00Z, as F.at

        let command = F.run(["verify", F.path("chains/\(chain).pem"), "--config", path, "--host", host, "--json"] + F.at)
        let json = try F.json(command.output)
        #expect(json["disposition"] as? String == disposition)
        #expect(json["coverage"] as? String == coverage)

        let manager = try Configuration.load(contentsOf: path).trustManager
        let served = try Certificate.load(contentsOf: F.path("chains/\(chain).pem"))
        let verdict = try manager.evaluate(served, host: host, at: time)
        #expect(Disposition(serverTrust: verdict).name == disposition)
        #expect(verdict.coverage.rawValue == coverage)

        let adapter = ChallengeAdapter(trustManager: manager, now: { time })
        let challenge = Challenge(protectionSpace: ProtectionSpace(
            host: host, port: 443, protocol: "https", authenticationMethod: .serverTrust, serverTrust: PeerTrust(servedChain: served)))
        #expect(adapter.decide(challenge).disposition.name == disposition)
        #expect(command.status == (disposition == "cancelAuthenticationChallenge" ? 1 : 0))
    }
}
