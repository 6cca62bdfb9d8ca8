import Foundation
import PincheckOpenSSL
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// A log list read only after its publisher's detached signature verifies (Google's `log_list.sig`),
/// with a publisher key made here.
@Suite("Certificate Transparency: signed log lists")
struct CTLogListSignatureTests {
    typealias LogList = CertificateTransparency.LogList

    static let json = Array(try! TestCT.logListJSON(CTTestLogTests.logs, since: CTTestLogTests.issued, timestamp: TestPKI.time))
    static let publisher = try! CertificateTransparencyTestLog.makeKey()
    static let signature = try! CertificateTransparencyTestLog.sign(json, privateKeyPEM: publisher.privateKeyPEM)

    static func message(_ body: () throws -> Void) -> String {
        do { try body(); return "" } catch { return "\(error)" }
    }

    @Test("a list whose signature verifies with the publisher's key (PEM or DER) is read as without one")
    func verifies() throws {
        for key in [Self.publisher.spkiDER, Array(PEM.encode(Self.publisher.spkiDER, label: "PUBLIC KEY").utf8)] {
            let list = try LogList(json: Self.json, source: "signed", signature: Self.signature, publisherKey: key)
            #expect(list.logs.count == CTTestLogTests.logs.count)
            #expect(list.timestamp == TestPKI.time)
        }
    }

    @Test("refused, with nothing read: one byte of the list changed, another key, a signature of something else, a key that is not one")
    func refused() throws {
        var changed = Self.json
        changed[changed.count / 2] ^= 0x01
        #expect(Self.message { _ = try LogList(json: changed, source: "changed", signature: Self.signature, publisherKey: Self.publisher.spkiDER) }
            .contains("signature does not verify"))
        let other = try CertificateTransparencyTestLog.makeKey()
        #expect(Self.message { _ = try LogList(json: Self.json, source: "other key", signature: Self.signature, publisherKey: other.spkiDER) }
            .contains("signature does not verify"))
        let elsewhere = try CertificateTransparencyTestLog.sign(Array("another list".utf8), privateKeyPEM: Self.publisher.privateKeyPEM)
        #expect(Self.message { _ = try LogList(json: Self.json, source: "other text", signature: elsewhere, publisherKey: Self.publisher.spkiDER) }
            .contains("signature does not verify"))
        #expect(Self.message { _ = try LogList(json: Self.json, source: "no key", signature: Self.signature, publisherKey: Array("not a key".utf8)) }
            .contains("not an RSA or ECDSA public key"))
        #expect(Self.message { _ = try LogList(json: Self.json, source: "empty", signature: [], publisherKey: Self.publisher.spkiDER) }
            .contains("signature does not verify"))
    }
}
