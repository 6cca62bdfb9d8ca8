import Foundation
import PincheckOpenSSL
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Post-quantum certificates made with OpenSSL 3.5 (Certificates/pq, scripts/make-pq-fixtures.sh),
/// judged by whichever OpenSSL is linked: before 3.5 the algorithm is named in a typed reason; from
/// 3.5 a private anchor may choose it (a warning of the strict profile) and the Web PKI refuses it.
@Suite("Post-quantum certificates: named, not misreported")
struct PostQuantumTests {
    /// OpenSSL 3.5 or newer (ML-DSA and SLH-DSA in its default provider).
    static let verifiesPostQuantum = OpenSSLLibrary.isAtLeast(3, 5)

    static func load(_ name: String) throws -> [Certificate] {
        try Certificate.load(contentsOf: TestPKI.path("pq/\(name).pem"))
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let chain: String
        let anchor: String
        let algorithm: String
        var testDescription: String { chain }
    }

    static let rows = [
        Row(chain: "ml-dsa-44-chain", anchor: "ml-dsa-65-root", algorithm: "ML-DSA-"),
        Row(chain: "ml-dsa-87-self-signed", anchor: "ml-dsa-87-self-signed", algorithm: "ML-DSA-87"),
        Row(chain: "slh-dsa-sha2-128s-self-signed", anchor: "slh-dsa-sha2-128s-self-signed", algorithm: "SLH-DSA-SHA2-128s"),
    ]

    @Test("under its private anchor: chain.unsupported-algorithm naming the algorithm before OpenSSL 3.5, trusted with a warning from 3.5", arguments: rows)
    func privateAnchor(_ row: Row) throws {
        let anchors = try TrustAnchors(certificates: try Self.load(row.anchor))
        let verdict = try Evaluator(policy: TrustPolicy(anchors: anchors)).evaluate(try Self.load(row.chain), host: "www.example.test", at: TestPKI.time)
        if Self.verifiesPostQuantum {
            #expect(verdict.isTrusted, "\(verdict.failures)")
            #expect(verdict.warnings.contains { $0.code == .profileViolation && $0.message.contains(row.algorithm) })
        } else {
            #expect(!verdict.isTrusted)
            let reason = try #require(verdict.failures.first { $0.code == .unsupportedAlgorithm }, "\(verdict.failures)")
            #expect(reason.message.contains(row.algorithm))
            #expect(reason.message.contains(OpenSSLLibrary.version))
            #expect(!verdict.failures.contains { $0.code == .invalid }, "no unnamed chain.invalid beside it")
        }
    }

    @Test("declared Web PKI roots refuse them on every version")
    func webPKI() throws {
        let anchors = try TrustAnchors(certificates: try Self.load("ml-dsa-65-root"), classification: .webPKI)
        let verdict = try Evaluator(policy: TrustPolicy(anchors: anchors)).evaluate(try Self.load("ml-dsa-44-chain"), host: "www.example.test", at: TestPKI.time)
        #expect(!verdict.isTrusted)
        #expect(verdict.failures.contains { $0.code == (Self.verifiesPostQuantum ? .profileViolation : .unsupportedAlgorithm) })
    }

    @Test("their SPKI pins are computed on every version, and match")
    func pins() throws {
        let chain = try Self.load("ml-dsa-44-chain")
        let root = chain[1]
        let pin = root.publicKeyPin
        #expect(pin.digest.count == 32)
        // The pin is the SHA-256 of the SubjectPublicKeyInfo as encoded in the certificate.
        #expect(pin == PublicKeyPin(algorithm: .sha256, unchecked: Digest.sha256(root.subjectPublicKeyInfoDER)))
        let keys = try PinnedPublicKeys(pins: [pin])
        #expect(keys.pins.contains(root.publicKeyPin))
        // The key is named on every version (OpenSSL 3.5 decodes it; 3.0 is told its OID).
        #expect(root.publicKey.description.hasPrefix("ML-DSA-65"), "\(root.publicKey)")
    }
}
