import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// TrustKit's `TSKPinningValidatorTests` (datatheorem/TrustKit, TrustKitTests), transcribed: the
/// test's configurations from `../shared/peers/fixtures/trustkit/`, the chains it builds, and the
/// trust decision it asserts (`TSKTrustDecisionShouldAllowConnection`, `…ShouldBlockConnection`,
/// `…DomainNotPinned`), on the test PKI. Substitutions made in each configuration's text:
/// - `www.good.com` → `www.example.test`, `good.com` → `example.test`, `www.bad.com` → `bad.example.test`;
/// - the pins of the test's leaf → rsa-leaf's, of its root CA → rsa-root's, of the injected
///   unrelated CA → attacker-root's; the fake pins (`AAAA…`, `BBBB…`) stay and match nothing;
/// - the trust store (`anchorCertificates`) → rsa-root, standing in for the system store.
/// TrustKit's `evaluateTrust:forHostname:` decision maps onto the verdict's disposition:
/// allow → `useCredential`, block → `cancelAuthenticationChallenge`, domain not pinned → the
/// unlisted-host rule (`performDefaultHandling` once default validation passes).
@Suite("TrustKit: TSKPinningValidatorTests, transcribed", SharedData.requires("peers/fixtures/trustkit"))
struct TrustKitPinningValidatorTests {
    static let folder = TrustKitConfigurationTests.folder
    static let time = Fixtures.time

    static func pin(_ name: String) -> String { String(Fixtures.referencePins[name]!.dropFirst("sha256/".count)) }

    static func load(_ name: String) throws -> TrustManager {
        var text = try String(contentsOf: folder.appendingPathComponent("\(name).plist"), encoding: .utf8)
        let substitutions = [
            ("www.good.com", "www.example.test"), ("unsecured.good.com", "unsecured.example.test"), (">good.com<", ">example.test<"),
            ("www.bad.com", "bad.example.test"),
            ("FVjAO7ivclmiGs57Ff7VRIZrCdX/CrqIklscKK4kCEE=", pin("rsa-leaf")), ("TwyNzy19zZi7cKfPsucs1E+h8ODOCPMrT8681sFWJvw=", pin("rsa-leaf")),
            ("9ptuONsKo0FyxVOcTkSr6hm4kaZ3Geruy0c+okORycM=", pin("rsa-root")), ("S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=", pin("rsa-root")),
            ("iQMk4onrJJz/nwW1wCUR0Ycsh3omhbM+PqMEwNof/K0=", pin("rsa-root")),
            ("H7jJOSLlUfZjqBAuEmaZVDsfNtJJ3QXnyavfi6AQihs=", pin("attacker-root")),
        ]
        for (from, to) in substitutions { text = text.replacingOccurrences(of: from, with: to) }
        return try Configuration.decode(Data(text.utf8), source: name, baseDirectory: ".",
                                        anchors: try TrustAnchors(certificates: [Fixtures.rsaRoot]), publicSuffixes: Fixtures.psl).trustManager
    }

    /// The test's served chain: leaf + intermediate (`certChainArray`).
    static let goodChain = Fixtures.chain("rsa-good")

    static func decide(_ configuration: String, _ chain: [Certificate] = goodChain, host: String = "www.example.test") throws -> Verdict {
        try load(configuration).evaluate(chain, host: host, at: time)
    }

    @Test("testVerifyAgainstAnyPublicKey, …LeafPublicKey, …CAPublicKey (and their peer-pki twins), …LeafPublicKeyAndBadPublicKey: allowed", arguments: [
        "testVerifyAgainstAnyPublicKey", "testVerifyAgainstAnyPublicKey.peer-pki", "testVerifyAgainstLeafPublicKey",
        "testVerifyAgainstLeafPublicKey.peer-pki", "testVerifyAgainstCAPublicKey", "testVerifyAgainstCAPublicKey.peer-pki",
        "testVerifyAgainstLeafPublicKeyAndBadPublicKey",
    ])
    func allowed(_ configuration: String) throws {
        let verdict = try Self.decide(configuration)
        #expect(verdict.disposition == .useCredential, "\(verdict.failures)")
        #expect(verdict.hostPolicy?.pattern.description == "www.example.test", "the noted hostname")
        #expect(!verdict.matchedPins.isEmpty)
    }

    @Test("testVerifyAgainstBadPublicKey: blocked, no matching pin")
    func badPublicKey() throws {
        let verdict = try Self.decide("testVerifyAgainstBadPublicKey")
        #expect(verdict.disposition == .cancelAuthenticationChallenge)
        #expect(verdict.failures.map(\.code) == [.pinMismatch])
    }

    @Test("testVerifyAgainstBadPublicKeyPinningNotEnforced: allowed, the mismatch recorded (TrustKit reports it)")
    func badPublicKeyNotEnforced() throws {
        let verdict = try Self.decide("testVerifyAgainstBadPublicKeyPinningNotEnforced")
        #expect(verdict.disposition == .useCredential)
        #expect(verdict.reportOnlyFailures.map(\.code) == [.pinMismatch])
    }

    @Test("testVerifyAgainstBadPublicKeyPinsExpired: once TSKExpirationDate has passed the domain is not pinned (default handling)")
    func badPublicKeyPinsExpired() throws {
        let verdict = try Self.decide("testVerifyAgainstBadPublicKeyPinsExpired")
        // TrustKit: TSKTrustDecisionDomainNotPinned, and no validation callback.
        #expect(verdict.disposition == .performDefaultHandling)
        #expect(verdict.coverage == .pinSetExpired)
        #expect(verdict.matchedPins.isEmpty)
    }

    @Test("testVerifyAgainstCaPublicKeyAndBadCertificateChain: a self-signed leaf is blocked, even with pinning not enforced")
    func badCertificateChain() throws {
        let verdict = try Self.decide("testVerifyAgainstCaPublicKeyAndBadCertificateChain",
                                      [Fixtures.certificate("self-signed"), Fixtures.rsaIntermediate])
        #expect(verdict.disposition == .cancelAuthenticationChallenge)
        #expect(verdict.failures.contains { $0.code == .selfSigned || $0.code == .untrustedRoot || $0.code == .unknownIssuer }, "\(verdict.failures)")
    }

    @Test("testVerifyAgainstCaPublicKeyAndBadHostname: a valid chain for another name is blocked")
    func badHostname() throws {
        let verdict = try Self.decide("testVerifyAgainstCaPublicKeyAndBadHostname", host: "bad.example.test")
        #expect(verdict.disposition == .cancelAuthenticationChallenge)
        #expect(verdict.failures.map(\.code) == [.hostMismatch])
    }

    @Test("testVerifyAgainstInjectedCaPublicKey: a pinned CA served beside a chain it did not sign is no match")
    func injectedCaPublicKey() throws {
        let verdict = try Self.decide("testVerifyAgainstInjectedCaPublicKey",
                                      [Fixtures.certificate("rsa-leaf"), Fixtures.attackerRoot, Fixtures.rsaIntermediate])
        #expect(verdict.disposition == .cancelAuthenticationChallenge)
        #expect(verdict.failures.map(\.code) == [.pinMismatch])
    }

    @Test("testDomainNotPinned: another host gets no pins, only default validation")
    func domainNotPinned() throws {
        let verdict = try Self.decide("testDomainNotPinned", Fixtures.chain("rsa-wildcard"), host: "other.example.test")
        #expect(verdict.coverage == .unlistedDefaultValidation)
        #expect(verdict.disposition == .performDefaultHandling)
        #expect(verdict.hostPolicy == nil && verdict.matchedPins.isEmpty)
    }

    @Test("testExcludedSubdomain: the parent's pins cover its subdomains except the excluded one")
    func excludedSubdomain() throws {
        let manager = try Self.load("testExcludedSubdomain")
        let parent = try manager.evaluate(Self.goodChain, host: "www.example.test", at: Self.time)
        #expect(parent.disposition == .useCredential, "\(parent.failures)")
        #expect(!parent.matchedPins.isEmpty, "the root's pin applies to www.example.test")
        let excluded = try manager.evaluate(Fixtures.chain("rsa-wildcard"), host: "unsecured.example.test", at: Self.time)
        #expect(excluded.allowsConnection)
        #expect(excluded.matchedPins.isEmpty, "no pins for the excluded subdomain")
    }

    @Test("testExtractRsa2048/3072/4096, testExtractEcDsaSecp256r1/384r1: each key type's SPKI pin is the one openssl computes, and it matches", arguments: [
        ("testExtractRsa2048", "rsa-leaf"), ("testExtractRsa3072", "rsa-3072-leaf"), ("testExtractRsa4096", "rsa-4096-leaf"),
        ("testExtractEcDsaSecp256r1", "ec-leaf"), ("testExtractEcDsaSecp384r1", "ec-p384-leaf"),
    ])
    func extract(_ fixture: String, _ leaf: String) throws {
        let certificate = Fixtures.certificate(leaf)
        // Certificates/pins.txt: openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256 | base64.
        #expect(certificate.publicKeyPin.description == Fixtures.referencePins[leaf])
        // The fixture, with its pin replaced by this key's: the leaf's pin is found in the served chain.
        var text = try String(contentsOf: Self.folder.appendingPathComponent("\(fixture).plist"), encoding: .utf8)
        let pinned = try #require(text.firstMatch(of: /<string>([A-Za-z0-9+\/]{43}=)<\/string>/)?.1)
        text = text.replacingOccurrences(of: String(pinned), with: Self.pin(leaf)).replacingOccurrences(of: "www.good.com", with: "www.example.test")
        let manager = try Configuration.decode(Data(text.utf8), source: fixture, baseDirectory: ".", anchors: Fixtures.anchors,
                                               publicSuffixes: Fixtures.psl).trustManager
        let intermediate = leaf.hasPrefix("ec") ? Fixtures.certificate("ec-intermediate") : Fixtures.rsaIntermediate
        let verdict = try manager.evaluate([certificate, intermediate], host: "www.example.test", at: Self.time)
        #expect(verdict.disposition == .useCredential, "\(verdict.failures)")
        #expect(verdict.matchedPins.map(\.depth) == [0])
    }
}
