import Foundation
import PincheckTestSupport
import Testing
import ServerTrust
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("trust manager")
struct TrustManagerTests {
    static let psl = Fixtures.psl
    static let base = ValidationPolicy(anchors: Fixtures.anchors)

    static func keys(_ names: String...) throws -> PinSet.Pins {
        .publicKeys(try PinnedPublicKeys(certificates: names.map(Fixtures.certificate)))
    }

    static func manager(_ policies: [HostPolicy], allHosts: Bool = true) -> TrustManager {
        TrustManager(policies: policies, allHostsMustBeEvaluated: allHosts, defaultValidation: base)
    }

    static func policy(_ pattern: String, subdomains: Bool = false, _ sets: [PinSet], reports: [URL] = []) throws -> HostPolicy {
        HostPolicy(pattern: try HostPattern(pattern, includeSubdomains: subdomains, publicSuffixes: psl),
                   pinSets: sets, validation: base, reportURIs: reports)
    }

    @Test("a pinned host whose chain matches is trusted: useCredential")
    func pinned() throws {
        let manager = Self.manager([try Self.policy("www.example.test", [PinSet(try Self.keys("rsa-intermediate", "ec-intermediate"))])])
        let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(decision.disposition == .useCredential)
        #expect(decision.isTrusted)
        #expect(decision.matchedPins.first?.depth == 1)
    }

    @Test("an unlisted host is rejected by default, with its own reason")
    func unlistedRejected() throws {
        let manager = Self.manager([try Self.policy("api.example.test", [PinSet(try Self.keys("rsa-intermediate"))])])
        let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(decision.disposition == .cancelAuthenticationChallenge)
        #expect(decision.failures.map(\.code).contains(.hostNotListed))
    }

    @Test("an unlisted host, when allowed, still gets default validation")
    func unlistedAllowed() throws {
        let manager = Self.manager([], allHosts: false)
        let good = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(good.disposition == .performDefaultHandling)
        let bad = try manager.evaluate(Fixtures.chain("rsa-wrong-host"), host: "www.example.test", at: Fixtures.time)
        #expect(bad.disposition == .cancelAuthenticationChallenge)
        #expect(bad.failures.map(\.code).contains(.hostMismatch))
        let selfSigned = try manager.evaluate(Fixtures.chain("self-signed"), host: "www.example.test", at: Fixtures.time)
        #expect(selfSigned.disposition == .cancelAuthenticationChallenge)
    }

    @Test("the most specific policy wins, and an excluded subdomain gets default validation only")
    func specificity() throws {
        let parent = try Self.policy("example.test", subdomains: true, [PinSet(try Self.keys("attacker-root"))])
        let excluded = try Self.policy("www.example.test", [])
        let manager = Self.manager([parent, excluded])
        #expect(try manager.policy(for: "www.example.test")?.pattern == excluded.pattern)
        #expect(try manager.policy(for: "api.example.test")?.pattern == parent.pattern)
        let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(decision.disposition == .useCredential)
        let pinnedParent = try manager.evaluate(Fixtures.chain("rsa-good"), host: "example.test", at: Fixtures.time)
        #expect(pinnedParent.disposition == .cancelAuthenticationChallenge)
        #expect(pinnedParent.failures.map(\.code).contains(.pinMismatch))
    }

    @Test("report-only: a valid but unpinned chain is allowed, recorded, warned about and reported")
    func reportOnlyValid() throws {
        let report = URL(string: "https://reports.example.test/pins")!
        let set = PinSet(try Self.keys("attacker-root"), enforcement: .reportOnly)
        let manager = Self.manager([try Self.policy("www.example.test", [set], reports: [report])])
        let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", port: 8443, at: Fixtures.time)
        #expect(decision.disposition == .useCredential)
        #expect(decision.isTrusted, "report-only pins do not count against the chain")
        #expect(decision.reportOnlyFailures.map(\.code) == [.pinMismatch], "the verdict keeps the failure")
        #expect(decision.warnings.map(\.code).contains(.reportOnlyFailure))
        let sent = try #require(decision.reports.first)
        #expect(sent.reportURIs == [report])
        #expect(sent.port == 8443)
        #expect(sent.hostname == "www.example.test")
        #expect(sent.servedCertificateChain.count == 2)
        #expect(sent.validatedCertificateChain.count == 3)
        #expect(sent.knownPins == ["pin-sha256=\"\(Fixtures.certificate("attacker-root").publicKeyPin.base64)\""])
        let json = try #require(try JSONSerialization.jsonObject(with: sent.json()) as? [String: Any])
        for key in ["date-time", "hostname", "port", "include-subdomains", "noted-hostname", "served-certificate-chain",
                    "validated-certificate-chain", "known-pins"] {
            #expect(json[key] != nil, "RFC 7469 field \(key)")
        }
    }

    @Test("report-only: an invalid chain is still rejected, and reported")
    func reportOnlyInvalid() throws {
        let set = PinSet(try Self.keys("rsa-intermediate"), enforcement: .reportOnly)
        let manager = Self.manager([try Self.policy("www.example.test", [set], reports: [URL(string: "https://r.example.test/")!])])
        let decision = try manager.evaluate(Fixtures.chain("rsa-expired"), host: "www.example.test", at: Fixtures.time)
        #expect(decision.disposition == .cancelAuthenticationChallenge)
        #expect(decision.failures.map(\.code).contains(.expired))
        #expect(decision.reports.count == 1)
    }

    @Test("a pin set expires at 00:00:00 UTC of its date: then default validation, with a warning")
    func expiry() throws {
        let expires = try #require(PinSet.expiryDate("2030-06-01"))
        #expect(expires == Fixtures.time)
        let set = PinSet(try Self.keys("attacker-root"), expires: expires)
        let manager = Self.manager([try Self.policy("www.example.test", [set])])
        let before = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: expires.addingTimeInterval(-1))
        #expect(before.disposition == .cancelAuthenticationChallenge, "one second before midnight the pins still apply")
        let after = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: expires)
        #expect(after.disposition == .performDefaultHandling, "expired pins: no policy applies (DESIGN §4)")
        #expect(after.coverage == .pinSetExpired)
        #expect(after.isTrusted)
        #expect(after.warnings.map(\.code).contains(.pinSetExpired))
        let invalidAfter = try manager.evaluate(Fixtures.chain("rsa-wrong-host"), host: "www.example.test", at: expires)
        #expect(invalidAfter.disposition == .cancelAuthenticationChallenge, "expired pins never mean accept-all")
        #expect(PinSet.expiryDate("2030-02-30") == nil)
        #expect(PinSet.expiryDate("30-06-01") == nil)
    }

    @Test("backup pins: a single pin, or pins that all match the chain, are warned about; a spare pin is not")
    func backupPins() throws {
        func warnings(_ pinning: PinSet.Pins) throws -> [Reason.Code] {
            let manager = Self.manager([try Self.policy("www.example.test", [PinSet(pinning)])])
            let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
            #expect(decision.disposition == .useCredential)
            return decision.warnings.map(\.code)
        }
        #expect(try warnings(try Self.keys("rsa-intermediate")).contains(.noBackupPin))
        #expect(try warnings(try Self.keys("rsa-intermediate", "rsa-root")).contains(.noBackupPin))
        #expect(try !warnings(try Self.keys("rsa-intermediate", "ec-intermediate")).contains(.noBackupPin))
    }

    @Test("several pin sets compose: all that apply must pass")
    func composition() throws {
        let one = PinSet(try Self.keys("rsa-intermediate", "ec-intermediate"))
        let two = PinSet(.certificates(try PinnedCertificates([Fixtures.certificate("ec-intermediate")])))
        let manager = Self.manager([try Self.policy("www.example.test", [one, two])])
        let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(decision.disposition == .cancelAuthenticationChallenge)
        let ec = try manager.evaluate(Fixtures.chain("ec-good"), host: "www.example.test", at: Fixtures.time)
        #expect(ec.disposition == .useCredential)
    }

    @Test("a pin set without pins cannot be made: a pinning mode of none gives no pins")
    func emptyPinSet() throws {
        #expect(PinSet.Pins(.none) == nil)
        let keys = try Self.keys("rsa-intermediate")
        guard case .publicKeys(let pinned)? = PinSet.Pins(keys.pinning) else {
            Issue.record("public-key pinning did not convert to public-key pins")
            return
        }
        #expect(PinSet(.publicKeys(pinned)).pinCount == 1)
    }

    @Test("one trust manager shared by concurrent evaluations gives the same decisions")
    func concurrent() async throws {
        let manager = Self.manager([try Self.policy("www.example.test", [PinSet(try Self.keys("rsa-intermediate", "ec-intermediate"))]),
                                    try Self.policy("example.test", subdomains: true, [PinSet(try Self.keys("attacker-root"), enforcement: .reportOnly)])])
        let chains = ["rsa-good", "ec-good", "rsa-expired", "self-signed"].map(Fixtures.chain)
        let hosts = ["www.example.test", "example.test", "api.example.test"]
        var expected: [Disposition] = []
        for chain in chains { for host in hosts { expected.append(try manager.evaluate(chain, host: host, at: Fixtures.time).disposition) } }
        let expectedActions = expected
        try await withThrowingTaskGroup(of: [Disposition].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var actions: [Disposition] = []
                    for _ in 0..<10 {
                        actions = []
                        for chain in chains { for host in hosts { actions.append(try manager.evaluate(chain, host: host, at: Fixtures.time).disposition) } }
                    }
                    return actions
                }
            }
            for try await actions in group { #expect(actions == expectedActions) }
        }
        #expect(expectedActions.contains(.useCredential) && expectedActions.contains(.cancelAuthenticationChallenge))
    }
}
