import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats
import PincheckOpenSSL

/// x509-limbo cases (StrictWebPKIVectors.json) that one strict check must trip, and cases the
/// strict profile must still accept.
struct StrictVector: Decodable, Sendable, CustomTestStringConvertible {
    let id: String
    let expected: String
    let kind: String
    let trusted: [String]
    let intermediates: [String]
    let peer: String
    let crls: [String]
    let time: String?
    let keyUsage: [String]
    let host: String?
    /// Text of the failure the responsible check must report (only for FAILURE vectors).
    let fragment: String?
    /// Text of the warning a check demoted by the real world must give on a trusted chain
    /// (docs/conformance.md, "The strict profile against the real world").
    let warning: String?

    var testDescription: String { id }

    static let all: [StrictVector] = {
        struct File: Decodable { let vectors: [StrictVector] }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("StrictWebPKIVectors.json")
        return try! JSONDecoder().decode(File.self, from: Data(contentsOf: url)).vectors + publicSuffixCases
    }()

    /// The public-suffix wildcard cases and Amazon's real S3 certificate, read from the suite in
    /// `../shared/limbo/` (third-party data stays there), with what Pincheck answers.
    static let publicSuffixCases: [StrictVector] = {
        struct Suite: Decodable {
            struct Case: Decodable {
                struct Name: Decodable { let value: String }
                let id: String
                let trusted_certs: [String]
                let untrusted_intermediates: [String]
                let peer_certificate: String
                let validation_time: String?
                let expected_peer_name: Name?
            }
            let testcases: [Case]
        }
        let expectations: [String: (String, String?)] = [
            "webpki::san::public-suffix-wildcard-san": ("FAILURE", "it names *.com"),
            "webpki::san::public-suffix-multi-label-wildcard-san": ("FAILURE", "a wildcard over a public registry"),
            "webpki::san::public-suffix-private-namespace-wildcard-san": ("SUCCESS", nil),
            "online::s3.amazonaws.com": ("SUCCESS", nil),
        ]
        let url = SharedData.url("limbo/data/limbo.json")
        guard let data = try? Data(contentsOf: url), let suite = try? JSONDecoder().decode(Suite.self, from: data) else { return [] }
        return suite.testcases.compactMap { testcase in
            guard let (expected, fragment) = expectations[testcase.id] else { return nil }
            return StrictVector(id: testcase.id, expected: expected, kind: "SERVER", trusted: testcase.trusted_certs,
                                intermediates: testcase.untrusted_intermediates, peer: testcase.peer_certificate, crls: [],
                                time: testcase.validation_time, keyUsage: [], host: testcase.expected_peer_name?.value,
                                fragment: fragment, warning: nil)
        }
    }()
    static let tripping = all.filter { $0.fragment != nil }
    static let accepted = all.filter { $0.expected == "SUCCESS" }

    /// Evaluates the vector as the limbo harness does, through the public API.
    /// - Parameter webPKIRoots: Whether the vector's roots stand for a Web PKI root store, as the
    ///   harness declares them; false evaluates the same chain under a private anchor.
    func evaluate(profile: ValidationPolicy.Profile = .strictWebPKI, webPKIRoots: Bool = true) throws -> Verdict {
        let anchors = try TrustAnchors(certificates: trusted.map { try Certificate(pemEncoded: $0) }, classification: webPKIRoots ? .webPKI : .privatePKI)
        var policy = TrustPolicy(anchors: anchors, additionalIntermediates: try intermediates.map { try Certificate(pemEncoded: $0) })
        policy.validation.profile = profile
        policy.validation.revocationLists = try crls.map { try CertificateRevocationList(pemEncoded: $0) }
        if keyUsage.contains("digitalSignature") { policy.validation.requiredKeyUsages = [.digitalSignature] }
        if kind == "CLIENT" {
            policy.validation.purpose = .clientAuthentication
            policy.validation.nameValidation = .disabled(because: "client certificate")
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = time.flatMap { ISO8601DateFormatter().date(from: $0) ?? formatter.date(from: $0) }
            ?? Date(timeIntervalSince1970: 1_782_691_200) // 2026-06-29, the suite snapshot's date: limbo's "now" is never the real clock here
        return try Evaluator(policy: policy).evaluate([try Certificate(pemEncoded: peer)], host: kind == "CLIENT" ? nil : host, at: at)
    }
}

@Suite("Strict Web PKI profile: each check trips on an x509-limbo case, and good chains pass")
struct StrictWebPKITests {
    @Test("the responsible check rejects the chain", arguments: StrictVector.tripping)
    func trips(vector: StrictVector) throws {
        let verdict = try vector.evaluate()
        #expect(!verdict.isTrusted)
        let fragment = try #require(vector.fragment)
        #expect(verdict.failures.contains { $0.message.contains(fragment) }, "\(verdict.failures)")
    }

    /// The Baseline Requirements rows no verifier enforces: they refuse a chain to a Web PKI root
    /// and only warn under a private anchor (trustme, certipy and easy-rsa make such chains).
    @Test("under a private anchor, the Baseline Requirements rows no verifier enforces only warn", arguments: [
        ("webpki::san::san-critical-with-nonempty-subject", "subjectAltName is critical"),
        ("webpki::eku::root-has-eku", "has an extendedKeyUsage extension"),
        ("webpki::cn::not-in-san", "does not list"),
        ("rfc5280::serial::zero", "serial number zero"), ("rfc5280::serial::too-long", "octets"),
        ("webpki::aki::root-with-aki-missing-keyidentifier", "without a keyIdentifier"),
    ])
    func privateAnchor(id: String, fragment: String) throws {
        let vector = try #require(StrictVector.all.first { $0.id == id })
        #expect(!(try vector.evaluate()).isTrusted)
        let verdict = try vector.evaluate(webPKIRoots: false)
        #expect(verdict.isTrusted, "\(verdict.failures)")
        #expect(verdict.warnings.contains { $0.code == .profileViolation && $0.requirement == .profile && $0.message.contains(fragment) && $0.message.contains("private anchor") },
                "\(verdict.warnings)")
    }

    @Test("a check the real world overrules warns, and the chain is trusted",
          arguments: StrictVector.all.filter { $0.warning != nil })
    func warns(vector: StrictVector) throws {
        let verdict = try vector.evaluate()
        #expect(verdict.isTrusted, "\(verdict.failures)")
        let warning = try #require(vector.warning)
        #expect(verdict.warnings.contains { $0.code == .profileViolation && $0.message.contains(warning) }, "\(verdict.warnings)")
    }

    @Test("without the strict profile OpenSSL alone accepts these chains: the check is what rejects them",
          arguments: StrictVector.tripping.filter { $0.fragment != "no cRLNumber" && !$0.id.hasPrefix("webpki::san::public-suffix") })
    func openSSLAloneAccepts(vector: StrictVector) throws {
        #expect(try vector.evaluate(profile: .openSSLOnly(because: "test")).isTrusted)
    }

    @Test("valid chains pass the strict profile (wildcards, exact notAfter, alternate paths, CRLs, client names)",
          arguments: StrictVector.accepted)
    func accepts(vector: StrictVector) throws {
        let verdict = try vector.evaluate()
        #expect(verdict.isTrusted, "\(verdict.failures)")
    }

    @Test("the public-suffix cases are read from ../shared/limbo", SharedData.requires("limbo"))
    func publicSuffixCasesPresent() {
        #expect(StrictVector.publicSuffixCases.count == 4)
    }

    @Test("the committed test PKI passes the strict profile")
    func testPKI() throws {
        for chain in ["rsa-good", "ec-good", "ec-p384", "ec-p521", "ed25519", "ed448", "rsa-deep", "rsa-wildcard", "rsa-nc-good"] {
            let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: chain, host: chain == "rsa-nc-good" ? "www.allowed.test" : Fixtures.host)
            #expect(verdict.isTrusted, "\(chain): \(verdict.failures)")
        }
    }

    @Test("a CRL without a cRLNumber is refused; one with it is used")
    func crlNumber() throws {
        let missing = try #require(StrictVector.all.first { $0.id == "crl::crlnumber-missing" })
        let present = try #require(StrictVector.all.first { $0.id == "crl::certificate-not-on-crl" })
        #expect(try !CertificateRevocationList(pemEncoded: missing.crls[0]).hasNumber)
        #expect(try CertificateRevocationList(pemEncoded: present.crls[0]).hasNumber)
    }
}

@Suite("Strict Web PKI profile: the rules over plain values")
struct StrictRuleTests {
    @Test("DNS name syntax", arguments: [
        ("example.com", true), ("*.example.com", true), ("w*.example.com", true), ("xn--n3h.example", true),
        ("foo_bar.example.com", false), (".example.com", false), ("*.com", false), ("f*o*.example.com", false),
        ("example..com", false), ("-a.example.com", false), ("a.*.example.com", false), ("", false),
    ])
    func dnsNameSyntax(name: String, valid: Bool) {
        #expect(DNSNameSyntax.isValid(name, allowWildcard: true) == valid)
    }

    @Test("the byte-level DNS name check agrees with a plain reading of the rules on generated names")
    func dnsNameSyntaxDifferential() {
        // The rules written the obvious way (labels as strings): the reference for the fast version.
        func reference(_ name: String, _ allowWildcard: Bool) -> Bool {
            func label(_ text: Substring) -> Bool {
                let bytes = Array(text.utf8)
                guard !bytes.isEmpty, bytes.count <= 63, bytes.first != 0x2D, bytes.last != 0x2D else { return false }
                return bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
            }
            guard !name.isEmpty, name.utf8.count <= 253 else { return false }
            let labels = name.split(separator: ".", omittingEmptySubsequences: false)
            for (index, text) in labels.enumerated() {
                if index == 0, allowWildcard, labels.count > 2, text.filter({ $0 == "*" }).count == 1 {
                    let rest = text.filter { $0 != "*" }
                    if rest.isEmpty || label(Substring(rest)) { continue }
                }
                guard label(text) else { return false }
            }
            return true
        }
        let alphabet = Array("aZ09-*._é")
        var generator = SplitMix(seed: 1034)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...12, using: &generator)
            let name = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            for allowWildcard in [true, false] {
                #expect(DNSNameSyntax.isValid(name, allowWildcard: allowWildcard) == reference(name, allowWildcard), "\(name)")
            }
        }
        let long = String(repeating: "a", count: 63) + "." + String(repeating: "b", count: 64)
        #expect(DNSNameSyntax.isValid(long, allowWildcard: true) == reference(long, true))
    }

    @Test("name constraint bases are host names without a leading period or wildcard")
    func constraintSyntax() {
        #expect(DNSNameSyntax.isValid("example.com", allowWildcard: false))
        #expect(!DNSNameSyntax.isValid(".example.com", allowWildcard: false))
        #expect(!DNSNameSyntax.isValid("*.example.com", allowWildcard: false))
    }

    @Test("a subject CN is refused when it respells a SAN or names a sibling host; unrelated CNs are tolerated")
    func commonName() {
        #expect(SubjectCommonNameCheck.problem("Example.COM", dnsNames: ["example.com"], addresses: []) != nil)
        // A sibling host is a Baseline Requirements row, not a respelling (refused on the Web PKI only).
        #expect(SubjectCommonNameCheck.problem("other.example.com", dnsNames: ["www.example.com"], addresses: []) == nil)
        #expect(SubjectCommonNameCheck.namesUnlistedHost("other.example.com", dnsNames: ["www.example.com"]))
        #expect(!SubjectCommonNameCheck.namesUnlistedHost("EE", dnsNames: ["localhost"]))
        #expect(SubjectCommonNameCheck.problem("192.168.001.001", dnsNames: [], addresses: ["192.168.1.1"]) != nil)
        #expect(SubjectCommonNameCheck.problem("2001:DB8::1", dnsNames: [], addresses: ["2001:db8::1"]) != nil)
        #expect(SubjectCommonNameCheck.problem("EE", dnsNames: ["localhost"], addresses: []) == nil)
        #expect(SubjectCommonNameCheck.problem("example.com", dnsNames: ["foo.bar.example.com"], addresses: []) == nil)
        #expect(SubjectCommonNameCheck.problem("1.1.1.1", dnsNames: ["test.localhost"], addresses: ["127.0.0.1"]) == nil)
    }

    @Test("serial numbers: positive, non-zero, at most 20 octets")
    func serialNumbers() {
        func facts(_ magnitude: [UInt8], negative: Bool = false) -> CertificateFacts {
            var facts = CertificateFacts()
            facts.serialMagnitude = magnitude
            facts.serialIsNegative = negative
            return facts
        }
        #expect(SerialNumberCheck.problem(facts([0x01])) == nil)
        #expect(SerialNumberCheck.problem(facts([UInt8](repeating: 0x7F, count: 20))) == nil)
        #expect(SerialNumberCheck.problem(facts([])) != nil)
        #expect(SerialNumberCheck.problem(facts([0x00])) != nil)
        #expect(SerialNumberCheck.problem(facts([0x05], negative: true)) != nil)
        #expect(SerialNumberCheck.problem(facts([UInt8](repeating: 0x80, count: 20))) != nil, "21 octets once DER adds the sign byte")
    }

    @Test("public keys: RSA ≥ 2048 and a multiple of 8, ECDSA on P-256/384/521, EdDSA; nothing else")
    func publicKeys() {
        #expect(PublicKeyAlgorithmCheck.problem(with: PublicKeyDescription(algorithm: .rsa, bits: 2048)) == nil)
        #expect(PublicKeyAlgorithmCheck.problem(with: PublicKeyDescription(algorithm: .rsa, bits: 1024)) != nil)
        #expect(PublicKeyAlgorithmCheck.problem(with: PublicKeyDescription(algorithm: .rsa, bits: 2052)) != nil)
        #expect(PublicKeyAlgorithmCheck.problem(with: PublicKeyDescription(algorithm: .ecdsa(curve: "prime256v1"), bits: 256)) == nil)
        #expect(PublicKeyAlgorithmCheck.problem(with: PublicKeyDescription(algorithm: .ecdsa(curve: "prime192v1"), bits: 192)) != nil)
        #expect(PublicKeyAlgorithmCheck.problem(with: PublicKeyDescription(algorithm: .ed25519, bits: 253)) == nil)
        #expect(PublicKeyAlgorithmCheck.problem(with: PublicKeyDescription(algorithm: .unknown("DSA"), bits: 2048)) != nil)
    }

    @Test("email SANs are mailboxes with one @ and a host name")
    func emailAddresses() {
        #expect(EmailAddressCheck.isValid("foo@example.com"))
        #expect(!EmailAddressCheck.isValid("invalid@address@example.com"))
        #expect(!EmailAddressCheck.isValid("@example.com"))
        #expect(!EmailAddressCheck.isValid("foo@.example.com"))
    }
}
