import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// AFNetworking's own test matrix (`Tests/Tests/AFSecurityPolicyTests.m` at d9f589cc), run against
/// `SecurityPolicy` with AFNetworking's fixtures from `../shared/afnetworking/`. Each row is one
/// AFNetworking test, named as there, with the answer it asserts; where Pincheck answers
/// otherwise, the row names the "Where Pincheck differs from AFNetworking" entry of the porting article.
///
/// Two things AFNetworking takes from iOS are given explicitly, as an app on Linux must: the
/// anchors (iOS's store held Amazon Root CA 1 and DigiCert's EV root; here they come from
/// `roots/`), and the time (the fixtures have expired: httpbin and the self-signed ones are
/// judged at 2020-06-01, app.net at 2015-01-01, inside their validity).
enum AFFixtures {
    static let folder = SharedData.url("afnetworking")

    static func certificate(_ name: String) -> Certificate {
        try! Certificate.load(contentsOf: folder.appendingPathComponent("certs/\(name).cer").path)[0]
    }

    /// AFUTHTTPBinOrgServerTrust(): httpbin_0…3, as the directory lists them.
    static var httpBinServerTrust: [Certificate] { (0...3).map { certificate("httpbin_\($0)") } }
    /// AFUTADNNetServerTrust(): adn_0…2.
    static var adnServerTrust: [Certificate] { (0...2).map { certificate("adn_\($0)") } }
    static var httpBin: Certificate { certificate("httpbinorg_02182021") }
    static var amazonAuthority: Certificate { certificate("Amazon") }
    static var amazonRootAuthority: Certificate { certificate("Amazon Root CA 1") }
    static var starfieldServicesRoot: Certificate { certificate("Starfield Services Root Certificate Authority - G2") }
    static var selfSignedWithoutDomain: Certificate { certificate("NoDomains") }
    static var selfSignedWithCommonNameDomain: Certificate { certificate("foobar.com") }
    static var selfSignedWithDNSNameDomain: Certificate { certificate("AltName") }

    /// The roots iOS would have trusted.
    static let anchors: TrustAnchors = {
        let roots = ["Amazon_Root_CA_1", "DigiCert_High_Assurance_EV_Root_CA"].flatMap {
            try! Certificate.load(contentsOf: folder.appendingPathComponent("roots/\($0).pem").path)
        }
        return try! TrustAnchors(certificates: roots)
    }()

    static let httpBinTime = Date(timeIntervalSince1970: 1_590_969_600)   // 2020-06-01T00:00:00Z
    static let adnTime = Date(timeIntervalSince1970: 1_420_070_400)       // 2015-01-01T00:00:00Z

    static func policy(_ mode: SecurityPolicy.PinningMode, pinned: [Certificate] = []) -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: Set(pinned))
        policy.anchors = anchors
        return policy
    }
}

struct AFRow: Sendable, CustomTestStringConvertible {
    let test: String
    let afnetworking: Bool
    /// Pincheck's answer where it deliberately differs, with the porting article's row that says why.
    let pincheck: (answer: Bool, readme: String)?
    let evaluate: @Sendable () -> Bool
    var testDescription: String { test }

    init(_ test: String, _ afnetworking: Bool, differs: (Bool, String)? = nil, _ evaluate: @escaping @Sendable () -> Bool) {
        self.test = test
        self.afnetworking = afnetworking
        self.pincheck = differs.map { (answer: $0.0, readme: $0.1) }
        self.evaluate = evaluate
    }
}

@Suite("AFNetworking's AFSecurityPolicyTests, transcribed", SharedData.requires("afnetworking"))
struct AFSecurityPolicyMatrixTests {
    typealias F = AFFixtures

    static let rows: [AFRow] = [
        // Default policy: positive and negative server trust evaluation.
        AFRow("testDefaultPolicyDoesAllowHTTPBinOrgCertificate", true) {
            F.policy(.none).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testDefaultPolicyDoesAllowHTTPBinOrgCertificateForValidDomainName", true) {
            F.policy(.none).evaluateServerTrust(F.httpBinServerTrust, forDomain: "httpbin.org", at: F.httpBinTime)
        },
        AFRow("testDefaultPolicyDoesNotAllowInvalidCertificate", false) {
            F.policy(.none).evaluateServerTrust([F.selfSignedWithoutDomain], forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testDefaultPolicyDoesNotAllowCertificateWithInvalidDomainName", false) {
            F.policy(.none).evaluateServerTrust(F.httpBinServerTrust, forDomain: "apple.com", at: F.httpBinTime)
        },
        // Public-key pinning.
        AFRow("testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinned", true) {
            F.policy(.publicKey, pinned: [F.httpBin]).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgIntermediateCertificatePinned", true) {
            F.policy(.publicKey, pinned: [F.amazonAuthority]).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgRootCertificatePinned", true) {
            F.policy(.publicKey, pinned: [F.amazonRootAuthority]).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithEntireCertificateChainPinned", true) {
            F.policy(.publicKey, pinned: [F.httpBin, F.amazonAuthority, F.amazonRootAuthority, F.starfieldServicesRoot])
                .evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithPublicKeyPinningAllowsHTTPBirnOrgServerTrustWithHTTPbinOrgPinnedCertificateAndAdditionalPinnedCertificates", true) {
            F.policy(.publicKey, pinned: [F.httpBin, F.selfSignedWithCommonNameDomain])
                .evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndValidDomainName", true) {
            F.policy(.publicKey, pinned: [F.httpBin]).evaluateServerTrust(F.httpBinServerTrust, forDomain: "httpbin.org", at: F.httpBinTime)
        },
        AFRow("testPolicyWithPublicKeyPinningAndNoPinnedCertificatesDoesNotAllowHTTPBinOrgServerTrust", false) {
            F.policy(.publicKey).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithPublicKeyPinningDoesNotAllowADNServerTrustWithHTTPBinOrgPinnedCertificate", false) {
            F.policy(.publicKey, pinned: [F.httpBin]).evaluateServerTrust(F.adnServerTrust, forDomain: nil, at: F.adnTime)
        },
        AFRow("testPolicyWithPublicKeyPinningDoesNotAllowHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndInvalidDomainName", false) {
            F.policy(.publicKey, pinned: [F.httpBin]).evaluateServerTrust(F.httpBinServerTrust, forDomain: "invaliddomainname.com", at: F.httpBinTime)
        },
        AFRow("testPolicyWithPublicKeyPinningDoesNotAllowADNServerTrustWithMultipleInvalidPinnedCertificates", false) {
            F.policy(.publicKey, pinned: [F.httpBin, F.selfSignedWithCommonNameDomain]).evaluateServerTrust(F.adnServerTrust, forDomain: nil, at: F.adnTime)
        },
        // Certificate pinning.
        AFRow("testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinned", true) {
            F.policy(.certificate, pinned: [F.httpBin]).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgIntermediateCertificatePinned", true) {
            F.policy(.certificate, pinned: [F.amazonAuthority]).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgRootCertificatePinned", true) {
            F.policy(.certificate, pinned: [F.amazonRootAuthority]).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithEntireCertificateChainPinned", true) {
            F.policy(.certificate, pinned: [F.httpBin, F.amazonAuthority, F.amazonRootAuthority, F.starfieldServicesRoot])
                .evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithCertificatePinningAllowsHTTPBirnOrgServerTrustWithHTTPbinOrgPinnedCertificateAndAdditionalPinnedCertificates", true) {
            F.policy(.certificate, pinned: [F.httpBin, F.selfSignedWithCommonNameDomain])
                .evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndValidDomainName", true) {
            F.policy(.certificate, pinned: [F.httpBin]).evaluateServerTrust(F.httpBinServerTrust, forDomain: "httpbin.org", at: F.httpBinTime)
        },
        AFRow("testPolicyWithCertificatePinningAndNoPinnedCertificatesDoesNotAllowHTTPBinOrgServerTrust", false) {
            F.policy(.certificate).evaluateServerTrust(F.httpBinServerTrust, forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testPolicyWithCertificatePinningDoesNotAllowADNServerTrustWithHTTPBinOrgPinnedCertificate", false) {
            F.policy(.certificate, pinned: [F.httpBin]).evaluateServerTrust(F.adnServerTrust, forDomain: nil, at: F.adnTime)
        },
        AFRow("testPolicyWithCertificatePinningDoesNotAllowHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndInvalidDomainName", false) {
            F.policy(.certificate, pinned: [F.httpBin]).evaluateServerTrust(F.httpBinServerTrust, forDomain: "invaliddomainname.com", at: F.httpBinTime)
        },
        AFRow("testPolicyWithCertificatePinningDoesNotAllowADNServerTrustWithMultipleInvalidPinnedCertificates", false) {
            F.policy(.certificate, pinned: [F.httpBin, F.selfSignedWithCommonNameDomain]).evaluateServerTrust(F.adnServerTrust, forDomain: nil, at: F.adnTime)
        },
        // Domain name validation.
        AFRow("testThatPolicyWithoutDomainNameValidationAllowsServerTrustWithInvalidDomainName", true) {
            let policy = F.policy(.none)
            policy.validatesDomainName = false
            return policy.evaluateServerTrust(F.httpBinServerTrust, forDomain: "invalid.org", at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithDomainNameValidationAndSelfSignedCommonNameCertificateAllowsServerTrust", true,
              differs: (false, "Host names may match the subject CN")) {
            let policy = F.policy(.publicKey, pinned: [F.selfSignedWithCommonNameDomain])
            policy.allowInvalidCertificates = true
            return policy.evaluateServerTrust([F.selfSignedWithCommonNameDomain], forDomain: "foobar.com", at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithDomainNameValidationAndSelfSignedDNSCertificateAllowsServerTrust", true) {
            let policy = F.policy(.publicKey, pinned: [F.selfSignedWithDNSNameDomain])
            policy.allowInvalidCertificates = true
            return policy.evaluateServerTrust([F.selfSignedWithDNSNameDomain], forDomain: "foobar.com", at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithDomainNameValidationDoesNotAllowServerTrustWithInvalidDomainName", false) {
            F.policy(.none).evaluateServerTrust(F.httpBinServerTrust, forDomain: "invalid.org", at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithDomainNameValidationAndSelfSignedNoDomainCertificateDoesNotAllowServerTrust", false) {
            let policy = F.policy(.certificate, pinned: [F.selfSignedWithoutDomain])
            policy.allowInvalidCertificates = true
            return policy.evaluateServerTrust([F.selfSignedWithoutDomain], forDomain: "foobar.com", at: F.httpBinTime)
        },
        // Self-signed certificates.
        AFRow("testThatPolicyWithInvalidCertificatesAllowedAllowsSelfSignedServerTrust", true) {
            let policy = F.policy(.none)
            policy.allowInvalidCertificates = true
            return policy.evaluateServerTrust([F.selfSignedWithDNSNameDomain], forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithInvalidCertificatesAllowedAndValidPinnedCertificatesDoesAllowSelfSignedServerTrustForValidDomainName", true) {
            let policy = F.policy(.publicKey, pinned: [F.selfSignedWithDNSNameDomain])
            policy.allowInvalidCertificates = true
            return policy.evaluateServerTrust([F.selfSignedWithDNSNameDomain], forDomain: "foobar.com", at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithInvalidCertificatesAllowedAndNoSSLPinningAndDomainNameValidationDisabledDoesAllowSelfSignedServerTrustForValidDomainName", true) {
            let policy = F.policy(.none)
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = false
            return policy.evaluateServerTrust([F.selfSignedWithDNSNameDomain], forDomain: "foobar.com", at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithInvalidCertificatesDisabledDoesNotAllowSelfSignedServerTrust", false) {
            F.policy(.none).evaluateServerTrust([F.selfSignedWithDNSNameDomain], forDomain: nil, at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithInvalidCertificatesAllowedAndNoPinnedCertificatesAndPublicKeyPinningModeDoesNotAllowSelfSignedServerTrustForValidDomainName", false) {
            let policy = F.policy(.publicKey)
            policy.allowInvalidCertificates = true
            return policy.evaluateServerTrust([F.selfSignedWithDNSNameDomain], forDomain: "foobar.com", at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithInvalidCertificatesAllowedAndValidPinnedCertificatesAndNoPinningModeDoesNotAllowSelfSignedServerTrustForValidDomainName", false) {
            let policy = F.policy(.none, pinned: [F.selfSignedWithDNSNameDomain])
            policy.allowInvalidCertificates = true
            return policy.evaluateServerTrust([F.selfSignedWithDNSNameDomain], forDomain: "foobar.com", at: F.httpBinTime)
        },
        AFRow("testThatPolicyWithInvalidCertificatesAllowedAndNoValidPinnedCertificatesAndNoPinningModeAndDomainValidationDoesNotAllowSelfSignedServerTrustForValidDomainName", false) {
            let policy = F.policy(.none)
            policy.allowInvalidCertificates = true
            return policy.evaluateServerTrust([F.selfSignedWithDNSNameDomain], forDomain: "foobar.com", at: F.httpBinTime)
        },
    ]

    @Test("each AFNetworking test gets its answer, or the documented difference (the Porting from AFNetworking article)", arguments: rows)
    func row(_ row: AFRow) {
        let expected = row.pincheck?.answer ?? row.afnetworking
        #expect(row.evaluate() == expected, "\(row.test): AFNetworking asserts \(row.afnetworking)")
    }

    @Test("every deliberate difference is a row of the porting article's table")
    func differencesDocumented() throws {
        let article = try String(contentsOf: Fixtures.root.deletingLastPathComponent()
            .appendingPathComponent("Sources/TrustEvaluatorCore/TrustEvaluatorCore.docc/PortingFromAFNetworking.md"), encoding: .utf8)
        let section = try #require(article.components(separatedBy: "## Where Pincheck differs from AFNetworking").dropFirst().first)
        let table = section.components(separatedBy: "\n## ")[0]
        for row in Self.rows { if let difference = row.pincheck { #expect(table.contains(difference.readme), "\(row.test)") } }
        for entry in Self.notApplicable { #expect(table.contains(entry.readme), "\(entry.test)") }
    }

    /// AFNetworking tests without a counterpart, each with its row in the porting article.
    static let notApplicable: [(test: String, readme: String)] = [
        ("testPolicyWithPublicKeyPinningModeHasPinnedCertificates / testPolicyWithCertificatePinningModeHasPinnedCertificates",
         "`policyWithPinningMode:` pins every `.cer` in the app bundle"),
        ("testThatPolicyCanBeCopied / testThatPolicyCanBeEncodedAndDecoded", "`NSCopying` and `NSSecureCoding`"),
    ]

    // AFNetworking's four testDefaultPolicy… value tests (mode none, invalid certificates refused,
    // names validated, nothing pinned) are SecurityPolicyTests.defaults.

    @Test("test…HasHTTPBinOrgPinnedCertificate: certificates(inDirectory:) finds httpbin.org's certificate once")
    func certificatesInDirectory() throws {
        let all = try SecurityPolicy.certificates(inDirectory: F.folder.appendingPathComponent("certs").path)
        #expect(all.filter { $0 == F.httpBin }.count == 1)
        for mode in [SecurityPolicy.PinningMode.publicKey, .certificate] {
            #expect(SecurityPolicy(pinningMode: mode, pinnedCertificates: all).pinnedCertificates.contains(F.httpBin))
        }
    }

    @Test("the app.net rows are refused for their pins, not only for their SHA-1 signatures")
    func adnRefusedForPins() throws {
        // app.net's 2014 chain is signed with SHA-1, which the strict profile refuses today; with
        // OpenSSL's checks alone it verifies, and the httpbin.org pins still do not match it.
        for pinning in [TrustPolicy.Pinning.publicKeys(try PinnedPublicKeys(certificates: [F.httpBin])),
                        .certificates(try PinnedCertificates([F.httpBin]))] {
            var policy = TrustPolicy(pinning: pinning, anchors: F.anchors)
            policy.validation.profile = .openSSLOnly(because: "a 2014 chain signed with SHA-1")
            let verdict = try Evaluator(policy: policy).evaluate(F.adnServerTrust, host: nil, at: F.adnTime)
            #expect(verdict.failures.map(\.code) == [.pinMismatch])
            policy.pinning = .none
            #expect(try Evaluator(policy: policy).evaluate(F.adnServerTrust, host: "app.net", at: F.adnTime).isTrusted)
        }
    }
}
