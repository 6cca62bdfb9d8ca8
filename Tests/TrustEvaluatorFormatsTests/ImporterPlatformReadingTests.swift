import Foundation
import Testing
import PincheckTestSupport
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Importers read what the app's platform reads, and refuse what it refuses: a value read
/// differently here would unpin what the app pins.
@Suite("Importers: the platform's reading of booleans and refusals")
struct ImporterPlatformReadingTests {
    static let pinA = Fixtures.referencePins["rsa-intermediate"]!.dropFirst("sha256/".count)
    static let pinB = Fixtures.referencePins["attacker-root"]!.dropFirst("sha256/".count)

    static func trustKit(includeSubdomains value: String) -> Data {
        Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>TSKPinnedDomains</key><dict>
              <key>example.test</key><dict>
                <key>TSKIncludeSubdomains</key>\(value)
                <key>TSKPublicKeyHashes</key><array><string>\(pinA)</string><string>\(pinB)</string></array>
              </dict>
            </dict></dict></plist>
            """.utf8)
    }

    /// NSNumber's and NSString's -boolValue, as TrustKit reads TSKIncludeSubdomains.
    @Test("TSKIncludeSubdomains is read with -boolValue", arguments: [
        ("<true/>", true), ("<false/>", false), ("<integer>1</integer>", true), ("<integer>0</integer>", false),
        ("<integer>7</integer>", true), ("<real>0.5</real>", true), ("<string>YES</string>", true), ("<string>yes</string>", true),
        ("<string>true</string>", true), ("<string>1</string>", true), ("<string> +007</string>", true), ("<string>NO</string>", false),
        ("<string>false</string>", false), ("<string>0</string>", false), ("<string></string>", false), ("<string>maybe</string>", false),
    ])
    func includeSubdomains(value: String, expected: Bool) throws {
        let manager = try Configuration.decode(Self.trustKit(includeSubdomains: value), source: "Info.plist", baseDirectory: ".",
                                               anchors: Fixtures.anchors).trustManager
        #expect(try (manager.policy(for: "www.example.test") != nil) == expected)
        #expect(try manager.policy(for: "example.test") != nil)
    }

    @Test("a TrustKit flag that has no -boolValue (data, a date, an array) is refused: TrustKit would raise", arguments: [
        "<data>AA==</data>", "<date>2030-01-01T00:00:00Z</date>", "<array/>", "<dict/>",
    ])
    func flagWithoutBoolValue(value: String) {
        let error = #expect(throws: PincheckError.self) {
            try Configuration.decode(Self.trustKit(includeSubdomains: value), source: "Info.plist", baseDirectory: ".")
        }
        #expect(error?.message.contains("TSKIncludeSubdomains") == true)
    }

    @Test("an Android domain-config without a <domain> is refused, as XmlConfigSource refuses it")
    func androidDomainConfigWithoutDomain() {
        let xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <network-security-config>
              <domain-config>
                <pin-set><pin digest="SHA-256">\(Self.pinA)</pin><pin digest="SHA-256">\(Self.pinB)</pin></pin-set>
              </domain-config>
            </network-security-config>
            """
        let error = #expect(throws: PincheckError.self) {
            try Configuration.decode(Data(xml.utf8), source: "network_security_config.xml", baseDirectory: ".")
        }
        #expect(error?.message.contains("No domain elements in domain-config") == true)
    }

    @Test("an ATS NSIncludesSubdomains that is not a Boolean is refused, not read as false")
    func atsNonBoolean() {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>NSAppTransportSecurity</key><dict><key>NSPinnedDomains</key><dict>
              <key>example.test</key><dict><key>NSIncludesSubdomains</key><string>YES</string>
                <key>NSPinnedCAIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>\(Self.pinA)</string></dict></array>
              </dict></dict></dict></dict></plist>
            """
        let error = #expect(throws: PincheckError.self) {
            try Configuration.decode(Data(plist.utf8), source: "Info.plist", baseDirectory: ".")
        }
        #expect(error?.message.contains("NSIncludesSubdomains") == true)
    }

    @Test("an XML property list with two root values, or two <plist> elements, is refused", arguments: [
        "<plist version=\"1.0\"><dict><key>TSKPinnedDomains</key><dict/></dict><dict/></plist>",
        "<plist version=\"1.0\"><dict><key>TSKPinnedDomains</key><dict/></dict></plist><plist><dict/></plist>",
    ])
    func twoRoots(plist: String) {
        let error = #expect(throws: PincheckError.self) {
            try Configuration.decode(Data(plist.utf8), source: "Info.plist", baseDirectory: ".", format: .trustKit)
        }
        #expect(error?.message.contains("not a property list") == true)
    }
}

/// What `plan --next` and `--backup` accept as the key a server will use.
@Suite("plan's keys: only keys a server certificate can carry, only CSRs that verify")
struct PlanKeyTests {
    static func key(_ arguments: [String]) throws -> [UInt8] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-keys-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/key.pem"
        #expect(try OpenSSLCLI.run(["genpkey"] + arguments + ["-out", path]) == 0)
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("key-agreement, DSA and short RSA keys are refused", arguments: [
        ["-algorithm", "X25519"], ["-algorithm", "X448"], ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"],
    ])
    func refused(arguments: [String]) throws {
        let error = #expect(throws: PincheckError.self) { try PublicKeyFile.read(try Self.key(arguments), source: "next.key") }
        #expect(error?.code == .invalidPolicy)
    }

    @Test("the keys servers use are read", arguments: [
        ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], ["-algorithm", "ED25519"], ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
    ])
    func accepted(arguments: [String]) throws {
        #expect(try PublicKeyFile.read(try Self.key(arguments), source: "next.key") != nil)
    }

    @Test("a CSR whose signature does not verify is refused")
    func brokenCSR() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-csr-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try OpenSSLCLI.run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=next.example.test",
                                    "-keyout", folder + "/k.pem", "-outform", "DER", "-out", folder + "/r.der"]) == 0)
        var der = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/r.der")))
        let good = "-----BEGIN CERTIFICATE REQUEST-----\n\(Data(der).base64EncodedString(options: .lineLength64Characters))\n-----END CERTIFICATE REQUEST-----\n"
        #expect(try PublicKeyFile.read(Array(good.utf8), source: "r.pem") != nil)
        der[der.count - 3] ^= 0x01   // inside the signature
        let broken = "-----BEGIN CERTIFICATE REQUEST-----\n\(Data(der).base64EncodedString(options: .lineLength64Characters))\n-----END CERTIFICATE REQUEST-----\n"
        let error = #expect(throws: PincheckError.self) { try PublicKeyFile.read(Array(broken.utf8), source: "r.pem") }
        #expect(error?.message.contains("does not verify") == true)
    }

    @Test("two XML property lists one after the other are refused, not read as the first")
    func concatenatedPlists() throws {
        let plist = try ImporterTests.sample("Info.plist")
        let error = #expect(throws: PincheckError.self) { try ConfigurationImporter.pincheckJSON(from: plist + plist, source: "twice.plist") }
        #expect(error?.message.contains("after the </plist> element") == true, "\(String(describing: error))")
        _ = try ConfigurationImporter.pincheckJSON(from: plist, source: "once.plist")
    }
}
