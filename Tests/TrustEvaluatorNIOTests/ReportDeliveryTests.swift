import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

@Suite("pin failure reports delivered from NIO handshakes", .serialized)
struct ReportDeliveryTests {
    /// A report-only policy for www.example.test pinned to a key the server does not have.
    static func manager(reportTo collector: Int) throws -> TrustManager {
        let anchors = try TrustAnchors(certificates: [PKI.certificate("rsa-root")])
        let reportOnly = PinSet(.publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate("attacker-root")])),
                                    enforcement: .reportOnly)
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [reportOnly],
                                validation: ValidationPolicy(anchors: anchors),
                                reportURIs: [URL(string: "https://127.0.0.1:\(collector)/pins")!])
        return TrustManager(policies: [policy])
    }

    @Test("a report-only mismatch lets the handshake complete and its report reaches a local HTTPS collector")
    func reportOnlyMismatchIsReported() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let serverPort = server.port
        let collector = try await ReportCollector.start(group: group)
        let reporter = NIOHTTPSReporter(validation: ValidationPolicy(anchors: try TrustAnchors(certificates: [PKI.certificate("rsa-root")])),
                                        group: group, timeout: .seconds(10))
        let verifier = PincheckNIOVerifier(trustManager: try Self.manager(reportTo: collector.port), now: { PKI.time }, reporter: reporter)
        let decisions = Decisions()
        let reply = await capture { try await exchange(group: group, port: serverPort, host: "www.example.test", verifier: verifier, decisions: decisions) }

        // The first report body, or nil after fifteen seconds.
        let body: Data? = await withTaskGroup(of: Data?.self) { tasks in
            tasks.addTask { for await body in collector.received { return body }; return nil }
            tasks.addTask { try? await Task.sleep(for: .seconds(15)); return nil }
            let first = await tasks.next() ?? nil
            tasks.cancelAll()
            return first
        }
        try await server.stop()
        try await collector.stop()
        try await group.shutdownGracefully()

        #expect(try reply.get() == "ping", "report-only pins do not stop the handshake")
        let decision = try #require(decisions.all.first)
        #expect(decision.disposition == .useCredential)
        #expect(decision.verdict?.reportOnlyFailures.map(\.code) == [.pinMismatch])
        let report = try #require(body, "no report arrived at the collector")
        let json = try #require(try JSONSerialization.jsonObject(with: report) as? [String: Any])
        #expect(json["hostname"] as? String == "www.example.test")
        #expect(json["port"] as? Int == serverPort)
        #expect(json["known-pins"] as? [String] == ["pin-sha256=\"\(PKI.certificate("attacker-root").publicKeyPin.base64)\""])
        #expect((json["served-certificate-chain"] as? [String])?.count == 2)
    }

    @Test("an enforced match sends nothing")
    func matchSendsNothing() async throws {
        let anchors = try TrustAnchors(certificates: [PKI.certificate("rsa-root")])
        let pins = PinSet(.publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate("rsa-intermediate")])))
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [pins],
                                validation: ValidationPolicy(anchors: anchors), reportURIs: [URL(string: "https://127.0.0.1:1/pins")!])
        let verdict = try TrustManager(policies: [policy]).evaluate(
            [PKI.certificate("rsa-leaf"), PKI.certificate("rsa-intermediate")], host: "www.example.test", at: PKI.time)
        #expect(verdict.isTrusted)
        #expect(verdict.reports.isEmpty)
    }

    /// The TrustPolicy form, deprecated for a release (CHANGELOG.md), still builds: the collector
    /// is validated with the policy's validation, its pins unused.
    @Test("the deprecated TrustPolicy form of the reporter keeps the validation and drops the pins") @available(*, deprecated)
    func deprecatedReporterForm() throws {
        let root = PKI.certificate("rsa-root")
        let pinned = TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(certificates: [root])), anchors: try TrustAnchors(certificates: [root]))
        let reporter = NIOHTTPSReporter(validation: pinned)
        #expect(reporter.validationPolicy.anchors.certificates == [root])
        guard case .none = reporter.validation.pinning else { Issue.record("a collector's validation has no pins"); return }
    }
}
