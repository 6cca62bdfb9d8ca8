import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// The strict JSON reader behind configurations, CT log lists and pin-set updates, and the
/// section readers built on it: what Foundation's decoder did for them, and what it let through.
@Suite("reading JSON configurations")
struct ConfigurationReadingTests {
    static func parse(_ text: String) -> Result<JSONValue, JSONSyntax.Problem> {
        Result { () throws(JSONSyntax.Problem) in try JSONSyntax.parse(Array(text.utf8)) }
    }

    @Test("escapes are resolved: \\u escapes, surrogate pairs, the short forms")
    func escapes() throws {
        guard case .success(.object(let object)) = Self.parse(#"{ "k\u0065y": "a\"b\\c\/d\n\t\u00e9\ud83d\ude00" }"#) else {
            Issue.record("must parse"); return
        }
        guard case .string(let text)? = object["key"] else { Issue.record("the key is read with its escape resolved"); return }
        #expect(text == "a\"b\\c/d\n\té😀")
    }

    @Test("what is not JSON is refused with its place", arguments: [
        (#"{ "a": "\ud800" }"#, "unpaired surrogate"),
        (#"{ "a": "\udc00x" }"#, "unpaired surrogate"),
        (#"{ "a": "\ud800\u0041" }"#, "unpaired surrogate"),
        (#"{ "a": 012 }"#, "leading zeros"),
        (#"{ "a": 1e999 }"#, "too large"),
        (#"{ "a": "\x" }"#, "unknown escape"),
        (#"{ "a": "\u12" }"#, "four hexadecimal digits"),
        (#"{ "serial": 1, "\u0073erial": 2 }"#, "appears twice"),
        (#"{ "a": 1 } x"#, "after the end"),
        (#"{ "a": tru }"#, "expected true"),
        (String(repeating: "[", count: 70) + String(repeating: "]", count: 70), "64 levels"),
    ])
    func refusals(text: String, expected: String) {
        guard case .failure(let problem) = Self.parse(text) else { Issue.record("must be refused: \(text)"); return }
        #expect(problem.message.contains(expected), "\(problem.message)")
        #expect(problem.line == 1 && problem.column > 1)
    }

    @Test("a string that is not UTF-8 is refused; a byte order mark before the document is not")
    func encoding() {
        var bytes = Array(#"{ "a": "x"#.utf8)
        bytes += [0xC3, 0x28]   // an invalid two-byte sequence
        bytes += Array(#"" }"#.utf8)
        #expect(throws: JSONSyntax.Problem.self) { try JSONSyntax.parse(bytes) }
        let marked: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{ "a": [1, -2.5e3, true, false, null] }"#.utf8)
        guard case .object(let object) = try? JSONSyntax.parse(marked), case .array(let values)? = object["a"] else {
            Issue.record("a byte order mark is skipped"); return
        }
        #expect(values.count == 5)
        guard case .number(let number) = values[1] else { Issue.record("a number"); return }
        #expect(number == -2500)
    }

    @Test("a value of the wrong kind is named by its path and what was expected", arguments: [
        (#"{ "version": "1", "hosts": [] }"#, "version: expected a whole number"),
        (#"{ "version": 1.5, "hosts": [] }"#, "version: expected a whole number"),
        (#"{ "version": 1, "hosts": {} }"#, "hosts: expected a list"),
        (#"{ "version": 1, "hosts": [ "a.example.test" ] }"#, "hosts[0]: expected an object"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": "sha256/x" } ] }"#, "hosts[0].pins: expected a list of strings"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "pins": [1] } ] }"#, "hosts[0].pins[0]: expected a string"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "enforce": "yes" } ] }"#, "hosts[0].enforce: expected true or false"),
        (#"{ "version": 1, "hosts": [ { "pattern": 7 } ] }"#, "hosts[0].pattern: expected a string"),
        (#"{ "version": 1, "hosts": [ { "includeSubdomains": true } ] }"#, "hosts[0].pattern: required key missing"),
        (#"{ "version": 1, "anchors": 3, "hosts": [] }"#, "anchors: expected \"system\" or a list of PEM files"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "revocation": [] } ] }"#, "hosts[0].revocation: expected an object"),
        (#"{ "version": 1, "hosts": [ { "pattern": "a.example.test", "certificateTransparency": {} } ] }"#, "hosts[0].certificateTransparency.policy: required key missing"),
        (#"{ "version": 1, "hosts": [], "zeta": 1, "alpha": 2 }"#, "alpha: unknown key"),
        ("[]", "none of the formats Pincheck reads"),
        (#"{ "version": 1, "hosts": [], "hosts": [] }"#, "line 1, column 30: the key \"hosts\" appears twice"),
    ])
    func wrongKinds(json: String, expected: String) throws {
        let message = try #require(ConfigurationTests.message(json), "must be rejected: \(json)")
        #expect(message.contains(expected), "\(message)")
    }

    @Test("null reads as absent, and an escaped key is the key it spells")
    func nullAndEscapes() throws {
        let configuration = try ConfigurationTests.decode("""
            { "version": 1, "backupPins": null, "hosts": [ { "p\\u0061ttern": "a.example.test", "expires": null,
              "pins": ["\(ConfigurationTests.ecPin)"] } ] }
            """)
        #expect(configuration.hosts.first?.expires == nil)
        #expect(configuration.hosts.first?.policy.pattern.description.contains("a.example.test") == true)
    }

    @Test("a pin is read the same with or without white space around it, Unicode white space included")
    func pinWhiteSpace() throws {
        let pin = ConfigurationTests.ecPin
        #expect(try PublicKeyPin(" \t\(pin)\r\n") == PublicKeyPin(pin))
        #expect(try PublicKeyPin("\u{00A0}\(pin)\u{2003}") == PublicKeyPin(pin))
        #expect(throws: PincheckError.self) { try PublicKeyPin("sha256/\u{00A0}" + pin.dropFirst(7)) }
    }

    @Test("the Public Suffix List is parsed when first asked, and answers as before")
    func lazySuffixes() {
        let list = PublicSuffixList(text: "// comment\nuk\nco.uk\n*.ck\n!www.ck\n// ===BEGIN PRIVATE DOMAINS===\ngithub.io\n")
        #expect(list.isPublicSuffix("co.uk"))
        #expect(!list.isPublicSuffix("example.co.uk"))
        #expect(list.isPublicSuffix("anything.ck") && !list.isPublicSuffix("www.ck"))
        #expect(list.isPublicSuffix("github.io") && !list.isICANNSuffix("github.io"))
        #expect(list.coversOtherRegistrants("io") && !list.coversOtherRegistrants("example.co.uk"))
    }
}
