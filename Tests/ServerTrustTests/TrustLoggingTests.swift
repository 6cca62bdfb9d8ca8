import Foundation
import Logging
import PincheckTestSupport
import ServerTrust
import Synchronization
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("swift-log: decisions and problems are logged, nothing is printed by default")
struct TrustLoggingTests {
    static func adapter(_ manager: TrustManager, _ handler: RecordingLogHandler, reporter: (any Reporter)? = nil) -> ChallengeAdapter {
        ChallengeAdapter(trustManager: manager, now: { PKI.time }, reporter: reporter,
                         logger: Logger(label: "test", factory: { _ in handler }))
    }

    @Test("a refused chain is a .debug record with the host, the disposition and the reason codes")
    func decisionIsLogged() throws {
        let handler = RecordingLogHandler()
        let adapter = Self.adapter(.single(PKI.pinned(PKI.certificate("attacker-root"))), handler)
        #expect(adapter.decide(PKI.serverTrust()).disposition == .cancelAuthenticationChallenge)
        let record = try #require(handler.all.first)
        #expect(record.level == .debug)
        #expect(record.metadata["host"] == "www.example.test")
        #expect(record.metadata["disposition"] == "cancelAuthenticationChallenge")
        #expect(record.metadata["reasons"]?.contains("pin.mismatch") == true)
    }

    @Test("an expired pin set is a .warning")
    func expiredPinSetWarns() throws {
        let handler = RecordingLogHandler()
        let expired = PinSet(.publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate("attacker-root")])),
                                 expires: PKI.time.addingTimeInterval(-86_400))
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [expired],
                                validation: ValidationPolicy(anchors: PKI.anchors))
        let adapter = Self.adapter(TrustManager(policies: [policy]), handler)
        #expect(adapter.decide(PKI.serverTrust()).disposition == .performDefaultHandling)
        #expect(handler.all.contains { $0.level == .warning && $0.message.contains("pin set expired") })
    }

    @Test("a report that cannot be delivered is a .warning")
    func undeliveredReportWarns() async throws {
        struct Unreachable: Reporter {
            func send(_ report: PinFailureReport) async throws { throw PincheckError(.openSSL, "collector unreachable") }
        }
        let handler = RecordingLogHandler()
        let reportOnly = PinSet(.publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate("attacker-root")])), enforcement: .reportOnly)
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [reportOnly],
                                validation: ValidationPolicy(anchors: PKI.anchors), reportURIs: [URL(string: "https://reports.example.test/")!])
        let adapter = Self.adapter(TrustManager(policies: [policy]), handler, reporter: Unreachable())
        #expect(adapter.decide(PKI.serverTrust()).disposition == .useCredential)
        for _ in 0..<500 where !handler.all.contains(where: { $0.level == .warning }) { try await Task.sleep(for: .milliseconds(10)) }
        let warning = try #require(handler.all.first { $0.level == .warning })
        #expect(warning.message.contains("not delivered"))
        #expect(warning.metadata["error"]?.contains("collector unreachable") == true)
    }

    @Test("reportsDelivered() returns once the reports handed over so far are delivered")
    func reportsDelivered() async throws {
        actor Slow: Reporter {
            private(set) var delivered: [PinFailureReport] = []
            func send(_ report: PinFailureReport) async throws {
                try await Task.sleep(for: .milliseconds(300))
                delivered.append(report)
            }
        }
        let slow = Slow()
        let reportOnly = PinSet(.publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate("attacker-root")])), enforcement: .reportOnly)
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [reportOnly],
                                validation: ValidationPolicy(anchors: PKI.anchors), reportURIs: [URL(string: "https://reports.example.test/")!])
        let adapter = Self.adapter(TrustManager(policies: [policy]), RecordingLogHandler(), reporter: slow)
        #expect(adapter.decide(PKI.serverTrust()).disposition == .useCredential)
        await adapter.reportsDelivered()
        #expect(await slow.delivered.map(\.hostname) == ["www.example.test"])
        // Nothing is pending any more: a second wait returns at once, and delivers nothing twice.
        await adapter.reportsDelivered()
        #expect(await slow.delivered.count == 1)
    }

    @Test("pin-set updates: an accepted one is a notice, a refused one a warning with its code")
    func updateEvents() throws {
        let handler = RecordingLogHandler()
        let logger = Logger(label: "test", factory: { _ in handler })
        let pair = try Ed25519.generate()
        let manager = UpdatableTrustManager(compiledIn: TrustManager(), keys: [try PinSetVerificationKey(rawRepresentation: pair.publicKey)],
                                            at: PKI.time, events: TrustLogging.updateEvents(to: logger))
        let document = Array(#"{ "serial": 1, "expires": "2031-01-01", "configuration": { "version": 1, "hosts": [] } }"#.utf8)
        let signature = try Ed25519.sign(document, privateKeyPEM: Array(pair.privateKeyPEM.utf8)).signature
        try manager.apply(document: document, signature: signature, at: PKI.time)
        #expect(throws: PinSetUpdateError.self) { try manager.apply(document: document, signature: signature, at: PKI.time) }
        #expect(handler.all.map(\.level) == [.notice, .warning])
        #expect(handler.all.first?.metadata["serial"] == "1")
        #expect(handler.all.last?.metadata["code"] == "update.rollback")
    }
}
