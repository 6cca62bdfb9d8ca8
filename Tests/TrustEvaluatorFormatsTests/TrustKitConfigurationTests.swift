import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// TrustKit's `TSKPinConfigurationTests` (datatheorem/TrustKit, TrustKitTests), over the
/// configurations in `../shared/peers/fixtures/trustkit/` (TrustKit's shapes, another PKI's pins):
/// which configurations TrustKit refuses to load, and which policy each host gets.
@Suite("TrustKit: TSKPinConfigurationTests, transcribed", SharedData.requires("peers/fixtures/trustkit"))
struct TrustKitConfigurationTests {
    static let folder = SharedData.url("peers/fixtures/trustkit")

    static func load(_ name: String) throws -> TrustManager {
        let data = try Data(contentsOf: folder.appendingPathComponent("\(name).plist"))
        return try Configuration.decode(data, source: name, baseDirectory: ".", anchors: Fixtures.anchors).trustManager
    }

    /// The tests whose configuration TrustKit's parseTrustKitConfiguration refuses (XCTAssertThrows).
    @Test("configurations TrustKit refuses are refused", arguments: [
        "testPinOnePublicKey",                                        // an enforced domain with one pin
        "testNokTSKSwizzleNetworkDelegates",                          // the same, in a global-settings test
        "testDisablePinningForSubdomainWithoutParentAndNoPublicKey",  // an exclusion without a parent policy
        "testDisablePinningForSubdomainWithoutParentAndNoPublicKey.documented-key",
        "testDisablePinningForSubdomainAdditionalDomainKeys",         // an exclusion with other keys
        "testIncludeSubdomainsEnabledForSuffix",                      // includeSubdomains on "com"
        "testNoPinnedDomains",                                        // no TSKPinnedDomains
    ])
    func refused(name: String) {
        let error = #expect(throws: PincheckError.self) { try Self.load(name) }
        #expect(error?.code == .invalidPolicy)
    }

    @Test("configurations TrustKit loads are loaded", arguments: [
        "testDisablePinningForSubdomainAndNoPublicKey", "testExplicitNotDisablePinningForSubdomainAdditionalDomainKeys",
        "testGetConfigurationPinningEnabled", "testGetConfigurationPinningEnabledWithExpirationDate", "testGetConfigurationPinningDisabled",
        "testIncludeSubdomainsEnabled", "testIncludeSubdomainsEnabledSameDomain", "testIncludeSubdomainsEnabledSubSubDomain",
        "testIncludeSubdomainsEnabledNotSubdomain", "testIncludeSubdomainsEnabledNotSubdomainDifferentTld", "testIncludeSubdomainsDisabled",
        "testIncludeSubdomainsEnabledAndSpecificConfiguration", "testIncludeSubdomainsEnabledAndOverlap",
        "testDomainTldAndParentFromServerConfigDoesNotCrash",
    ])
    func loaded(name: String) throws {
        #expect(!(try Self.load(name).policies.isEmpty))
    }

    /// getPinningConfigurationKeyForDomain: the policy a host gets (nil: none).
    @Test("each host gets the policy TrustKit gives it", arguments: [
        ("testDisablePinningForSubdomainAndNoPublicKey", "unsecured.good.com", "unsecured.good.com"),
        ("testIncludeSubdomainsEnabled", "www.good.com", "good.com"),
        ("testIncludeSubdomainsEnabledSameDomain", "good.com", "good.com"),
        ("testIncludeSubdomainsEnabledSubSubDomain", "sub.www.good.com.www.good.com", "www.good.com"),
        ("testIncludeSubdomainsEnabledNotSubdomain", "good.com.otherdomaingood.com", nil),
        ("testIncludeSubdomainsEnabledNotSubdomainDifferentTld", "test.good.com", nil),
        ("testIncludeSubdomainsDisabled", "www.good.com", nil),
        ("testIncludeSubdomainsEnabledAndSpecificConfiguration", "www.good.com", "www.good.com"),
        ("testIncludeSubdomainsEnabledAndOverlap", "foo.www.good.com", "www.good.com"),
    ] as [(String, String, String?)])
    func policyForHost(name: String, host: String, expected: String?) throws {
        let policy = try Self.load(name).policy(for: host)
        #expect(policy.map { $0.pattern.base } == expected)
    }

    @Test("an excluded subdomain gets no pins: default validation, still checked")
    func exclusion() throws {
        let manager = try Self.load("testDisablePinningForSubdomainAndNoPublicKey")
        #expect(try manager.policy(for: "unsecured.good.com")?.pinSets.isEmpty == true)
        #expect(try manager.policy(for: "www.good.com")?.pinSets.isEmpty == false)
    }

    @Test("TrustKit's run-time spelling of the exclusion key, kSKExcludeSubdomainFromParentPolicy, is read")
    func exclusionKeySpelling() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>TSKPinnedDomains</key><dict>
              <key>good.com</key><dict><key>TSKIncludeSubdomains</key><true/><key>TSKPublicKeyHashes</key><array>
                <string>\(Fixtures.referencePins["rsa-leaf"]!.dropFirst(7))</string><string>\(Fixtures.referencePins["rsa-root"]!.dropFirst(7))</string></array></dict>
              <key>unsecured.good.com</key><dict><key>kSKExcludeSubdomainFromParentPolicy</key><true/></dict>
            </dict></dict></plist>
            """
        let manager = try Configuration.decode(Data(plist.utf8), source: "Info.plist", baseDirectory: ".", anchors: Fixtures.anchors).trustManager
        #expect(try manager.policy(for: "unsecured.good.com")?.pinSets.isEmpty == true)
    }
}
