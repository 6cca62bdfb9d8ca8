import Foundation
import TrustEvaluator

/// Many evaluations of every kind (valid, invalid, pinned, unpinned, malformed), watching the
/// process's resident memory: after a warm-up it must stay flat. Run by `pincheck-soak`.
public enum Soak {
    public struct Result: Sendable {
        public let iterations: Int
        /// Resident memory after the warm-up (the first tenth of the iterations), in bytes.
        public let residentAfterWarmUp: Int
        /// Resident memory at the end, in bytes.
        public let residentAtEnd: Int
        /// How many evaluations were trusted, rejected, and refused as bad input.
        public let trusted: Int
        public let rejected: Int
        public let badInput: Int

        public var growth: Int { residentAtEnd - residentAfterWarmUp }
    }

    /// Resident set size from /proc/self/statm, in bytes (0 where unavailable).
    public static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    public static func run(iterations: Int) -> Result {
        let fixture = ChainFixture.shared
        let inputs: [[UInt8]] = ChainFixture.soakInputs()
        var trusted = 0, rejected = 0, badInput = 0
        var afterWarmUp = 0
        let warmUp = max(1, iterations / 10)
        for index in 0..<iterations {
            if index == warmUp { afterWarmUp = residentBytes() }
            let bytes = inputs[index % inputs.count]
            let (policy, _) = fixture.policies[index % fixture.policies.count]
            do {
                // Parsed afresh each time: parsing and freeing are part of what must not leak.
                let served = try Certificate.parseBundle(bytes)
                let verdict = try Evaluator(policy: policy).evaluate(served, host: "www.example.test", at: fixture.time)
                if verdict.isTrusted { trusted += 1 } else { rejected += 1 }
            } catch {
                badInput += 1
            }
        }
        return Result(
            iterations: iterations, residentAfterWarmUp: afterWarmUp, residentAtEnd: residentBytes(),
            trusted: trusted, rejected: rejected, badInput: badInput)
    }
}

extension ChainFixture {
    /// Served chains of every kind from Certificates/, plus malformed input.
    static func soakInputs() -> [[UInt8]] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Certificates")
        let files = [
            "chains/rsa-good.pem", "chains/ec-good.pem", "chains/rsa-expired.pem", "chains/self-signed.pem",
            "chains/attacker-with-pinned-ca.pem", "chains/rsa-wrong-host.pem", "chains/rsa-pathlen.pem",
            "malformed/truncated.pem", "malformed/bad-der-in-pem.pem", "malformed/private-key.pem",
        ]
        return files.compactMap { try? Array(Data(contentsOf: directory.appendingPathComponent($0))) }
    }
}
