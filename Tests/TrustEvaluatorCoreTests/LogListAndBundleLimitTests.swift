import Foundation
import PincheckTestSupport
import Testing
@testable import PincheckOpenSSL
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// The smaller findings of the third hardening round, one test each.
@Suite("CT log lists and PKCS #7 bundles: freshness, repeated keys, key types, size")
struct LogListAndBundleLimitTests {
    typealias CT = CertificateTransparency

    @Test("a log list dated after both the verification time and today is not fresh: Chrome's policy is unenforceable")
    func futureDatedList() throws {
        // 2098: after the verification time (2030-06-01) and after today.
        let future = CT.LogStore(try CTLogStoreTests.list("usable", day: -25_000))
        let verdict = try CTLogStoreTests.evaluator(future).evaluate(CTLogStoreTests.logged, host: "www.example.test", at: TestPKI.time)
        let reason = try #require((verdict.failures + verdict.warnings).first { $0.code == .ctUnenforceable }, "\(verdict.failures)")
        #expect(reason.message.contains("from the future"), "\(reason.message)")
        // A list dated an hour after the verification time is within the clocks' tolerance.
        let soon = CT.LogStore(CT.Logs([try TestCT.logList(CTTestLogTests.logs, state: "usable", since: CTScenario.since,
                                                          timestamp: TestPKI.time.addingTimeInterval(3_600))]))
        let fine = try CTLogStoreTests.evaluator(soon).evaluate(CTLogStoreTests.logged, host: "www.example.test", at: TestPKI.time)
        #expect(fine.isTrusted && fine.certificateTransparency?.compliance == .compliant, "\(fine.failures)")
    }

    static func listObject() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: TestCT.logListJSON(CTTestLogTests.logs, since: CTScenario.since, timestamp: TestPKI.time)) as! [String: Any]
    }

    @Test("a log list that repeats a key is refused")
    func repeatedKey() throws {
        let text = String(decoding: try JSONSerialization.data(withJSONObject: try Self.listObject()), as: UTF8.self)
        let repeated = text.replacingOccurrences(of: "\"log_list_timestamp\"", with: "\"log_list_timestamp\":\"2099-01-01T00:00:00Z\",\"log_list_timestamp\"")
        #expect(repeated != text)
        do {
            _ = try CT.LogList(json: Array(repeated.utf8), source: "repeated.json")
            Issue.record("a list with a repeated key was read")
        } catch {
            #expect(error.message.contains("appears twice"), "\(error.message)")
        }
    }

    @Test("a log with an Ed25519 key is left out; the rest of the list serves")
    func ed25519Log() throws {
        var root = try Self.listObject()
        var operators = root["operators"] as! [[String: Any]]
        let pair = try Ed25519.generate()
        let spki = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + pair.publicKey
        var logs = operators[0]["logs"] as! [[String: Any]]
        var added = logs[0]
        added["key"] = Data(spki).base64EncodedString()
        added["log_id"] = Data(Digest.sha256(spki)).base64EncodedString()
        added["description"] = "Ed25519 test log"
        logs.append(added)
        operators[0]["logs"] = logs
        root["operators"] = operators
        let list = try CT.LogList(json: Array(try JSONSerialization.data(withJSONObject: root)), source: "ed25519.json")
        #expect(list.logs.count == CTTestLogTests.logs.count)
        #expect(!list.logs.contains { $0.description == "Ed25519 test log" })
        // A key that is no SubjectPublicKeyInfo at all still refuses the list.
        added["key"] = Data([1, 2, 3]).base64EncodedString()
        added["log_id"] = Data(Digest.sha256([1, 2, 3])).base64EncodedString()
        operators[0]["logs"] = [added]
        root["operators"] = operators
        #expect(throws: PincheckError.self) { try CT.LogList(json: Array(try JSONSerialization.data(withJSONObject: root)), source: "broken.json") }
    }

    /// A DER SignedData holding `count` copies of `certificate`.
    static func bundle(_ certificate: [UInt8], count: Int) -> [UInt8] {
        PKCS7Bundle.encode(certificates: Array(repeating: certificate, count: count))
    }

    @Test("a .p7b over the certificate limit is refused from its framing; one within it loads every certificate")
    func bundleCountedFirst() throws {
        let root = TestPKI.certificate("rsa-root").derBytes
        #expect(PKCS7Bundle.certificateCount(Self.bundle(root, count: 3)) == 3)
        #expect(PKCS7Bundle.certificateCount(Array(Self.bundle(root, count: 3).dropLast())) == nil, "truncated framing")
        #expect(try Certificate.parseBundle(Self.bundle(root, count: 3), source: "three.p7b").count == 3)
        let over = Self.bundle(root, count: Limits.maximumBundleCertificates + 1)
        let error = #expect(throws: PincheckError.self) { try Certificate.parseBundle(over, source: "over.p7b") }
        #expect(error?.code == .tooLarge)
        #expect(error?.message.contains("holds \(Limits.maximumBundleCertificates + 1) certificates") == true, "\(String(describing: error))")
    }
}
