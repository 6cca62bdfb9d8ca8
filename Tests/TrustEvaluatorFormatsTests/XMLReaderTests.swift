import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("XML reader")
struct XMLReaderTests {
    static func events(_ text: String) throws(XMLError) -> [XMLReader.Event] { try XMLReader.events(Array(text.utf8)) }

    /// Each event with the line `XMLReader.line` gave for it.
    static func lines(_ text: String) throws -> [Int] {
        var reader = XMLReader(Array(text.utf8))
        var lines: [Int] = []
        while try reader.next() != nil { lines.append(reader.line) }
        return lines
    }

    @Test("a Network Security Config shaped document gives its events in order")
    func wellFormed() throws {
        let document = """
            <?xml version="1.0" encoding="utf-8" standalone='yes'?>
            <!-- leading comment -->
            <network-security-config xmlns:android="http://schemas.android.com/apk/res/android">
            <domain-config cleartextTrafficPermitted='false'>
            <domain android:includeSubdomains="true">example.test</domain>
            <pin-set expiration="2099-01-01"><pin digest="SHA-256">AAAA</pin></pin-set>
            <trust-anchors><certificates src="system" /></trust-anchors>
            </domain-config>
            </network-security-config>
            <!-- trailing comment -->

            """
        #expect(try Self.events(document) == [
            .start("network-security-config", attributes: ["xmlns:android": "http://schemas.android.com/apk/res/android"]),
            .text("\n"),
            .start("domain-config", attributes: ["cleartextTrafficPermitted": "false"]),
            .text("\n"),
            .start("domain", attributes: ["android:includeSubdomains": "true"]),
            .text("example.test"),
            .end("domain"),
            .text("\n"),
            .start("pin-set", attributes: ["expiration": "2099-01-01"]),
            .start("pin", attributes: ["digest": "SHA-256"]),
            .text("AAAA"),
            .end("pin"),
            .end("pin-set"),
            .text("\n"),
            .start("trust-anchors", attributes: [:]),
            .start("certificates", attributes: ["src": "system"]),
            .end("certificates"),
            .end("trust-anchors"),
            .text("\n"),
            .end("domain-config"),
            .text("\n"),
            .end("network-security-config"),
        ])
    }

    @Test("events carry the line they begin on; a self-closing tag's end has its start's line")
    func eventLines() throws {
        #expect(try Self.lines("<a>\n<b\n x='1'/>\n<c>t</c>\n</a>") == [1, 1, 2, 2, 3, 4, 4, 4, 4, 5])
        // CR LF and lone CR end lines too, and become LF in text.
        #expect(try Self.lines("<a>\r\n<b/>\r<c/></a>") == [1, 1, 2, 2, 2, 3, 3, 3])
        #expect(try Self.events("<a>x\r\ny\rz</a>") == [.start("a", attributes: [:]), .text("x\ny\nz"), .end("a")])
    }

    @Test("references decode in text and attributes", arguments: [
        ("&lt;&gt;&amp;&apos;&quot;", "<>&'\""),
        ("&#65;&#x42;&#x63;", "ABc"),
        ("&#x1F512;&#233;", "\u{1F512}é"),
        ("&#10;", "\n"),
        ("a&amp;lt;b", "a&lt;b"),  // decoded once, never again
        ("caf\u{E9} \u{1F512}", "caf\u{E9} \u{1F512}"),
    ])
    func references(encoded: String, decoded: String) throws {
        #expect(try Self.events("<a v=\"\(encoded)\">\(encoded)</a>") == [
            .start("a", attributes: ["v": decoded]), .text(decoded), .end("a"),
        ])
    }

    @Test("CDATA is text, comments are skipped, and the text between two tags is one event")
    func cdataAndComments() throws {
        #expect(try Self.events("<a>one <!-- no --><![CDATA[<two> & ]] three]]>&amp;</a>") == [
            .start("a", attributes: [:]), .text("one <two> & ]] three&"), .end("a"),
        ])
        #expect(try Self.events("<a><!----><![CDATA[]]></a>") == [.start("a", attributes: [:]), .end("a")])
    }

    @Test("attribute values: either quote, literal tabs and line ends become spaces, the other quote is kept")
    func attributeValues() throws {
        #expect(try Self.events("<a x = 'say \"hi\"'\ty=\"it's\"\nz=\"1\n2\t3\"/>") == [
            .start("a", attributes: ["x": "say \"hi\"", "y": "it's", "z": "1 2 3"]), .end("a"),
        ])
    }

    @Test("a leading byte-order mark and a declaration without encoding are accepted")
    func prolog() throws {
        #expect(try XMLReader.events([0xEF, 0xBB, 0xBF] + Array("<?xml version='1.0'?><a/>".utf8)) == [
            .start("a", attributes: [:]), .end("a"),
        ])
    }

    @Test("nesting up to the limit is read")
    func deepestAccepted() throws {
        let depth = XMLReader.maximumDepth
        let events = try Self.events(String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth))
        #expect(events.count == 2 * depth)
    }

    @Test("each refusal names the problem and its line", arguments: [
        // Structure
        ("<a></b>", 1, "</b> does not close <a>"),
        ("<a>\n<b>\n</a>", 3, "</a> does not close <b>"),
        ("<a>\n  <b></b>", 1, "<a> is never closed"),
        ("<a>\n<b>text", 2, "<b> is never closed"),
        ("</a>", 1, "</a> closes no open element"),
        ("<a/>\n</a>", 2, "</a> closes no open element"),
        ("<a x='1'\n x=\"2\"/>", 2, "<a> repeats the attribute x"),
        ("<a/>\n<b/>", 2, "content after the root element"),
        ("<a/>\n\ntext", 3, "content after the root element"),
        ("<a/><![CDATA[x]]>", 1, "content after the root element"),
        ("text<a/>", 1, "text outside the root element"),
        ("", 1, "no root element"),
        ("<!-- only a comment -->\n", 2, "no root element"),
        // Refused constructs
        ("<?xml version=\"1.0\"?>\n<!DOCTYPE a>\n<a/>", 2, "<!DOCTYPE> is refused"),
        ("<a>\n<!DOCTYPE a>\n</a>", 2, "<!DOCTYPE> is refused"),
        ("<!ELEMENT a ANY><a/>", 1, "unknown markup"),
        ("<?xml-stylesheet href=\"s.xsl\"?><a/>", 1, "processing instruction <?xml-stylesheet"),
        ("<a>\n<?php echo 1 ?></a>", 2, "processing instruction <?php"),
        ("\n<?xml version=\"1.0\"?><a/>", 2, "may only open the document"),
        ("<?xml version=\"1.0\"?><?xml version=\"1.0\"?><a/>", 1, "may only open the document"),
        ("<?XML version=\"1.0\"?><a/>", 1, "may only open the document"),
        ("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a/>", 1, "encoding \"ISO-8859-1\" is refused"),
        ("<?xml version=\"1.1\"?><a/>", 1, "only 1.0"),
        ("<?xml encoding=\"UTF-8\"?><a/>", 1, "encoding is not expected here"),
        ("<?xml standalone='yes' version='1.0'?><a/>", 1, "standalone is not expected here"),
        ("<?xml?><a/>", 1, "version is missing"),
        ("<?xml version=\"1.0\"", 1, "the XML declaration is not closed"),
        // Entities and characters
        ("<a>\n&xxe;</a>", 2, "the entity &xxe; is not defined"),
        ("<a v='&nbsp;'/>", 1, "the entity &nbsp; is not defined"),
        ("<a>AT&T</a>", 1, "\"&\" must begin a reference"),
        ("<a>&#;</a>", 1, "\"&\" must begin a reference"),
        ("<a>&#x;</a>", 1, "\"&\" must begin a reference"),
        ("<a>&#65</a>", 1, "\"&\" must begin a reference"),
        ("<a>&#X41;</a>", 1, "\"&\" must begin a reference"),
        ("<a>&#0;</a>", 1, "&#0; is not a character XML allows"),
        ("<a>\n\n&#xD800;</a>", 3, "&#xD800; is not a character XML allows"),
        ("<a>&#xFFFE;</a>", 1, "&#xFFFE; is not a character XML allows"),
        ("<a>&#x110000;</a>", 1, "&#x110000; is not a character XML allows"),
        ("<a>&#99999999999999999999999;</a>", 1, "is not a character XML allows"),
        ("<a>\n\u{1}</a>", 2, "U+0001 is not allowed in XML"),
        ("<a>\u{FFFF}</a>", 1, "U+FFFF is not allowed in XML"),
        // Syntax
        ("<a x=1/>", 1, "the value of x must be in quotes"),
        ("<a x='1'y='2'/>", 1, "expected whitespace and an attribute"),
        ("<a x/>", 1, "expected \"=\" after the attribute x"),
        ("<a x='<'/>", 1, "\"<\" in the value of x"),
        ("<a x='1/>", 1, "the value of x is not closed"),
        ("<a\n x='1'", 1, "the start tag <a> is not closed"),
        ("<1a/>", 1, "expected an element name"),
        ("<a></ a>", 1, "expected an element name after \"</\""),
        ("<a></a b>", 1, "expected \">\" to end </a"),
        ("<a>]]></a>", 1, "\"]]>\" in character data"),
        ("<a>\n<!-- a -- b --></a>", 2, "\"--\" inside a comment"),
        ("<a>\n<!-- never closed", 2, "the comment is not closed"),
        ("<a>\n<![CDATA[ never closed", 2, "the CDATA section is not closed"),
    ])
    func refusals(document: String, line: Int, message: String) {
        do {
            let events = try Self.events(document)
            Issue.record("must be refused; read \(events)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.description == "line \(line): \(error.problem)")
            #expect(error.problem.description.contains(message), "\(error)")
        }
    }

    @Test("input that is not UTF-8 is refused at its line", arguments: [
        ([0x3C, 0x61, 0x3E, 0x0A, 0xFF, 0x3C, 0x2F, 0x61, 0x3E], 2),  // a stray byte
        ([0x3C, 0x61, 0x3E, 0xC0, 0xAF, 0x3C, 0x2F, 0x61, 0x3E], 1),  // an overlong "/"
        ([0x3C, 0x61, 0x3E, 0x0A, 0x0A, 0xED, 0xA0, 0x80, 0x3C, 0x2F, 0x61, 0x3E], 3),  // a surrogate
        ([0xFE, 0xFF, 0x00, 0x3C, 0x00, 0x61, 0x00, 0x2F, 0x00, 0x3E], 1),  // UTF-16 with its byte-order mark
        ([0x3C, 0x61, 0x3E, 0xE2, 0x82], 1),  // cut inside a character
    ] as [([UInt8], Int)])
    func notUTF8(bytes: [UInt8], line: Int) {
        #expect(throws: XMLError(.notUTF8, line: line)) { try XMLReader.events(bytes) }
    }

    @Test("a DOCTYPE declaring an external entity is refused before anything is resolved (XXE)")
    func externalEntity() {
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE network-security-config [
              <!ENTITY xxe SYSTEM "file:///etc/passwd">
            ]>
            <network-security-config><domain-config><domain>&xxe;</domain></domain-config></network-security-config>
            """
        #expect(throws: XMLError(.doctype, line: 2)) { try Self.events(document) }
    }

    @Test("a billion-laughs document is refused at its DTD, and without one its entities do not exist")
    func billionLaughs() {
        var document = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n  <!ENTITY lol0 \"lol\">\n"
        for level in 1...9 {
            document += "  <!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">\n"
        }
        document += "]>\n<lolz>&lol9;</lolz>\n"
        #expect(throws: XMLError(.doctype, line: 2)) { try Self.events(document) }
        #expect(throws: XMLError(.undefinedEntity("lol9"), line: 1)) { try Self.events("<lolz>&lol9;</lolz>") }
    }

    @Test("resource limits: nesting past the limit and documents past the size limit")
    func limits() {
        let depth = XMLReader.maximumDepth
        #expect(throws: XMLError(.tooDeep, line: 2)) {
            try Self.events("<a>\n" + String(repeating: "<a>", count: depth + 10_000))
        }
        let large = "<a>" + String(repeating: " ", count: XMLReader.maximumBytes) + "</a>"
        #expect(throws: XMLError(.tooLarge(bytes: XMLReader.maximumBytes + 7), line: 1)) { try Self.events(large) }
    }

    @Test("after an error every later call throws the same error")
    func sticky() throws {
        var reader = XMLReader(Array("<a><b></a>".utf8))
        #expect(try reader.next() == .start("a", attributes: [:]))
        #expect(try reader.next() == .start("b", attributes: [:]))
        let expected = XMLError(.mismatchedTag(expected: "b", found: "a"), line: 1)
        #expect(throws: expected) { try reader.next() }
        #expect(throws: expected) { try reader.next() }
    }

    @Test("every truncation of a well-formed document is an error, never a trap")
    func truncations() throws {
        let document = Array(#"""
            <?xml version="1.0"?><!-- c --><a x='&amp;' y="&#x41;"><b/><![CDATA[d]]>e&lt;</a>
            """#.utf8)
        _ = try XMLReader.events(document)
        for length in 0..<document.count {
            #expect(throws: XMLError.self, "\(length) bytes") { try XMLReader.events(document.prefix(length)) }
        }
    }
}
