import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("host patterns")
struct HostPatternTests {
    static let psl = Fixtures.psl

    static func pattern(_ text: String, subdomains: Bool = false) throws -> HostPattern {
        try HostPattern(text, includeSubdomains: subdomains, publicSuffixes: psl)
    }

    @Test("which hosts a pattern matches", arguments: [
        ("api.example.com", false, "api.example.com", true),
        ("api.example.com", false, "API.Example.COM.", true),
        ("api.example.com", false, "www.api.example.com", false),
        ("*.example.com", false, "a.example.com", true),
        ("*.example.com", false, "a.b.example.com", false),
        ("*.example.com", false, "example.com", false),
        ("**.example.com", false, "example.com", true),
        ("**.example.com", false, "a.b.example.com", true),
        ("**.example.com", false, "badexample.com", false),
        ("example.com", true, "example.com", true),
        ("example.com", true, "deep.er.example.com", true),
        ("example.com", true, "example.net", false),
        ("example.com", false, "example.net", false),
        ("bücher.example", false, "xn--bcher-kva.example", true),
        ("xn--bcher-kva.example", false, "BÜCHER.example", true),
        ("192.0.2.1", false, "192.0.2.1", true),
        ("192.0.2.1", false, "192.0.2.10", false),
        ("2001:db8::1", false, "[2001:DB8::1]", true),
        ("2001:db8::1", false, "2001:db8::2", false),
    ])
    func matching(pattern text: String, subdomains: Bool, host: String, matches: Bool) throws {
        let pattern = try Self.pattern(text, subdomains: subdomains)
        let name = try HostName.peerName(for: host).text
        #expect((pattern.specificity(for: name) != nil) == matches)
    }

    @Test("subdomain patterns over public suffixes are refused", arguments: [
        ("co.uk", true), ("*.co.uk", false), ("**.com", false), ("amazonaws.com", true), ("**.amazonaws.com", false),
        ("*.github.io", false), ("example.ck", true),
    ])
    func publicSuffixes(text: String, subdomains: Bool) {
        #expect(throws: PincheckError.self) { try Self.pattern(text, subdomains: subdomains) }
    }

    @Test("the same names without subdomains, and registrable names, are fine", arguments: [
        ("co.uk", false), ("example.co.uk", true), ("*.example.co.uk", false), ("bucket.s3.amazonaws.com", false), ("www.ck", true),
    ])
    func allowed(text: String, subdomains: Bool) throws {
        _ = try Self.pattern(text, subdomains: subdomains)
    }

    @Test("malformed patterns are errors naming the pattern", arguments: ["w*.example.com", "*.*.example.com", "", "exa mple.com", "*.192.0.2.1"])
    func malformed(text: String) {
        #expect(throws: PincheckError.self) { try Self.pattern(text) }
        do { _ = try Self.pattern(text) } catch let error as PincheckError { #expect(error.message.contains("pattern \"\(text)\"")) } catch { Issue.record(error) }
    }

    @Test("without a Public Suffix List, subdomain patterns fail closed")
    func noList() throws {
        #expect(throws: PincheckError.self) { try HostPattern("example.com", includeSubdomains: true, publicSuffixes: nil) }
        _ = try HostPattern("example.com", publicSuffixes: nil)
    }

    @Test("Debian's list refuses co.uk and amazonaws.com and accepts example.com", .enabled(if: PublicSuffixList.system != nil, "needs Debian's Public Suffix List (/usr/share/publicsuffix: apt-get install publicsuffix, which scripts/setup.sh does)"))
    func debianList() throws {
        let list = try #require(PublicSuffixList.system)
        #expect(list.coversOtherRegistrants("co.uk"))
        #expect(list.coversOtherRegistrants("amazonaws.com"))
        #expect(!list.coversOtherRegistrants("example.com"))
    }

    @Test("Punycode matches RFC 3492's examples", arguments: [
        ("bücher", "xn--bcher-kva"), ("münchen", "xn--mnchen-3ya"), ("例え", "xn--r8jz45g"), ("plain", "plain"),
    ])
    func punycode(unicode: String, ascii: String) {
        #expect(Punycode.aLabel(unicode) == ascii)
    }

    @Test("UTS #46 mapping: ignored code points dropped, full-width ASCII made ASCII, white space at the ends trimmed", arguments: [
        ("ex\u{AD}ample.com", "example.com"),                  // soft hyphen
        ("\u{FEFF}example.com", "example.com"),                // a byte order mark left by an editor
        ("exam\u{200B}ple.com", "example.com"),                // zero-width space
        ("ex\u{2064}ample.com", "example.com"),                // invisible plus
        ("ｅｘａｍｐｌｅ．ｃｏｍ", "example.com"),                    // full-width, from an East Asian input method
        ("ＷＷＷ.Example.COM", "www.example.com"),
        ("bücher\u{FE0F}.example", "xn--bcher-kva.example"),   // variation selector
        ("example.com\u{A0}", "example.com"),                  // a no-break space pasted at the end
        ("\u{3000}bücher.example", "xn--bcher-kva.example"),
    ])
    func uts46Mapping(host: String, expected: String) throws {
        // The expected names are what Python's idna package (UTS #46, Unicode 16.0) encodes.
        #expect(try HostName.peerName(for: host) == .dns(expected))
    }

    @Test("a space or invisible character inside a name is refused, naming it", arguments: [
        ("exa\u{A0}mple.com", "U+00A0 after \"exa\""),          // UTS #46 maps it to a space, which no host may hold
        ("ex\u{200E}ample.com", "U+200E after \"ex\""),        // left-to-right mark
        ("\u{E000}example.com", "U+E000 at its start"),        // private use
        ("ex\u{2028}ample.com", "U+2028 after \"ex\""),        // line separator
        ("ex\u{85}ample.com", "U+0085 after \"ex\""),          // a C1 control
    ])
    func invisibleCharacters(host: String, mentions: String) {
        let error = #expect(throws: PincheckError.self) { try HostName.peerName(for: host) }
        #expect(error?.code == .invalidHost)
        #expect(error?.message.contains(mentions) == true, "\(String(describing: error))")
    }
}
