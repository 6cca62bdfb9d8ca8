import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// Validation and pins are two types: a `TrustPolicy` is a `ValidationPolicy` and one pinning
/// mode; a host's validation, a trust manager's unlisted hosts and a report collector take a
/// `ValidationPolicy`, which has no pins to ignore.
@Suite("validation policy")
struct ValidationPolicyTests {
    @Test("a TrustPolicy's settings are its validation's: written on either, read on both")
    func settingsAreTheValidations() throws {
        var policy = TrustPolicy(pinning: try Fixtures.keyPins("rsa-intermediate"), anchors: Fixtures.anchors, maximumChainDepth: 3)
        policy.validation.profile = .openSSLOnly(because: "a private PKI")
        policy.validation.requiredKeyUsages = [.digitalSignature]
        #expect(policy.validation.maximumChainDepth == 3)
        #expect(policy.validation.profile == .openSSLOnly(because: "a private PKI"))
        #expect(policy.validation.requiredKeyUsages == [.digitalSignature])
        #expect(policy.validation.anchors.certificates == Fixtures.anchors.certificates)
        guard case .publicKeys = policy.pinning else { Issue.record("the pins were lost"); return }
    }

    @Test("a host pinned by a TrustPolicy keeps its pins as a pin set and its validation apart")
    func hostFromTrustPolicy() throws {
        let policy = TrustPolicy(pinning: try Fixtures.keyPins("ec-intermediate"), anchors: Fixtures.anchors)
        let host = try HostPolicy(Fixtures.host, policy: policy)
        #expect(host.pinSets.count == 1)
        #expect(host.pinSets.first?.keyPins == [Fixtures.certificate("ec-intermediate").publicKeyPin])
        // The RSA chain does not match the EC intermediate's key: the pins are enforced.
        let manager = TrustManager(policies: [host])
        let verdict = try manager.evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: Fixtures.time)
        #expect(verdict.failures.map(\.code) == [.pinMismatch])
    }

    @Test("unlisted hosts get the default validation, chain and name required whatever it says")
    func defaultValidationFailsClosed() throws {
        let lax = ValidationPolicy(anchors: Fixtures.anchors, chainValidation: .disabled(because: "test"), nameValidation: .disabled(because: "test"))
        let manager = TrustManager(allHostsMustBeEvaluated: false, defaultValidation: lax)
        #expect(manager.defaultValidationPolicy.chainValidation == .required)
        #expect(manager.defaultValidationPolicy.nameValidation == .required)
        let verdict = try manager.evaluate(Fixtures.chain("rsa-good"), host: "other.example.test", at: Fixtures.time)
        #expect(verdict.failures.map(\.code).contains(.hostMismatch))
    }

    /// The TrustPolicy forms, deprecated for a release (CHANGELOG.md): code written against 0.9.0
    /// still builds and still means what it meant, the TrustPolicy's pins unused.
    @Test("the deprecated TrustPolicy forms build and keep their meaning") @available(*, deprecated)
    func deprecatedForms() throws {
        let pinned = TrustPolicy(pinning: try Fixtures.keyPins("ec-intermediate"), anchors: Fixtures.anchors)
        let host = HostPolicy(pattern: try HostPattern(Fixtures.host, publicSuffixes: nil), pinSets: [], validation: pinned)
        #expect(host.validation.anchors.certificates == Fixtures.anchors.certificates)
        guard case .none = host.validation.pinning else { Issue.record("a host's validation has no pins"); return }
        let manager = TrustManager(policies: [host], defaultValidation: pinned)
        guard case .none = manager.defaultValidation.pinning else { Issue.record("the default validation has no pins"); return }
        // As before: the validation's pins were never the host's, so the RSA chain is trusted.
        #expect(try manager.evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: Fixtures.time).isTrusted)
    }
}

/// Each pin set is a check over the verified path (``PinCheck``); whether its pins were compared
/// at all is recorded by the evaluation, not found again from reason codes.
@Suite("pin checks")
struct PinCheckTests {
    static func verdict(_ pinning: PinSet.Pins, anchors: TrustAnchors) throws -> Verdict {
        let host = HostPolicy(pattern: try HostPattern(Fixtures.host, publicSuffixes: nil), pinSets: [PinSet(pinning)],
                              validation: ValidationPolicy(anchors: anchors))
        return try TrustManager(policies: [host]).evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: Fixtures.time)
    }

    @Test("pins are compared on a verified path: a mismatch says so, a chain refused first does not")
    func comparedOnlyOnAVerifiedPath() throws {
        let mismatch = try Self.verdict(try Fixtures.keySet("ec-intermediate"), anchors: Fixtures.anchors)
        #expect(mismatch.failures.map(\.code) == [.pinMismatch])
        #expect(mismatch.pinsCompared)

        let foreign = try TrustAnchors(certificates: [Fixtures.attackerRoot])
        let refused = try Self.verdict(try Fixtures.keySet("rsa-intermediate"), anchors: foreign)
        #expect(refused.failures.map(\.code) == [.unknownIssuer])
        #expect(!refused.pinsCompared)
        #expect(refused.pinsFound.isEmpty)
    }

    @Test("certificate pinning compares on its own re-anchored path, and its matches are the verdict's")
    func certificatePinsReanchor() throws {
        let verdict = try Self.verdict(.certificates(try PinnedCertificates([Fixtures.rsaIntermediate])), anchors: Fixtures.anchors)
        #expect(verdict.isTrusted)
        #expect(verdict.verifiedPath?.anchoring == .pinnedCertificate)
        #expect(verdict.verifiedPath?.certificates.last == Fixtures.rsaIntermediate)
        #expect(verdict.matchedPins.map(\.depth) == [1])
    }
}

/// Every reason carries the requirement that produced it, set where it was produced.
@Suite("reason requirements")
struct ReasonRequirementTests {
    static func failures(_ chain: String, pinning: TrustPolicy.Pinning = .none, host: String = Fixtures.host) throws -> [Reason] {
        try Fixtures.evaluate(Fixtures.policy(pinning), chain: chain, host: host).failures
    }

    @Test("the chain, the name, the pins and the host policy each name themselves")
    func eachRequirement() throws {
        #expect(try Self.failures("rsa-expired").map(\.requirement) == [.chain])
        #expect(try Self.failures("rsa-wrong-host").map(\.requirement) == [.name])
        #expect(try Self.failures("rsa-good", pinning: try Fixtures.keyPins("ec-intermediate")).map(\.requirement) == [.pins])
        let manager = TrustManager(policies: [])
        let unlisted = try manager.evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: Fixtures.time)
        #expect(unlisted.failures.first { $0.code == .hostNotListed }?.requirement == .hostPolicy)
    }

    @Test("a pin mismatch and a broken chain in one verdict stay apart by requirement, not by code")
    func apartInOneVerdict() throws {
        let failures = try Self.failures("rsa-expired", pinning: try Fixtures.certificatePins("rsa-intermediate"))
        #expect(Set(failures.map(\.requirement)) == [.chain], "\(failures)")
        let warnings = try Fixtures.evaluate(Fixtures.policy(.none), chain: "rsa-wrong-host", host: nil).warnings
        #expect(warnings.first { $0.code == .hostNotChecked }?.requirement == .name)
    }
}
