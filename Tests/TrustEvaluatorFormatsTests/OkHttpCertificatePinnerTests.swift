import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// OkHttp's `CertificatePinnerTest` (square/okhttp, okhttp/src/jvmTest/kotlin/okhttp3), each test
/// under its own name, through Pincheck's OkHttp importer with the test PKI: certA1 is
/// `rsa-leaf` (served as `rsa-good`), certB1 `rsa-leaf-rotated` (`rsa-rotated`), certC1 `ec-leaf`
/// (`ec-good`); "example.com" becomes www.example.test, the name those leaves carry. OkHttp's
/// `check(hostname, certificates)` looks at pins only, so the chains here are valid ones.
@Suite("OkHttp: CertificatePinnerTest, transcribed")
struct OkHttpCertificatePinnerTests {
    static let certA1Sha256Pin = Fixtures.referencePins["rsa-leaf"]!
    static let certB1Sha256Pin = Fixtures.referencePins["rsa-leaf-rotated"]!
    static let certA1 = "rsa-good", certB1 = "rsa-rotated", certC1 = "ec-good"
    static let host = "www.example.test"

    static func pinner(_ lines: [String]) throws -> TrustManager {
        try Configuration.decode(Data((lines.joined(separator: "\n") + "\n").utf8), source: "pins", baseDirectory: ".",
                                 anchors: Fixtures.anchors, format: .okHttp, publicSuffixes: Fixtures.psl).trustManager
    }

    /// `certificatePinner.check(host, chain)` succeeds.
    static func check(_ manager: TrustManager, _ host: String, _ chain: String) throws -> Bool {
        try manager.evaluate(Fixtures.chain(chain), host: host, at: Fixtures.time).allowsConnection
    }

    static func refusedLine(_ line: String) -> Bool {
        (try? ConfigurationImporter.pincheckJSON(from: Data((line + "\n").utf8), format: .okHttp, source: "pins")
            .utf8.count) == nil
            || (try? pinner([line])) == nil
    }

    @Test("malformedPin, malformedBase64, testBadPin, testBadAlgorithm, testBadHost: the pin list is refused", arguments: [
        "example.com md5/DmxUShsZuNiqPQsX2Oi9uv2sCnw=",
        "example.com sha1/DmxUShsZuNiqPQsX2Oi9uv2sCnw*",
        "example.co.uk sha256/a",
        "example.co.uk sha512/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "example.* sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    ])
    func refused(line: String) {
        #expect(Self.refusedLine(line))
    }

    @Test("sameKeypairSamePin: certificates made from one key pair have one pin")
    func sameKeypairSamePin() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-okhttp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func openssl(_ arguments: [String]) throws { try #require(try OpenSSLCLI.run(arguments) == 0) }
        let key = folder.appendingPathComponent("a.key").path
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        for serial in ["100", "101"] {
            try openssl(["req", "-x509", "-key", key, "-subj", "/CN=A", "-set_serial", serial, "-days", "1",
                         "-out", folder.appendingPathComponent("a\(serial).pem").path])
        }
        let a1 = try Certificate.load(contentsOf: folder.appendingPathComponent("a100.pem").path)[0]
        let a2 = try Certificate.load(contentsOf: folder.appendingPathComponent("a101.pem").path)[0]
        #expect(a1 != a2)
        #expect(a1.publicKeyPin == a2.publicKeyPin)
        #expect(Fixtures.certificate("rsa-leaf").publicKeyPin != Fixtures.certificate("rsa-leaf-rotated").publicKeyPin)
    }

    @Test("successfulCheck / unsuccessfulCheck")
    func successfulCheck() throws {
        let pinner = try Self.pinner(["\(Self.host) \(Self.certA1Sha256Pin)"])
        #expect(try Self.check(pinner, Self.host, Self.certA1))
        #expect(try !Self.check(pinner, Self.host, Self.certB1))
    }

    @Test("multipleCertificatesForOneHostname")
    func multipleCertificatesForOneHostname() throws {
        let pinner = try Self.pinner(["\(Self.host) \(Self.certA1Sha256Pin)", "\(Self.host) \(Self.certB1Sha256Pin)"])
        #expect(try Self.check(pinner, Self.host, Self.certA1))
        #expect(try Self.check(pinner, Self.host, Self.certB1))
    }

    @Test("multipleHostnamesForOneCertificate")
    func multipleHostnamesForOneCertificate() throws {
        let pinner = try Self.pinner(["example.test \(Self.certA1Sha256Pin)", "www.example.test \(Self.certA1Sha256Pin)"])
        #expect(try Self.check(pinner, "example.test", Self.certA1))
        #expect(try Self.check(pinner, "www.example.test", Self.certA1))
    }

    @Test("absentHostnameMatches: an empty pinner lets every chain through default validation")
    func absentHostnameMatches() throws {
        #expect(try Self.check(try Self.pinner([]), Self.host, Self.certA1))
    }

    @Test("successfulCheckForWildcardHostname / unsuccessfulCheckForWildcardHostname")
    func wildcardHostname() throws {
        let pinner = try Self.pinner(["*.example.test \(Self.certA1Sha256Pin)"])
        #expect(try Self.check(pinner, Self.host, Self.certA1))
        #expect(try !Self.check(pinner, Self.host, Self.certB1))
    }

    @Test("multipleCertificatesForOneWildcardHostname")
    func multipleCertificatesForOneWildcardHostname() throws {
        let pinner = try Self.pinner(["*.example.test \(Self.certA1Sha256Pin)", "*.example.test \(Self.certB1Sha256Pin)"])
        #expect(try Self.check(pinner, Self.host, Self.certA1))
        #expect(try Self.check(pinner, Self.host, Self.certB1))
    }

    @Test("successfulCheckForOneHostnameWithWildcardAndDirectCertificate / unsuccessful…: the union of both patterns' pins")
    func wildcardAndDirect() throws {
        let pinner = try Self.pinner(["*.example.test \(Self.certA1Sha256Pin)", "\(Self.host) \(Self.certB1Sha256Pin)"])
        #expect(try Self.check(pinner, Self.host, Self.certA1))
        #expect(try Self.check(pinner, Self.host, Self.certB1))
        #expect(try !Self.check(pinner, Self.host, Self.certC1))
    }

    @Test("checkForHostnameWithDoubleAsterisk and testGoodPin: which hosts **.example.co.uk pins", arguments: [
        ("example.co.uk", true), ("foo.example.co.uk", true), ("foo.bar.example.co.uk", true), ("foo.bar.baz.example.co.uk", true),
        ("www.example.co.uk", true), ("gopher.example.co.uk", true),
        ("uk", false), ("co.uk", false), ("anotherexample.co.uk", false), ("foo.anotherexample.co.uk", false), ("www.example.com", false),
    ])
    func doubleAsterisk(host: String, pinned: Bool) throws {
        let pinner = try Self.pinner(["**.example.co.uk \(Self.certA1Sha256Pin)"])
        #expect((try pinner.policy(for: host) != nil) == pinned)
    }

    @Test("successfulMatchAcceptsAnyMatchingCertificate (and …Old, …ForWildcardHostname): Pincheck differs, a pin counts only on the verified path")
    func anyMatchingCertificate() throws {
        // OkHttp's check() is handed [certA1, certB1] and accepts B1's pin although B1 does not
        // certify A1. Pincheck matches pins against the verified path only (CVE-2016-2402): the
        // unrelated B1 served beside A1 does not count, and a warning says a pin matched off the path.
        for pattern in [Self.host, "*.example.test"] {
            let pinner = try Self.pinner(["\(pattern) \(Self.certB1Sha256Pin)"])
            let served = Fixtures.chain(Self.certA1) + [Fixtures.certificate("rsa-leaf-rotated")]
            let decision = try pinner.evaluate(served, host: Self.host, at: Fixtures.time)
            #expect(!decision.allowsConnection)
            #expect(decision.failures.map(\.code) == [.pinMismatch])
            #expect(decision.warnings.contains { $0.code == .pinOutsideVerifiedPath })
        }
    }

    @Test("testMatchesSha256 / testMatchesSha1")
    func pinMatches() throws {
        let a1 = Fixtures.certificate("rsa-leaf"), b1 = Fixtures.certificate("rsa-leaf-rotated"), c1 = Fixtures.certificate("ec-leaf")
        #expect(try PublicKeyPin(Self.certA1Sha256Pin).matches(a1))
        #expect(try !PublicKeyPin(Self.certA1Sha256Pin).matches(b1))
        let c1Sha1 = try PublicKeyPin(c1.publicKeySHA1Pin.description)
        #expect(c1Sha1.matches(c1))
        #expect(!c1Sha1.matches(b1))
    }

    // MARK: CertificatePinnerKotlinTest: which hosts a pattern pins (findMatchingPins)

    /// The pins OkHttp's `findMatchingPins(host)` returns: the union over every matching pattern.
    static func matchingPins(_ lines: [String], _ host: String) throws -> Set<String> {
        guard let policy = try pinner(lines).policy(for: host) else { return [] }
        var pins = Set<String>()
        for set in policy.pinSets { if case .publicKeys(let pinned) = set.pinning { pins.formUnion(pinned.pins.map(\.description)) } }
        return pins
    }

    static let pinB = Fixtures.referencePins["rsa-leaf-rotated"]!, pinC = Fixtures.referencePins["ec-leaf"]!

    @Test("successfulFindMatchingPins: each host gets its own pattern's pins")
    func findMatchingPins() throws {
        let lines = ["first.com \(Self.certA1Sha256Pin)", "first.com \(Self.pinB)", "second.com \(Self.pinC)"]
        #expect(try Self.matchingPins(lines, "first.com") == [Self.certA1Sha256Pin, Self.pinB])
        #expect(try Self.matchingPins(lines, "second.com") == [Self.pinC])
    }

    @Test("successfulFindMatchingPinsForWildcardAndDirectCertificates: a direct name adds to the wildcard's pins")
    func findMatchingPinsForWildcardAndDirect() throws {
        let lines = ["*.example.com \(Self.certA1Sha256Pin)", "a.example.com \(Self.pinB)", "b.example.com \(Self.pinC)"]
        #expect(try Self.matchingPins(lines, "a.example.com") == [Self.certA1Sha256Pin, Self.pinB])
        #expect(try Self.matchingPins(lines, "b.example.com") == [Self.certA1Sha256Pin, Self.pinC])
        #expect(try Self.matchingPins(lines, "c.example.com") == [Self.certA1Sha256Pin])
    }

    @Test("successfulFindMatchingPinsIgnoresCase: patterns and hosts compare case-insensitively")
    func findMatchingPinsIgnoresCase() throws {
        let lines = ["EXAMPLE.com \(Self.certA1Sha256Pin)", "*.MyExample.Com \(Self.pinB)"]
        #expect(try Self.matchingPins(lines, "example.com") == [Self.certA1Sha256Pin])
        #expect(try Self.matchingPins(lines, "PAYROLL.MyExample.Com") == [Self.pinB])
    }

    @Test("successfulFindMatchingPinPunycode: a Unicode pattern pins its A-label host")
    func findMatchingPinPunycode() throws {
        #expect(try Self.matchingPins(["σkhttp.com \(Self.certA1Sha256Pin)"], "xn--khttp-fde.com") == [Self.certA1Sha256Pin])
    }

    @Test("wildcardHostnameShouldNotMatchThroughDot, doubleWildcardHostnameShouldMatchThroughDot, doubleWildcardHostnameShouldNotMatchSuffix, checkSubstringMatch", arguments: [
        ("*.example.com", "a.example.com", true), ("*.example.com", "example.com", false), ("*.example.com", "a.b.example.com", false),
        ("**.example.com", "example.com", true), ("**.example.com", "a.example.com", true), ("**.example.com", "a.b.example.com", true),
        ("**.example.com", "xample.com", false), ("**.example.com", "barexample.com", false), ("**.example.com", "bar.xample.com", false),
        ("*.example.com", "example.com.notexample.com", false), ("*.example.com", "notexample.com", false), ("*.example.com", "a.notexample.com", false),
    ])
    func patternMatching(pattern: String, host: String, pinned: Bool) throws {
        #expect(try !Self.matchingPins(["\(pattern) \(Self.certA1Sha256Pin)"], host).isEmpty == pinned)
    }

    @Test("successfulCheckSha1Pin: a sha1/ pin of the leaf's key is honoured")
    func checkSha1Pin() throws {
        let pinner = try Self.pinner(["\(Self.host) \(Fixtures.certificate("rsa-leaf").publicKeySHA1Pin)"])
        #expect(try Self.check(pinner, Self.host, Self.certA1))
        #expect(try !Self.check(pinner, Self.host, Self.certB1))
    }
}
