import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Collects diagnostics events from any thread.
final class EventLog: @unchecked Sendable {
    // @unchecked: every access to `events` holds `lock`.
    private let lock = NSLock()
    private var events: [DiagnosticEvent] = []

    func record(_ event: DiagnosticEvent) { lock.withLock { events.append(event) } }
    var all: [DiagnosticEvent] { lock.withLock { events } }
}

@Suite("Verdict: reasons carry their evidence")
struct VerdictTests {
    @Test("an expired certificate: OpenSSL's code, the depth, the subject and the end date")
    func expiredEvidence() throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-expired")
        let reason = try #require(verdict.failure(.expired), verdict.explanation)
        let openSSL = try #require(reason.evidence.openSSLError)
        #expect(openSSL.code == 10)   // X509_V_ERR_CERT_HAS_EXPIRED
        #expect(openSSL.depth == 0)
        #expect(openSSL.subject?.contains("CN=www.example.test") == true)
        #expect(!openSSL.text.isEmpty)
        #expect(reason.message.contains("depth 0"))
        #expect(reason.message.contains("2021-01-01"))
        #expect(reason.code.description == "chain.expired")
    }

    @Test("a not-yet-valid certificate: OpenSSL code 9 and the start date")
    func notYetValidEvidence() throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-not-yet-valid")
        let reason = try #require(verdict.failure(.notYetValid), verdict.explanation)
        #expect(reason.evidence.openSSLError?.code == 9)
        #expect(reason.evidence.openSSLError?.depth == 0)
        #expect(reason.message.contains("2090-01-01"))
    }

    @Test("a chain problem higher up names its depth: the non-CA issuer is at depth 1")
    func depthOfIntermediateProblem() throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-nonca")
        let reason = try #require(verdict.failure(.invalidCA), verdict.explanation)
        #expect(reason.evidence.openSSLError?.code == 79)   // X509_V_ERR_INVALID_CA
        #expect(reason.evidence.openSSLError?.depth == 1)
        #expect(reason.evidence.openSSLError?.subject?.contains("Not-A-CA") == true)
    }

    @Test("a host mismatch: the host asked for and the names present")
    func hostMismatchEvidence() throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-wrong-host")
        let reason = try #require(verdict.failure(.hostMismatch), verdict.explanation)
        #expect(reason.evidence.hostRequested == Fixtures.host)
        #expect(reason.evidence.namesPresented == ["other.example.test"])
        #expect(reason.message.contains(Fixtures.host) && reason.message.contains("other.example.test"))
        // Reported once, although OpenSSL may call back more than once.
        #expect(verdict.failureCodes.filter { $0 == .hostMismatch }.count == 1)
    }

    @Test("an IP address mismatch: the address asked for and every name present")
    func ipMismatchEvidence() throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-ip", host: "127.0.0.2")
        let reason = try #require(verdict.failure(.ipAddressMismatch), verdict.explanation)
        #expect(reason.evidence.hostRequested == "127.0.0.2")
        #expect(Set(reason.evidence.namesPresented ?? []) == ["127.0.0.1", "::1", "localhost"])
    }

    @Test("a leaf without subjectAltName says so")
    func noSubjectAltName() throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-cn-only")
        let reason = try #require(verdict.failure(.hostMismatch))
        #expect(reason.evidence.namesPresented == [])
        #expect(reason.message.contains("no DNS or IP subjectAltName"))
    }

    @Test("a pin mismatch: pins configured, pins of the path, and OkHttp-style `sha256/… : subject` lines",
          arguments: ["certificate", "publicKey"])
    func pinMismatchEvidence(mode: String) throws {
        let pinning = mode == "certificate" ? try Fixtures.certificatePins("ec-intermediate") : try Fixtures.keyPins("ec-intermediate")
        let verdict = try Fixtures.evaluate(Fixtures.policy(pinning), chain: "rsa-good")
        let reason = try #require(verdict.failure(.pinMismatch), verdict.explanation)
        let configured = try PublicKeyPin(Fixtures.referencePins["ec-intermediate"]!)
        #expect(reason.evidence.pinsConfigured == [configured])
        #expect(reason.evidence.hostRequested == Fixtures.host)
        let lines = reason.message.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        if mode == "publicKey" {
            // The verified path is known: leaf, intermediate, root.
            let path = ["rsa-leaf", "rsa-intermediate", "rsa-root"]
            #expect(reason.evidence.pinsOfPath?.map(\.description) == path.map { Fixtures.referencePins[$0]! })
            for name in path {
                let certificate = Fixtures.certificate(name)
                #expect(lines.contains("\(Fixtures.referencePins[name]!) : \(certificate.subject)"), "\(reason.message)")
            }
        } else {
            // No path reaches a pinned certificate: the lines show how far the path got.
            let leafLine = "\(Fixtures.referencePins["rsa-leaf"]!) : \(Fixtures.certificate("rsa-leaf").subject)"
            #expect(lines.contains(leafLine), "\(reason.message)")
        }
        #expect(lines.contains(configured.description), "the configured pin is listed: \(reason.message)")
        let pathHeader = try #require(lines.firstIndex { $0.hasPrefix("Verified path") })
        let pinsHeader = try #require(lines.firstIndex { $0.hasPrefix("Pinned for") })
        #expect(pathHeader < pinsHeader)
        #expect(lines[pinsHeader].contains(Fixtures.host))
    }

    @Test("a trusted verdict names its path; a rejected one names no path and no matched pins",
          arguments: ["rsa-good", "rsa-expired", "rsa-wrong-host", "self-signed", "rsa-nonca", "ec-good", "ed25519", "with-junk", "attacker"])
    func trustedIffVerifiedPath(chain: String) throws {
        for pinning in [Pinning.none, try Fixtures.keyPins("rsa-root"), try Fixtures.certificatePins("rsa-intermediate")] {
            let verdict = try Fixtures.evaluate(Fixtures.policy(pinning), chain: chain)
            #expect(verdict.isTrusted == (verdict.verifiedPath != nil))
            if !verdict.isTrusted { #expect(verdict.matchedPins.isEmpty) }
            #expect(verdict.evaluationTime == Fixtures.time)
            #expect(verdict.servedChain == Fixtures.chain(chain))
        }
    }
    typealias Pinning = TrustPolicy.Pinning

    @Test("with no host: trusted on a valid chain, with a host-not-checked warning")
    func noHost() throws {
        for chain in ["rsa-good", "rsa-wrong-host"] {
            let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: chain, host: nil)
            #expect(verdict.isTrusted, verdict.explanation)
            #expect(verdict.checkedHost == nil)
            #expect(verdict.warningCodes == [.hostNotChecked])
        }
        // No host is not "no checks": the chain still has to verify.
        let expired = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-expired", host: nil)
        #expect(!expired.isTrusted)
        #expect(expired.warningCodes.contains(.hostNotChecked))
    }

    @Test("an empty served chain cannot be evaluated")
    func emptyChain() throws {
        let error = #expect(throws: PincheckError.self) { try Fixtures.evaluate(Fixtures.policy(), [], host: Fixtures.host) }
        #expect(error?.code == .emptyChain)
        let facade = SecurityPolicy.defaultPolicy()
        facade.anchors = Fixtures.anchors
        let facadeError = #expect(throws: PincheckError.self) { try facade.evaluate([], forDomain: Fixtures.host, at: Fixtures.time) }
        #expect(facadeError?.code == .emptyChain)
        #expect(!facade.evaluateServerTrust([], forDomain: Fixtures.host, at: Fixtures.time))
        // Also when the facade rejects before evaluating (no pins).
        let noPins = SecurityPolicy(pinningMode: .certificate)
        #expect(throws: PincheckError.self) { try noPins.evaluate([], forDomain: Fixtures.host, at: Fixtures.time) }
    }

    @Test("an internationalised host is normalised once, the same way by the evaluator and the trust manager")
    func internationalisedHost() throws {
        let direct = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-good", host: "Bücher.Example.")
        #expect(direct.checkedHost == "xn--bcher-kva.example")
        let managed = try TrustManager.single(Fixtures.policy()).evaluate(Fixtures.chain("rsa-good"), host: "bücher.example", at: Fixtures.time)
        #expect(managed.checkedHost == direct.checkedHost)
        #expect(direct.failures.map(\.code) == [.hostMismatch], "the A-label is checked against the certificate's names")
    }

    @Test("a host no certificate can carry cannot be evaluated",
          arguments: ["exa mple.com", "", "   ", "bücher..example", "a..b", ".", "www.example.test..", "under/score", String(repeating: "a", count: 64) + ".test"])
    func invalidHost(host: String) throws {
        let error = #expect(throws: PincheckError.self) { try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-good", host: host) }
        #expect(error?.code == .invalidHost)
        let facade = SecurityPolicy.defaultPolicy()
        facade.anchors = Fixtures.anchors
        #expect(!facade.evaluateServerTrust(Fixtures.chain("rsa-good"), forDomain: host, at: Fixtures.time))
    }

    @Test("an internationalised name is accepted as its A-label")
    func aLabel() throws {
        // Not on the certificate, but a valid name to ask about: a verdict, not an error.
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-good", host: "xn--bcher-kva.example")
        #expect(verdict.failureCodes == [.hostMismatch])
    }

    @Test("matchedPins gives the pin and the depth of the certificate it matched")
    func matchedPins() throws {
        let all = try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins("rsa-root", "rsa-leaf", "rsa-intermediate")), chain: "rsa-good")
        #expect(all.matchedPins.map(\.depth) == [0, 1, 2])
        #expect(all.matchedPins.map { $0.pin.description } == ["rsa-leaf", "rsa-intermediate", "rsa-root"].map { Fixtures.referencePins[$0]! })
        #expect(all.matchedPins.map(\.certificate) == all.verifiedPath?.certificates)

        let root = try Fixtures.evaluate(Fixtures.policy(try Fixtures.certificatePins("rsa-root")), chain: "rsa-good")
        #expect(root.matchedPins.map(\.depth) == [2])
        #expect(root.matchedPins.first?.certificate == Fixtures.rsaRoot)

        let deep = try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins("rsa-deep-intermediate-1")), chain: "rsa-deep")
        #expect(deep.matchedPins.map(\.depth) == [2])
    }

    @Test("a sha1/ pin still matches, with a weak-pin warning")
    func sha1PinWarning() throws {
        let pin = Fixtures.rsaIntermediate.publicKeySHA1Pin
        let verdict = try Fixtures.evaluate(Fixtures.policy(.publicKeys(try PinnedPublicKeys(pins: [pin]))), chain: "rsa-good")
        #expect(verdict.isTrusted, verdict.explanation)
        #expect(verdict.warningCodes.contains(.weakPin))
        #expect(verdict.matchedPins.map(\.pin) == [pin])
        #expect(verdict.matchedPins.map(\.depth) == [1])
    }

    @Test("the diagnostics callback sees the evaluation start, the path and the decision")
    func diagnostics() throws {
        let log = EventLog()
        let evaluator = Evaluator(policy: Fixtures.policy(try Fixtures.keyPins("rsa-intermediate")), diagnostics: log.record)
        let trusted = try evaluator.evaluate(Fixtures.chain("rsa-good"), host: "WWW.example.test", at: Fixtures.time)
        #expect(trusted.isTrusted)
        let events = log.all
        guard case .evaluationStarted(let host, let time, let count)? = events.first else {
            Issue.record("first event: \(String(describing: events.first))"); return
        }
        #expect(host == Fixtures.host && time == Fixtures.time && count == 2)
        #expect(events.contains { if case .pathVerified(let path) = $0 { path.count == 3 } else { false } })
        #expect(events.contains { if case .pinMatched(let match) = $0 { match.depth == 1 } else { false } })
        guard case .decided(let decision)? = events.last else { Issue.record("last event: \(String(describing: events.last))"); return }
        #expect(decision == true)

        let rejectedLog = EventLog()
        let rejecting = Evaluator(policy: Fixtures.policy(), diagnostics: rejectedLog.record)
        #expect(try !rejecting.evaluate(Fixtures.chain("rsa-expired"), host: Fixtures.host, at: Fixtures.time).isTrusted)
        #expect(rejectedLog.all.contains { if case .pathRejected(let reasons) = $0 { reasons.contains { $0.code == .expired } } else { false } })
        guard case .decided(let rejectedDecision)? = rejectedLog.all.last else { Issue.record("no decision"); return }
        #expect(rejectedDecision == false)
        #expect(!rejectedLog.all.contains { if case .pathVerified = $0 { true } else { false } })
    }

    @Test("reason codes have stable text")
    func reasonCodeText() {
        let codes: [(Reason.Code, String)] = [
            (.expired, "chain.expired"), (.notYetValid, "chain.not-yet-valid"), (.selfSigned, "chain.self-signed"),
            (.unknownIssuer, "chain.unknown-issuer"), (.hostMismatch, "host.mismatch"), (.ipAddressMismatch, "host.ip-mismatch"),
            (.pinMismatch, "pin.mismatch"), (.noUsablePins, "pin.none-usable"), (.pinOutsideVerifiedPath, "pin.outside-verified-path"),
            (.selfSignedRequiresPinning, "policy.self-signed-requires-pinning"), (.hostNotChecked, "host.not-checked"),
        ]
        for (code, text) in codes { #expect(code.description == text) }
    }
}
