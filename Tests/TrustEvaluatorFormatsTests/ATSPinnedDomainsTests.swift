import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Apple's `NSPinnedDomains` (App Transport Security): leaf identities match the leaf only, CA
/// identities a certificate above it (the anchor included), both lists must both match, and an
/// empty list blocks the domain.
@Suite("Apple NSPinnedDomains importer")
struct ATSPinnedDomainsTests {
    static func base64(_ name: String) -> String { String(Fixtures.referencePins[name]!.dropFirst("sha256/".count)) }

    static func plist(_ domains: [String: (subdomains: Bool?, leaf: [String]?, ca: [String]?)], extra: String = "") -> String {
        func identities(_ names: [String]) -> String {
            "<array>" + names.map { "<dict><key>SPKI-SHA256-BASE64</key><string>\(base64($0))</string></dict>" }.joined() + "</array>"
        }
        var body = ""
        for (domain, settings) in domains.sorted(by: { $0.key < $1.key }) {
            body += "<key>\(domain)</key><dict>"
            if let subdomains = settings.subdomains { body += "<key>NSIncludesSubdomains</key><\(subdomains)/>" }
            if let leaf = settings.leaf { body += "<key>NSPinnedLeafIdentities</key>\(identities(leaf))" }
            if let ca = settings.ca { body += "<key>NSPinnedCAIdentities</key>\(identities(ca))" }
            body += extra + "</dict>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>NSAppTransportSecurity</key><dict><key>NSPinnedDomains</key><dict>\(body)</dict></dict></dict></plist>
            """
    }

    static func manager(_ text: String) throws -> TrustManager {
        try Configuration.decode(Data(text.utf8), source: "Info.plist", baseDirectory: ".", anchors: Fixtures.anchors,
                                 publicSuffixes: Fixtures.psl).trustManager
    }

    static func allows(_ leaf: [String]?, _ ca: [String]?, host: String = "www.example.test", subdomains: Bool? = nil) throws -> Verdict {
        try manager(plist(["www.example.test": (subdomains, leaf, ca)])).evaluate(Fixtures.chain("rsa-good"), host: host, at: Fixtures.time)
    }

    @Test("an Info.plist with NSPinnedDomains is recognised as ATS; one with TrustKit's keys stays TrustKit")
    func detection() throws {
        #expect(ConfigurationImporter.detect(Data(Self.plist(["a.example.test": (nil, ["rsa-leaf"], nil)]).utf8)) == .ats)
        guard SharedData.has("peers/fixtures/apple") else { return }
        let shared = try Data(contentsOf: SharedData.url("peers/fixtures/apple/Info.plist"))
        #expect(ConfigurationImporter.detect(shared) == .ats)
        #expect(try ConfigurationImporter.pincheckJSON(from: shared, source: "Info.plist").contains("\"leafPins\""))
    }

    @Test("leaf identities match the leaf and nothing above it", arguments: [("rsa-leaf", true), ("rsa-intermediate", false), ("rsa-root", false)])
    func leafIdentities(name: String, trusted: Bool) throws {
        let decision = try Self.allows([name], nil)
        #expect(decision.allowsConnection == trusted, "\(decision.failures)")
        if !trusted { #expect(decision.failures.map(\.code) == [.pinMismatch]) }
    }

    @Test("CA identities match a certificate above the leaf, the anchor included, and not the leaf",
          arguments: [("rsa-intermediate", true), ("rsa-root", true), ("rsa-leaf", false)])
    func caIdentities(name: String, trusted: Bool) throws {
        #expect(try Self.allows(nil, [name]).allowsConnection == trusted)
    }

    @Test("with both lists, both must match")
    func both() throws {
        #expect(try Self.allows(["rsa-leaf"], ["rsa-root"]).allowsConnection)
        #expect(try !Self.allows(["rsa-leaf"], ["attacker-root"]).allowsConnection)
        #expect(try !Self.allows(["rsa-leaf-rotated"], ["rsa-root"]).allowsConnection)
    }

    @Test("an empty list blocks the domain, even for a valid chain")
    func emptyBlocks() throws {
        let leafEmpty = try Self.allows([], nil)
        #expect(!leafEmpty.allowsConnection)
        #expect(leafEmpty.failures.map(\.code) == [.pinMismatch])
        #expect(try !Self.allows(["rsa-leaf"], []).allowsConnection)
    }

    @Test("NSIncludesSubdomains covers the names below; without it they are unpinned")
    func subdomains() throws {
        let covered = try Self.manager(Self.plist(["example.test": (true, ["attacker-leaf"], nil)]))
        #expect(try covered.policy(for: "www.example.test") != nil)
        #expect(try !covered.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time).allowsConnection)
        let exact = try Self.manager(Self.plist(["example.test": (false, ["attacker-leaf"], nil)]))
        #expect(try exact.policy(for: "www.example.test") == nil)
        #expect(try exact.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time).disposition == .performDefaultHandling)
    }

    @Test("unknown keys and other identity kinds are errors", arguments: [
        "<key>NSPinnedEverything</key><true/>",
        "<key>NSPinnedLeafIdentities</key><array><dict><key>SPKI-SHA1-BASE64</key><string>AAAA</string></dict></array>",
    ])
    func refusals(extra: String) {
        #expect(throws: PincheckError.self) {
            try Self.manager(Self.plist(["a.example.test": (nil, nil, ["rsa-root"])], extra: extra))
        }
    }
}
