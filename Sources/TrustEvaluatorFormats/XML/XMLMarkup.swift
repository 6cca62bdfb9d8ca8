import TrustEvaluatorCore

/// Markup other than elements: comments, CDATA sections, the refused DTDs and processing
/// instructions, and the XML declaration.
extension XMLReader {
    mutating func comment() throws(XMLError) {
        let opened = scanLine
        advance(4)  // <!--
        while let scalar = peek() {
            if scalar == "-" && peek(1) == "-" {
                guard peek(2) == ">" else { throw fail(.malformed("\"--\" inside a comment")) }
                advance(3)
                return
            }
            advance()
        }
        throw XMLError(.unterminated("the comment"), line: opened)
    }

    mutating func cdata(into text: inout String) throws(XMLError) {
        let opened = scanLine
        advance(9)  // <![CDATA[
        while let scalar = peek() {
            if scalar == "]" && looking(at: "]]>") {
                advance(3)
                return
            }
            text.unicodeScalars.append(scalar)
            advance()
        }
        throw XMLError(.unterminated("the CDATA section"), line: opened)
    }

    /// `<!` that is neither a comment nor CDATA: a DOCTYPE, or nothing XML knows. Always throws.
    mutating func markupDeclaration() throws(XMLError) {
        if looking(at: "<!DOCTYPE") { throw fail(.doctype) }
        throw fail(.malformed("unknown markup after \"<!\""))
    }

    /// At `<?`: the XML declaration when it opens the document; any other is refused. Returns
    /// only after reading the declaration.
    mutating func processingInstruction() throws(XMLError) {
        let atStart = position == 0
        advance(2)  // <?
        guard let target = name() else { throw fail(.malformed("expected a name after \"<?\"")) }
        guard target.lowercased() == "xml" else { throw XMLError(.processingInstruction(target), line: line) }
        guard atStart, target == "xml" else { throw XMLError(.misplacedDeclaration, line: line) }
        try declaration()
    }

    /// The rest of `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` (in that order; only
    /// version is required).
    mutating func declaration() throws(XMLError) {
        let order = ["version", "encoding", "standalone"]
        var next = 0
        while true {
            let spaced = skipWhitespace()
            if skip("?>") { break }
            guard peek() != nil else { throw XMLError(.unterminated("the XML declaration"), line: line) }
            guard spaced, let name = name() else { throw fail(.declaration("expected whitespace and version, encoding or standalone")) }
            guard let rank = order.firstIndex(of: name), rank >= next, next > 0 || rank == 0 else {
                throw fail(.declaration("\(name) is not expected here (version, then encoding, then standalone)"))
            }
            next = rank + 1
            skipWhitespace()
            guard skip("=") else { throw fail(.declaration("expected \"=\" after \(name)")) }
            skipWhitespace()
            guard let quote = peek(), quote == "\"" || quote == "'" else { throw fail(.declaration("the value of \(name) must be in quotes")) }
            advance()
            var value = ""
            while let scalar = peek(), scalar != quote, scalar != "<", scalar != ">", value.unicodeScalars.count < 64 {
                value.unicodeScalars.append(scalar)
                advance()
            }
            guard skip(String(quote)) else { throw fail(.declaration("the value of \(name) is not closed")) }
            switch name {
            case "version" where value != "1.0":
                throw fail(.declaration("version \"\(value)\" is not read; only 1.0"))
            case "encoding" where value.lowercased() != "utf-8":
                throw fail(.unsupportedEncoding(value))
            case "standalone" where value != "yes" && value != "no":
                throw fail(.declaration("standalone must be \"yes\" or \"no\""))
            default:
                break
            }
        }
        guard next > 0 else { throw XMLError(.declaration("version is missing"), line: line) }
    }
}
