import Foundation
import PincheckOpenSSL
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// SCTs from logs made here, embedded in the test PKI's leaf and sent as from the TLS extension.
@Suite("Certificate Transparency with test logs")
struct CTTestLogTests {
    typealias CT = CertificateTransparency

    static let logs = CTScenario.logs
    static let intermediate = CTScenario.intermediate
    static let intermediateKey = CTScenario.intermediateKey
    static let issued = CTScenario.issued

    static func leaf(with logs: [TestCTLog]) throws -> Certificate { try CTScenario.leaf(with: logs) }
    static func known(_ logs: [TestCTLog] = Self.logs) throws -> CT.Logs { try CTScenario.known(logs) }

    static func assess(_ leaf: Certificate, extra: [SignedCertificateTimestamp] = [], logs: CT.Logs? = nil) throws -> CT.Assessment {
        CT.assess(leaf: leaf, issuer: intermediate, additionalSCTs: extra, policy: .chrome, logs: try logs ?? known(), at: TestPKI.time)
    }

    @Test("three embedded SCTs from two operators: verified, counted, compliant (the leaf's lifetime is over 180 days)")
    func compliant() throws {
        let assessment = try Self.assess(try Self.leaf(with: Self.logs))
        #expect(assessment.compliance == .compliant)
        #expect(assessment.timestamps.count == 3)
        #expect(assessment.timestamps.allSatisfy { $0.status == .verified && $0.counted })
    }

    @Test("too few SCTs: two where the lifetime needs three")
    func tooFew() throws {
        let assessment = try Self.assess(try Self.leaf(with: [Self.logs[0], Self.logs[2]]))
        guard case .notCompliant(let why) = assessment.compliance else { Issue.record("\(assessment.compliance)"); return }
        #expect(why.contains("3 needed"))
    }

    @Test("one operator only: three SCTs of Alpha's logs, listed under one operator")
    func oneOperator() throws {
        let alphas = [try TestCTLog(name: "Alpha c", operatorName: "Alpha"), Self.logs[0], Self.logs[1]]
        let assessment = try Self.assess(try Self.leaf(with: alphas), logs: try Self.known(alphas))
        guard case .notCompliant(let why) = assessment.compliance else { Issue.record("\(assessment.compliance)"); return }
        #expect(why.contains("one operator"))
    }

    @Test("a log retired before its SCT does not count")
    func retiredBefore() throws {
        let retired = CT.Logs([try TestCT.logList(Self.logs, state: "retired", since: Self.issued.addingTimeInterval(-60), timestamp: TestPKI.time)])
        let assessment = try Self.assess(try Self.leaf(with: Self.logs), logs: retired)
        #expect(assessment.timestamps.allSatisfy { $0.status == .verified && !$0.counted })
        #expect(assessment.compliance != .compliant)
    }

    @Test("SCTs from the TLS extension: two from approved logs of two operators make a leaf without embedded SCTs compliant; one does not")
    func tlsExtension() throws {
        let leaf = TestPKI.certificate("rsa-leaf")
        let delivered = try [Self.logs[0], Self.logs[2]].map { try $0.sct(for: .certificate(leaf.derBytes), at: Self.issued, source: .tlsExtension) }
        #expect(try Self.assess(leaf, extra: delivered).compliance == .compliant)
        #expect(try Self.assess(leaf, extra: [delivered[0]]).compliance != .compliant)
        // A tampered one fails its signature.
        let tampered = SignedCertificateTimestamp(source: .tlsExtension, version: 0, logID: delivered[1].logID, timestampMilliseconds: delivered[1].timestampMilliseconds + 1,
                                                  signatureAlgorithm: delivered[1].signatureAlgorithm, signature: delivered[1].signature)
        let assessment = try Self.assess(leaf, extra: [delivered[0], tampered])
        #expect(assessment.timestamps.last?.status == .badSignature)
        #expect(assessment.compliance != .compliant)
    }

    @Test("an SCT timestamped after the verification time does not count")
    func future() throws {
        let leaf = try TestCT.embedding(Self.logs, in: TestPKI.certificate("rsa-leaf"), issuer: Self.intermediate, issuerKeyPEM: Self.intermediateKey,
                                        at: TestPKI.time.addingTimeInterval(60))
        let assessment = try Self.assess(leaf)
        #expect(assessment.timestamps.allSatisfy { $0.status == .futureTimestamp })
    }

    /// A staple the intermediate signs for rsa-leaf, *good*, carrying `scts` in its SingleResponse.
    static func staple(_ scts: [SignedCertificateTimestamp]) throws -> [UInt8] {
        try CertificateTransparencyTestLog.stapledResponse(
            for: TestPKI.certificate("rsa-leaf").handle, issuer: intermediate.handle, issuerKeyPEM: intermediateKey,
            sctList: SignedCertificateTimestamp.encodeList(scts), thisUpdate: TestPKI.time.addingTimeInterval(-3_600),
            nextUpdate: TestPKI.time.addingTimeInterval(7 * 86_400))
    }

    @Test("SCTs in a stapled OCSP response, end to end: the evaluator reads them from the staple it verifies; two of two operators are compliant, one is not, a tampered one fails its signature")
    func stapledResponse() throws {
        let leaf = TestPKI.certificate("rsa-leaf")
        let scts = try [Self.logs[0], Self.logs[2]].map { try $0.sct(for: .certificate(leaf.derBytes), at: Self.issued, source: .ocspResponse) }
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")]))
        var requirement = CT.Requirement(policy: .chrome, logs: try Self.known())
        requirement.scope = .everyAnchor
        policy.validation.certificateTransparency = requirement
        let evaluator = Evaluator(policy: policy)
        let chain = [leaf, Self.intermediate]

        let both = try evaluator.evaluate(chain, host: "www.example.test", at: TestPKI.time, stapledOCSPResponse: try Self.staple(scts))
        #expect(both.isTrusted, "\(both.failures)")
        let assessment = try #require(both.certificateTransparency)
        #expect(assessment.compliance == .compliant)
        #expect(assessment.timestamps.map(\.sct.source) == [.ocspResponse, .ocspResponse])
        #expect(assessment.timestamps.allSatisfy { $0.status == .verified && $0.counted })

        let one = try evaluator.evaluate(chain, host: "www.example.test", at: TestPKI.time, stapledOCSPResponse: try Self.staple([scts[0]]))
        #expect(one.failureCodes == [.ctNotCompliant])

        let tampered = SignedCertificateTimestamp(source: .ocspResponse, version: 0, logID: scts[1].logID, timestampMilliseconds: scts[1].timestampMilliseconds + 1,
                                                  signatureAlgorithm: scts[1].signatureAlgorithm, signature: scts[1].signature)
        let bad = try evaluator.evaluate(chain, host: "www.example.test", at: TestPKI.time, stapledOCSPResponse: try Self.staple([scts[0], tampered]))
        #expect(bad.failureCodes == [.ctNotCompliant])
        #expect(bad.certificateTransparency?.timestamps.last?.status == .badSignature)

        // Without a staple the same leaf has no SCT at all.
        #expect(try evaluator.evaluate(chain, host: "www.example.test", at: TestPKI.time).failureCodes == [.ctNotCompliant])
    }
}
