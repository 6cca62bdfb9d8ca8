import Foundation
import PincheckOpenSSL
import TrustEvaluator
import TrustEvaluatorCore

extension FuzzTargets {
    /// Certificate Transparency's readers: the bytes as a TLS-encoded SCT list, as a Google v3 and
    /// an Apple v5 log list, and as the SCTs a server sent in the TLS extension of a handshake
    /// judged under Chrome's and Apple's policies. Oracles: a list that parses encodes back to
    /// itself; every log a list accepts has the ID its key hashes to; a chain is trusted under an
    /// enforced policy only when the policy's answer is compliant (or it does not apply), and
    /// only verified SCTs count.
    public static func transparency(_ bytes: [UInt8]) {
        let parsed = try? SignedCertificateTimestamp.parseList(bytes, source: .tlsExtension)
        if let timestamps = parsed {
            let readable = timestamps.filter {
                $0.isVersion1 && ["ecdsa-with-SHA256", "sha256WithRSAEncryption"].contains($0.signatureAlgorithm ?? "")
            }
            if readable.count == timestamps.count {
                precondition(SignedCertificateTimestamp.encodeList(timestamps) == bytes, "an SCT list of v1 SCTs encodes back to its bytes")
            }
        }
        let fixture = ChainFixture.shared
        for publisher in CertificateTransparency.Publisher.allCases {
            guard let list = try? CertificateTransparency.LogList(json: bytes, source: "fuzz", publisher: publisher) else { continue }
            for log in list.logs {
                precondition(log.logID == Digest.sha256(log.key), "a list's log ID is the SHA-256 of its key")
                _ = log.state(at: fixture.time)
                _ = log.state(at: Date(timeIntervalSince1970: 0))
            }
        }
        for manager in fixture.transparencyManagers {
            guard
                let verdict = try? manager.evaluate(
                    fixture.goodChain, host: "www.example.test", at: fixture.time,
                    stapledOCSPResponse: nil, revocationLists: nil, presentedSCTs: parsed ?? []),
                let assessment = verdict.certificateTransparency
            else { continue }
            precondition(assessment.timestamps.allSatisfy { !$0.counted || $0.status == .verified }, "only verified SCTs count")
            if verdict.isTrusted {
                switch assessment.compliance {
                case .compliant, .notApplicable: break
                case .notCompliant, .unenforceable: preconditionFailure("an enforced CT policy let a non-compliant chain through")
                }
            }
        }
    }
}
