import Foundation
import ServerTrust
import TrustEvaluator

extension FuzzTargets {
    /// The challenge adapter's inputs: method, failure count, proposed credential, host and a
    /// served chain, all from the fuzzer's bytes. Oracle: a server-trust challenge is never
    /// answered `useCredential` unless the same chain, evaluated directly, is trusted.
    public static func challenge(_ bytes: [UInt8]) {
        guard bytes.count >= 3 else { return }
        let fixture = ChainFixture.shared
        let method = AuthenticationMethod.all[Int(bytes[0]) % AuthenticationMethod.all.count]
        let failures = Int(bytes[1] % 4)
        let hosts = ["www.example.test", "example.test", "other.example.test", "127.0.0.1", "bad host"]
        let host = hosts[Int(bytes[2]) % hosts.count]
        let served = (try? Certificate.parseBundle(Array(bytes.dropFirst(3)), source: "fuzz")) ?? []
        let proposed = bytes[0] & 0x80 != 0 ? Credential(user: "fuzz", password: "secret", persistence: .none) : nil
        let space = ProtectionSpace(
            host: host, port: 443, realm: "fuzz", authenticationMethod: method,
            serverTrust: method == .serverTrust ? PeerTrust(servedChain: served) : nil)
        let challenge = Challenge(protectionSpace: space, proposedCredential: proposed, previousFailureCount: failures)
        for (policy, _) in fixture.policies {
            let adapter = ChallengeAdapter(trustManager: .single(policy), now: { fixture.time })
            let decision = adapter.decide(challenge)
            guard method == .serverTrust, decision.disposition == .useCredential else { continue }
            let direct = try? Evaluator(policy: policy).evaluate(served, host: host, at: fixture.time)
            precondition(direct?.isTrusted == true, "useCredential for a server trust the evaluator does not trust")
            precondition(decision.credential != nil, "useCredential without a credential")
        }
    }
}
