import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Responses made by scripts/make-revocation-fixtures.sh with `openssl ocsp`.
@Suite("stapled OCSP and must-staple")
struct StapledOCSPTests {
    static func response(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Fixtures.root.appendingPathComponent("revocation/\(name).der")))
    }

    static func decide(_ chain: [Certificate], staple: String?, required: Bool = false) throws -> Verdict {
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [],
                                validation: ValidationPolicy(anchors: Fixtures.anchors),
                                revocation: RevocationPolicy(requireStapledOCSP: required))
        let manager = TrustManager(policies: [policy], defaultValidation: ValidationPolicy(anchors: Fixtures.anchors))
        return try manager.evaluate(chain, host: "www.example.test", at: Fixtures.time,
                                    stapledOCSPResponse: try staple.map(response))
    }

    static let good = Fixtures.chain("rsa-good")

    @Test("a good, fresh, correctly signed response is accepted silently")
    func good() throws {
        let decision = try Self.decide(Self.good, staple: "ocsp-good", required: true)
        #expect(decision.disposition == .useCredential)
        #expect(decision.warnings.allSatisfy { !$0.code.description.hasPrefix("revocation.") })
    }

    @Test("revoked always rejects, required or not", arguments: [false, true])
    func revoked(required: Bool) throws {
        let decision = try Self.decide(Self.good, staple: "ocsp-revoked", required: required)
        #expect(decision.disposition == .cancelAuthenticationChallenge)
        #expect(decision.failures.map(\.code).contains(.revoked))
    }

    @Test("unknown, stale and wrongly signed responses warn, or reject when stapling is required", arguments: [
        ("ocsp-unknown", Reason.Code.ocspStatusUnknown), ("ocsp-stale", .stapleUnusable), ("ocsp-wrong-signer", .stapleUnusable),
        ("ocsp-must-staple-good", .stapleUnusable),
    ])
    func unusable(name: String, code: Reason.Code) throws {
        let lenient = try Self.decide(Self.good, staple: name)
        #expect(lenient.disposition == .useCredential)
        #expect(lenient.warnings.map(\.code).contains(code), "\(lenient.warnings)")
        let strict = try Self.decide(Self.good, staple: name, required: true)
        #expect(strict.disposition == .cancelAuthenticationChallenge)
        #expect(strict.failures.map(\.code).contains(code))
    }

    @Test("garbage stapled bytes are unusable, never a crash")
    func garbage() throws {
        let policy = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [],
                                validation: ValidationPolicy(anchors: Fixtures.anchors), revocation: RevocationPolicy(requireStapledOCSP: true))
        let manager = TrustManager(policies: [policy])
        for bytes in [[], [0x30], [UInt8](repeating: 0x41, count: 64)] {
            let decision = try manager.evaluate(Self.good, host: "www.example.test", at: Fixtures.time, stapledOCSPResponse: bytes)
            #expect(decision.disposition == .cancelAuthenticationChallenge)
            #expect(decision.failures.map(\.code).contains(.stapleUnusable))
        }
    }

    @Test("a must-staple leaf without a staple is rejected; with a good one it is trusted")
    func mustStaple() throws {
        let chain = Fixtures.chain("../revocation/must-staple-chain")
        #expect(chain[0].handle.requiresStapledOCSP)
        #expect(!Self.good[0].handle.requiresStapledOCSP)
        let missing = try Self.decide(chain, staple: nil)
        #expect(missing.disposition == .cancelAuthenticationChallenge)
        #expect(missing.failures.map(\.code).contains(.stapleMissing))
        let stapled = try Self.decide(chain, staple: "ocsp-must-staple-good")
        #expect(stapled.disposition == .useCredential, "\(stapled.failures)")
        let otherLeafsResponse = try Self.decide(chain, staple: "ocsp-good")
        #expect(otherLeafsResponse.disposition == .cancelAuthenticationChallenge, "a response about another certificate does not count")
    }

    @Test("requireStapledOCSP without a staple rejects; without the requirement nothing is said")
    func requiredMissing() throws {
        #expect(try Self.decide(Self.good, staple: nil, required: true).disposition == .cancelAuthenticationChallenge)
        let lenient = try Self.decide(Self.good, staple: nil)
        #expect(lenient.disposition == .useCredential)
        #expect(lenient.warnings.allSatisfy { !$0.code.description.hasPrefix("revocation.") })
    }
}

/// `StapledOCSP.read`: what a response claims, unverified, for summaries and cache lifetimes.
@Suite("reading a stapled OCSP response without verifying it")
struct StapledOCSPReadingTests {
    static let leaf = Fixtures.chain("rsa-good")[0]
    static let intermediate = Fixtures.chain("rsa-good")[1]

    @Test("by the full certificate ID with the issuer, by the serial number without it")
    func findsTheLeafsAnswer() throws {
        let revoked = try StapledOCSPTests.response("ocsp-revoked")
        guard case .answers(let withIssuer) = StapledOCSP.read(revoked, about: Self.leaf, issuer: Self.intermediate) else {
            Issue.record("the response is readable"); return
        }
        #expect(withIssuer.map(\.status) == ["revoked"])
        guard case .answers(let bySerial) = StapledOCSP.read(revoked, about: Self.leaf, issuer: nil) else {
            Issue.record("the response is readable"); return
        }
        #expect(bySerial.map(\.status) == ["revoked"])
        #expect(bySerial.first?.nextUpdate == Date(timeIntervalSince1970: 4_948_951_661), "2126-10-29T12:47:41Z")
    }

    @Test("another certificate's issuer or serial finds no answer; a response without answers or garbage says so")
    func findsNothingElse() throws {
        let revoked = try StapledOCSPTests.response("ocsp-revoked")
        let root = Fixtures.rsaRoot
        #expect(StapledOCSP.read(revoked, about: Self.leaf, issuer: root) == .answers([]), "the issuer's hashes are part of the ID")
        #expect(StapledOCSP.read(revoked, about: Self.intermediate, issuer: nil) == .answers([]))
        // OCSPResponse { responseStatus successful } without responseBytes; then tryLater (3).
        #expect(StapledOCSP.read([0x30, 0x03, 0x0A, 0x01, 0x00], about: Self.leaf, issuer: nil) == .noBasicResponse)
        #expect(StapledOCSP.read([0x30, 0x03, 0x0A, 0x01, 0x03], about: Self.leaf, issuer: nil) == .unsuccessful("trylater"))
        #expect(StapledOCSP.read([0x01, 0x02], about: Self.leaf, issuer: nil) == .unreadable)
    }
}
