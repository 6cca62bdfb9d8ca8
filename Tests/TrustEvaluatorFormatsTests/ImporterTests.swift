import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("configuration importers")
struct ImporterTests {
    static func sample(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Importers/\(name)"))
    }

    static func load(_ name: String) throws -> Configuration {
        try Configuration.decode(try sample(name), source: name, baseDirectory: ".",
                                 anchors: Fixtures.anchors, publicSuffixes: Fixtures.psl)
    }

    @Test("formats are recognised from their bytes", arguments: [
        ("Info.plist", ConfigurationFormat.trustKit), ("network_security_config.xml", .android), ("okhttp-pins.txt", .okHttp),
    ])
    func detection(file: String, format: ConfigurationFormat) throws {
        #expect(ConfigurationImporter.detect(try Self.sample(file)) == format)
        #expect(ConfigurationImporter.detect(Data(#"{ "version": 1 }"#.utf8)) == .pincheck)
    }

    @Test("a byte order mark first does not change a file's format or its first pattern", arguments: [
        "Info.plist", "network_security_config.xml", "okhttp-pins.txt",
    ])
    func byteOrderMark(file: String) throws {
        let plain = try Self.sample(file)
        let marked = Data([0xEF, 0xBB, 0xBF]) + plain
        #expect(ConfigurationImporter.detect(marked) == ConfigurationImporter.detect(plain))
        #expect(try ConfigurationImporter.pincheckJSON(from: marked, source: file) == ConfigurationImporter.pincheckJSON(from: plain, source: file))
        #expect(ConfigurationImporter.detect(Data([0xEF, 0xBB, 0xBF]) + Data(#"{ "version": 1 }"#.utf8)) == .pincheck)
    }

    @Test("a binary plist (a built app's Info.plist) imports as its XML does")
    func binaryPlist() throws {
        let binary = try Self.sample("Info.binary.plist")   // Info.plist through Python's plistlib, FMT_BINARY
        #expect(binary.starts(with: Array("bplist00".utf8)))
        #expect(ConfigurationImporter.detect(binary) == .trustKit)
        #expect(try ConfigurationImporter.pincheckJSON(from: binary, source: "Info.binary.plist")
                == ConfigurationImporter.pincheckJSON(from: try Self.sample("Info.plist"), source: "Info.plist"))
    }

    /// A binary plist whose objects are arrays of references, or the string "x" where nil.
    static func binaryPlist(_ objects: [[Int]?], top: Int = 0) -> [UInt8] {
        func two(_ value: Int) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        func four(_ value: Int) -> [UInt8] { (0..<4).reversed().map { UInt8((value >> ($0 * 8)) & 0xFF) } }
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            guard let references = object else { bytes += [0x51, UInt8(ascii: "x")]; continue }
            bytes += references.count < 15 ? [0xA0 | UInt8(references.count)] : [0xAF, 0x11] + two(references.count)
            for reference in references { bytes += four(reference) }
        }
        let table = bytes.count
        for offset in offsets { bytes += four(offset) }
        func eight(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8((value >> ($0 * 8)) & 0xFF) } }
        return bytes + [0, 0, 0, 0, 0, 0, 4, 4] + eight(objects.count) + eight(top) + eight(table)
    }

    @Test("binary plists that nest without end, refer to themselves or grow exponentially are refused before decoding")
    func hostileBinaryPlists() throws {
        let check = { (bytes: [UInt8]) in BinaryPlistShape.check(bytes, maximumDepth: 64, maximumValues: 200_000) }
        let chain = { (length: Int) in Self.binaryPlist((0..<length).map { $0 + 1 < length ? [$0 + 1] : nil }) }
        #expect(check(chain(10)) == .fits)
        #expect(check(chain(100)) == .tooDeep)
        #expect(check(chain(100_000)) == .tooDeep, "a chain far deeper than the stack allows is measured without recursion")
        #expect(check(Self.binaryPlist([[1], [0]])) == .tooDeep, "a cycle")
        // 40 levels of an array holding the next one twice: 2^40 values as a tree, 41 objects.
        #expect(check(Self.binaryPlist((0..<41).map { $0 < 40 ? [$0 + 1, $0 + 1] : nil })) == .tooLarge)
        #expect(check(Self.binaryPlist([[7]])) == .malformed, "a reference past the last object")
        var cut = chain(10)
        cut.removeSubrange(20..<30)
        #expect(check(cut) == .malformed, "an offset table that no longer points at objects")
        #expect(check(Array(chain(10).prefix(40))) == .malformed)

        let error = #expect(throws: PincheckError.self) {
            try ConfigurationImporter.pincheckJSON(from: Data(Self.binaryPlist([[1], [0]])), format: .trustKit, source: "cycle.plist")
        }
        #expect(error?.code == .invalidPolicy)
        #expect(error?.message.contains("nests more than 64 levels") == true, "\(String(describing: error))")
    }

    @Test("TrustKit: enforced, report-only, includeSubdomains, expiry, report URIs and exclusion are kept")
    func trustKit() throws {
        let configuration = try Self.load("Info.plist")
        let manager = configuration.trustManager
        #expect(!manager.allHostsMustBeEvaluated, "TrustKit leaves unlisted hosts to default validation")
        let www = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(www.disposition == .useCredential)
        #expect(try manager.policy(for: "www.example.test")?.reportURIs.first?.absoluteString == "https://reports.example.test/pins")
        #expect(try manager.policy(for: "www.example.test")?.pinSets.first?.expires == PinSet.expiryDate("2099-12-01"))
        // example.test and its subdomains: report-only pins on the ECDSA intermediate.
        let api = try manager.evaluate(Fixtures.chain("rsa-good"), host: "example.test", at: Fixtures.time)
        #expect(api.disposition == .useCredential)
        #expect(api.failures.isEmpty)
        #expect(api.reportOnlyFailures.map(\.code) == [.pinMismatch])
        // Excluded from the parent's policy: default validation only, no pin failure.
        let legacy = try manager.evaluate(Fixtures.chain("rsa-wildcard"), host: "legacy.example.test", at: Fixtures.time)
        #expect(legacy.disposition == .useCredential)
        #expect(legacy.failures.isEmpty)
    }

    @Test("Android: domain-config pins, includeSubdomains, expiration, inheritance by nested domain-configs")
    func android() throws {
        let manager = try Self.load("network_security_config.xml").trustManager
        #expect(try manager.policy(for: "deep.example.test")?.pattern.kind == .includingSubdomains)
        let inherited = try #require(try manager.policy(for: "cdn.example.test"))
        #expect(inherited.pattern.kind == .exact)
        #expect(inherited.pinSets.first?.pinCount == 2, "nested domain-configs inherit the parent's pin set")
        #expect(inherited.pinSets.first?.expires == PinSet.expiryDate("2099-01-01"))
        #expect(try manager.policy(for: "plain.example.test")?.pinSets.isEmpty == true)
        #expect(try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time).disposition == .useCredential)
    }

    @Test("OkHttp: pins grouped by pattern, ** patterns kept")
    func okHttp() throws {
        let manager = try Self.load("okhttp-pins.txt").trustManager
        #expect(try manager.policy(for: "www.example.test")?.pinSets.first?.pinCount == 2)
        #expect(try manager.policy(for: "a.b.example.test")?.pattern.kind == .anyDepth)
        #expect(try manager.evaluate(Fixtures.chain("rsa-good"), host: "a.b.example.test", at: Fixtures.time).disposition == .cancelAuthenticationChallenge)
    }

    @Test("a malformed OkHttp line is an error naming the line")
    func okHttpError() {
        #expect(throws: PincheckError.self) {
            try ConfigurationImporter.pincheckJSON(from: Data("www.example.test sha256/AAAA\nwww.example.test not-a-pin\n".utf8), source: "pins")
        }
        do {
            _ = try ConfigurationImporter.pincheckJSON(from: Data("a.example.test oops".utf8), format: .okHttp, source: "pins")
        } catch {
            #expect(error.description.contains("line 1"))
        }
    }

    @Test("import produces Pincheck JSON that loads to the same policies")
    func roundTrip() throws {
        let json = try ConfigurationImporter.pincheckJSON(from: try Self.sample("Info.plist"), source: "Info.plist")
        #expect(json.contains("\"pattern\" : \"www.example.test\""))
        let again = try Configuration.decode(Data(json.utf8), baseDirectory: ".", anchors: Fixtures.anchors, publicSuffixes: Fixtures.psl)
        #expect(again.hosts.count == 3)
    }

    @Test("what cannot be imported is an error naming it", arguments: [
        ("<plist version=\"1.0\"><dict><key>TSKPinnedDomains</key><dict><key>a.example.test</key><dict><key>TSKPublicKeyHashez</key><array/></dict></dict></dict></plist>", "TSKPublicKeyHashez"),
        ("<plist version=\"1.0\"><dict><key>Other</key><string/></dict></plist>", "TSKPinnedDomains"),
        ("<network-security-config><domain-config><domain>a.example.test</domain><pin-set><pin digest=\"SHA-1\">AAAA</pin></pin-set></domain-config></network-security-config>", "SHA-256"),
        ("<network-security-config><domain-config><domain>a.example.test</domain><trust-anchors><certificates src=\"@raw/ca\"/></trust-anchors></domain-config></network-security-config>", "@raw/ca is not in"),
    ])
    func errors(text: String, expected: String) {
        do {
            _ = try Configuration.decode(Data(text.utf8), source: "sample", baseDirectory: ".", publicSuffixes: Fixtures.psl)
            Issue.record("must be rejected")
        } catch {
            #expect(error.description.contains(expected), "\(error)")
        }
    }

    @Test("Android: XML that cannot be read, or cannot be imported, is an error naming its line", arguments: [
        ("<?xml version=\"1.0\"?>\n<!DOCTYPE network-security-config [\n<!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n]>\n<network-security-config/>",
         "malformed XML (line 2): <!DOCTYPE> is refused"),
        ("<network-security-config>\n<domain-config>\n</network-security-config>",
         "malformed XML (line 3): </network-security-config> does not close <domain-config>"),
        ("<network-security-config><domain-config>\n<domain>&xxe;</domain></domain-config></network-security-config>",
         "malformed XML (line 2): the entity &xxe; is not defined"),
        ("<network-security-config><domain-config><domain>a.example.test</domain>\n<pin digest=\"SHA-256\">AAAA</pin></domain-config></network-security-config>",
         "line 2: <pin> outside <pin-set>"),
        ("<network-security-config><domain-config><domain>a.example.test</domain><pin-set>\n<pin>AAAA</pin></pin-set></domain-config></network-security-config>",
         "line 2: pin digest \"\" is not SHA-256"),
    ])
    func androidErrors(text: String, expected: String) {
        do {
            _ = try ConfigurationImporter.pincheckJSON(from: Data(text.utf8), format: .android, source: "nsc.xml")
            Issue.record("must be rejected")
        } catch {
            #expect(error.code == .invalidPolicy)
            #expect(error.description.hasPrefix("nsc.xml: " + expected), "\(error)")
        }
    }

    @Test("Android: input that is not UTF-8 is refused before it is read as XML, and an oversized file is too large")
    func androidRefusals() {
        #expect(throws: PincheckError(.invalidPolicy, "not valid UTF-8 (network_security_config.xml is UTF-8 XML)", source: "nsc.xml")) {
            try ConfigurationImporter.pincheckJSON(from: Data([0x3C, 0x61, 0xFF, 0x3E]), format: .android, source: "nsc.xml")
        }
        let large = Data(("<network-security-config>" + String(repeating: " ", count: XMLReader.maximumBytes) + "</network-security-config>").utf8)
        do {
            _ = try ConfigurationImporter.pincheckJSON(from: large, format: .android, source: "nsc.xml")
            Issue.record("must be refused")
        } catch {
            #expect(error.code == .tooLarge, "\(error)")
        }
    }

    @Test("Android: references and CDATA in domains and pins are decoded")
    func androidText() throws {
        let text = """
            <network-security-config><domain-config>
            <domain includeSubdomains='true'>a&#46;example.test</domain>
            <pin-set><pin digest="SHA-256"><![CDATA[ 0/Kfq9agxMXTZjiCfrXawIsoOKbW2BBcM89zptGOzbU= ]]></pin></pin-set>
            </domain-config></network-security-config>
            """
        let json = try ConfigurationImporter.pincheckJSON(from: Data(text.utf8), format: .android, source: "nsc.xml")
        #expect(json.contains("\"pattern\" : \"a.example.test\""), "\(json)")
        #expect(json.contains("\"includeSubdomains\" : true"), "\(json)")
        #expect(json.contains("\"sha256/0/Kfq9agxMXTZjiCfrXawIsoOKbW2BBcM89zptGOzbU=\""), "\(json)")
    }
}

/// OkHttp's meaning of a pin list: a host is checked against the pins of *every* pattern that
/// matches it (`CertificatePinner.findMatchingPins`), shapes after OkHttp's CertificatePinnerTest
/// (`successfulFindMatchingPinsForWildcardAndDirectCertificates`, `absentHostnameMatches`).
@Suite("OkHttp: the union of every matching pattern's pins")
struct OkHttpUnionTests {
    static func manager(_ lines: [String]) throws -> TrustManager {
        try Configuration.decode(Data((lines.joined(separator: "\n") + "\n").utf8), source: "pins", baseDirectory: ".",
                                 anchors: Fixtures.anchors, format: .okHttp, publicSuffixes: Fixtures.psl).trustManager
    }

    static let leafPin = Fixtures.referencePins["rsa-leaf"]!
    static let strangerPin = Fixtures.referencePins["attacker-root"]!

    @Test("*.example.test → the leaf's key, www.example.test → another key: www is accepted through the wildcard's pin")
    func wildcardAndDirect() throws {
        let manager = try Self.manager(["*.example.test \(Self.leafPin)", "www.example.test \(Self.strangerPin)"])
        #expect(manager.patternMatching == .allMatching)
        let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(decision.disposition == .useCredential, "\(decision.failures)")
        #expect(try manager.policy(for: "www.example.test")?.pinSets.first?.pinCount == 2)
    }

    @Test("a host only one pattern matches gets only that pattern's pins")
    func onlyMatchingPatterns() throws {
        let manager = try Self.manager(["*.example.test \(Self.strangerPin)", "other.example.test \(Self.leafPin)"])
        let decision = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time)
        #expect(decision.failures.map(\.code) == [.pinMismatch])
        #expect(decision.disposition == .cancelAuthenticationChallenge)
    }

    @Test("** matches the name itself and any depth; * exactly one label", arguments: [
        ("**.example.test", "example.test", true), ("**.example.test", "a.b.example.test", true),
        ("*.example.test", "example.test", false), ("*.example.test", "a.b.example.test", false), ("*.example.test", "a.example.test", true),
    ])
    func patterns(pattern: String, host: String, matches: Bool) throws {
        let manager = try Self.manager(["\(pattern) \(Self.leafPin)"])
        #expect((try manager.policy(for: host) != nil) == matches)
    }

    @Test("an empty pin list named as OkHttp pins nothing: every host gets default validation, still checked")
    func emptyFile() throws {
        let manager = try Self.manager([])
        #expect(manager.policies.isEmpty)
        #expect(try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Fixtures.time).disposition == .performDefaultHandling)
        #expect(try manager.evaluate(Fixtures.chain("rsa-good"), host: "other.test", at: Fixtures.time).disposition == .cancelAuthenticationChallenge)
    }

    @Test("an empty, blank, comment-only or BOM-only file whose format is not named is refused, never \"nothing pinned\"", arguments: [
        "", "   \n\t\n", "# pins\n", "// pins\n\n", "\u{FEFF}", "\u{FEFF}\n# only a comment\n",
    ])
    func blankUnnamedIsRefused(text: String) {
        #expect(ConfigurationImporter.detect(Data(text.utf8)) != .okHttp)
        let error = #expect(throws: PincheckError.self) {
            try Configuration.decode(Data(text.utf8), source: "truncated", baseDirectory: ".")
        }
        #expect(error?.code == .invalidPolicy)
        #expect(error?.message.contains("empty") == true)
        #expect(error?.message.contains("--config-format okhttp") == true)
        // Named, the same bytes are OkHttp's empty CertificatePinner.
        #expect(throws: Never.self) {
            try Configuration.decode(Data(text.utf8), source: "pins", baseDirectory: ".", format: .okHttp)
        }
    }

    @Test("a file in no known format is an error naming the formats tried")
    func unknownFormat() {
        let error = #expect(throws: PincheckError.self) {
            try Configuration.decode(Data("hello world\n".utf8), source: "mystery", baseDirectory: ".")
        }
        #expect(error?.message.contains("OkHttp pins") == true)
        #expect(error?.message.contains("TrustKit") == true)
    }

    @Test("all-matching refuses pin sets OkHttp cannot express (report-only, certificate pins)")
    func refusesOtherShapes() {
        let json = #"{ "version": 1, "patternMatching": "all-matching", "hosts": [ { "pattern": "a.example.test", "pins": ["\#(Self.leafPin)"], "enforce": false } ] }"#
        #expect(throws: PincheckError.self) {
            try Configuration.decode(Data(json.utf8), source: "c", baseDirectory: ".", anchors: Fixtures.anchors, publicSuffixes: Fixtures.psl)
        }
    }
}
