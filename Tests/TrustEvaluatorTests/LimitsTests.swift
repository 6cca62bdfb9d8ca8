import Foundation
import Testing
@testable import TrustEvaluator

/// Hostile sizes are refused quickly, with a typed error or reason (Limits).
@Suite("resource limits")
struct LimitsTests {
    @Test("a served chain longer than the limit is rejected as too long, without verification")
    func longChain() throws {
        let good = Fixtures.chain("rsa-good")
        let long = good + Array(repeating: Fixtures.certificate("rsa-intermediate"), count: Limits.maximumServedChainLength)
        let verdict = try Evaluator(policy: TrustPolicy(anchors: Fixtures.anchors)).evaluate(long, host: "www.example.test", at: Fixtures.time)
        #expect(!verdict.isTrusted)
        #expect(verdict.failures.map(\.code) == [.tooLong])
        let atLimit = good + Array(repeating: Fixtures.certificate("ec-intermediate"), count: Limits.maximumServedChainLength - good.count)
        #expect(try Evaluator(policy: TrustPolicy(anchors: Fixtures.anchors)).evaluate(atLimit, host: "www.example.test", at: Fixtures.time).isTrusted,
                "junk up to the limit is still evaluated")
    }

    @Test("an oversized certificate is refused before parsing, in DER and in PEM")
    func bigCertificate() throws {
        let huge = [UInt8](repeating: 0x30, count: Limits.maximumCertificateBytes + 1)
        #expect(throws: PincheckError.self) { try Certificate(derEncoded: huge) }
        do { _ = try Certificate(derEncoded: huge) } catch { #expect(error.code == .tooLarge) }
        let pem = "-----BEGIN CERTIFICATE-----\n" + Base64.encode(huge) + "\n-----END CERTIFICATE-----\n"
        do { _ = try Certificate.parseBundle(Array(pem.utf8)); Issue.record("must throw") } catch { #expect(error.code == .tooLarge) }
    }

    @Test("a bundle of more certificates than the limit is refused before any is parsed")
    func bigBundle() throws {
        let one = Fixtures.certificate("rsa-leaf").pemEncoded
        let text = String(repeating: one, count: Limits.maximumBundleCertificates + 1)
        do {
            _ = try Certificate.parseBundle(Array(text.utf8))
            Issue.record("must throw")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("\(Limits.maximumBundleCertificates + 1) blocks"))
        }
    }
}
