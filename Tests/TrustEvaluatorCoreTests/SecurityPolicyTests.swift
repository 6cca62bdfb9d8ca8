import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("SecurityPolicy: the AFSecurityPolicy-compatible surface")
struct SecurityPolicyTests {
    @Test("defaults and raw values are AFNetworking's")
    func defaults() {
        let policy = SecurityPolicy.defaultPolicy()
        #expect(policy.pinningMode == .none)
        #expect(!policy.allowInvalidCertificates)
        #expect(policy.validatesDomainName)
        #expect(policy.pinnedCertificates.isEmpty)
        #expect(policy.anchors === TrustAnchors.system)
        #expect(SecurityPolicy.PinningMode.none.rawValue == 0)
        #expect(SecurityPolicy.PinningMode.publicKey.rawValue == 1)
        #expect(SecurityPolicy.PinningMode.certificate.rawValue == 2)
    }

    @Test("the system store does not trust the test PKI (anchors are never taken implicitly)")
    func systemAnchors() throws {
        let policy = SecurityPolicy.defaultPolicy()
        let verdict = try policy.evaluate(Fixtures.chain("rsa-good"), forDomain: Fixtures.host, at: Fixtures.time)
        #expect(!verdict.isTrusted)
    }

    @Test("pinning modes with no pins fail closed with a reason", arguments: [SecurityPolicy.PinningMode.certificate, .publicKey])
    func noPins(mode: SecurityPolicy.PinningMode) throws {
        let policy = SecurityPolicy(pinningMode: mode)
        policy.anchors = Fixtures.anchors
        let verdict = try policy.evaluate(Fixtures.chain("rsa-good"), forDomain: Fixtures.host, at: Fixtures.time)
        #expect(verdict.failureCodes == [.noUsablePins])
        #expect(verdict.verifiedPath == nil)
        let error = #expect(throws: PincheckError.self) { try policy.trustPolicy() }
        #expect(error?.code == .emptyPinSet)
    }

    @Test("SPKI hashes can be pinned without certificates in public-key mode")
    func hashesOnly() throws {
        let pin = try PublicKeyPin(Fixtures.referencePins["rsa-intermediate"]!)
        let policy = SecurityPolicy(pinningMode: .publicKey, pinnedPublicKeyHashes: [pin])
        policy.anchors = Fixtures.anchors
        #expect(policy.evaluateServerTrust(Fixtures.chain("rsa-good"), forDomain: Fixtures.host, at: Fixtures.time))
        #expect(!policy.evaluateServerTrust(Fixtures.chain("ec-good"), forDomain: Fixtures.host, at: Fixtures.time))
    }

    @Test("trustPolicy() carries the same settings")
    func equivalentPolicy() throws {
        let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Fixtures.rsaIntermediate])
        policy.allowInvalidCertificates = true
        policy.validatesDomainName = false
        policy.anchors = Fixtures.anchors
        let converted = try policy.trustPolicy()
        guard case .certificates(let pinned) = converted.pinning else { Issue.record("not certificate pinning"); return }
        #expect(pinned.certificates == [Fixtures.rsaIntermediate])
        #expect(converted.validation.chainValidation != .required)
        #expect(converted.validation.nameValidation != .required)
        #expect(converted.validation.anchors === Fixtures.anchors)
    }

    @Test("certificates(inDirectory:) loads every certificate file")
    func certificatesInDirectory() throws {
        let certificates = try SecurityPolicy.certificates(inDirectory: Fixtures.root.path)
        #expect(certificates.count == Fixtures.pinnedNames.count)
        #expect(certificates.contains(Fixtures.rsaRoot))
    }

    @Test("certificates(inDirectory:) names the first unreadable file instead of skipping it")
    func certificatesInBrokenDirectory() {
        let directory = Fixtures.path("malformed")
        let error = #expect(throws: PincheckError.self) { try SecurityPolicy.certificates(inDirectory: directory) }
        #expect(error?.source == Fixtures.path("malformed/bad-der-in-pem.pem"))
        #expect(error?.code == .malformedDER)
        let missing = #expect(throws: PincheckError.self) { try SecurityPolicy.certificates(inDirectory: Fixtures.path("nope")) }
        #expect(missing?.code == .unreadableFile)
    }
}
