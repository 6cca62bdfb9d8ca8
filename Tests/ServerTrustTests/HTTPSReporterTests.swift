import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerTrust
import ServerTrustFoundation
import Testing
import TrustEvaluator

@Suite("HTTPS failure reporter")
struct HTTPSReporterTests {
    @Test("a report becomes a JSON POST to its report URI")
    func request() throws {
        let anchors = try TrustAnchors(certificates: [PKI.certificate("rsa-root")])
        let set = PinSet(.publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate("attacker-root")])), enforcement: .reportOnly)
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [set],
                                validation: ValidationPolicy(anchors: anchors), reportURIs: [URL(string: "https://reports.example.test/pins")!])
        let decision = try TrustManager(policies: [policy]).evaluate([PKI.leaf, PKI.intermediate], host: "www.example.test", at: PKI.time)
        let report = try #require(decision.reports.first)
        let request = HTTPSReporter.request(for: report, to: report.reportURIs[0])
        #expect(request.httpMethod == "POST")
        #expect(request.url?.absoluteString == "https://reports.example.test/pins")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let data = try #require(request.httpBody)
        let body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(body["hostname"] as? String == "www.example.test")
        #expect((body["known-pins"] as? [String])?.count == 1)
    }
}
