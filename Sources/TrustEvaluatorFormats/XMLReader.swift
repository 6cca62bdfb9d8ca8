import TrustEvaluatorCore
/// A small, strict, pull-style XML reader for the configuration importers.
///
/// It replaces FoundationXML's `XMLParser`, whose libxml2 and ICU cost about 3 ms of every
/// process start, though only `network_security_config.xml` needs XML. It reads what those files
/// use: an optional `<?xml …?>` declaration, comments, elements, attributes (single or double
/// quotes), self-closing tags, character data, CDATA sections, the five predefined entities and
/// character references. Everything else is refused with the line it is on: DTDs (so no entity
/// expansion and no external entities), other processing instructions, encodings other than UTF-8,
/// mismatched or unclosed tags, repeated attributes, content after the root element, nesting deeper
/// than ``maximumDepth`` and documents over ``maximumBytes``.
///
/// Names are plain names: `android:digest` is the attribute `android:digest`; there is no
/// namespace processing. Line ends are normalised to `\n` as XML requires.
///
/// The input is hostile (it is fuzzed by `FuzzConfiguration`): every read is bounds-checked
/// through ``peek(_:)``, and nothing here force-unwraps or traps.
///
///     var reader = XMLReader(bytes)
///     while let event = try reader.next() { … reader.line … }
struct XMLReader {
    /// What the reader found, in document order. Comments are skipped; the text between two tags
    /// (CDATA and references included, comments left out) is one `text` event.
    enum Event: Equatable, Sendable {
        case start(String, attributes: [String: String])
        case text(String)
        case end(String)
    }

    /// Documents longer than this are refused before any reading: real Network Security Config
    /// files are a few kilobytes.
    static let maximumBytes = 1 << 20
    /// Elements nested deeper than this are refused (Network Security Config files nest about 5 deep).
    static let maximumDepth = 64

    /// The line on which the last event returned by ``next()`` began (1-based). A self-closing
    /// tag's `end` has its start tag's line.
    private(set) var line = 1

    private let scalars: [Unicode.Scalar]
    private var position = 0
    /// The line of `scalars[position]`, kept up to date by ``advance(_:)``.
    private var scanLine = 1
    private var open: [(name: String, line: Int)] = []
    private var pendingEnd: String?
    private var rootClosed = false
    /// Sticky: after an error, every later ``next()`` throws it again.
    private var failure: XMLError?

    /// Prepares to read `bytes` as UTF-8 XML. Undecodable input is reported by the first ``next()``.
    init(_ bytes: some Collection<UInt8>) {
        switch Self.decode(bytes) {
        case .success(let scalars): self.scalars = scalars
        case .failure(let error):
            scalars = []
            failure = error
        }
    }

    /// Every event of a whole document.
    /// - Throws: ``XMLError`` for the first problem, naming its line.
    static func events(_ bytes: some Collection<UInt8>) throws(XMLError) -> [Event] {
        var reader = XMLReader(bytes)
        var events: [Event] = []
        while let event = try reader.next() { events.append(event) }
        return events
    }

    /// The next event, or nil once the root element has closed and only whitespace and comments follow.
    /// - Throws: ``XMLError`` naming the problem and its line; the same error again on later calls.
    mutating func next() throws(XMLError) -> Event? {
        if let failure { throw failure }
        do {
            return try step()
        } catch {
            failure = error
            throw error
        }
    }

    // MARK: Decoding

    /// UTF-8 to scalars: invalid UTF-8 and characters XML forbids (controls, U+FFFE, U+FFFF) are
    /// refused with their line; CR LF and lone CR become LF; a leading byte-order mark is dropped.
    private static func decode(_ bytes: some Collection<UInt8>) -> Result<[Unicode.Scalar], XMLError> {
        guard bytes.count <= maximumBytes else { return .failure(XMLError(.tooLarge(bytes: bytes.count), line: 1)) }
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var line = 1
        var afterCR = false
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if scalar == "\r" {
                    scalars.append("\n")
                    line += 1
                    afterCR = true
                    continue
                }
                defer { afterCR = false }
                if scalar == "\n" && afterCR { continue }
                guard isCharacter(scalar) else { return .failure(XMLError(.invalidCharacter(scalar.value), line: line)) }
                if scalar == "\n" { line += 1 }
                scalars.append(scalar)
            case .emptyInput:
                if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
                return .success(scalars)
            case .error:
                return .failure(XMLError(.notUTF8, line: line))
            }
        }
    }

    // MARK: Events

    private mutating func step() throws(XMLError) -> Event? {
        if let name = pendingEnd {
            pendingEnd = nil
            return close(name)
        }
        while true {
            if open.isEmpty {
                // Before or after the root element: whitespace, comments and the declaration only.
                skipWhitespace()
                line = scanLine
                guard let scalar = peek() else {
                    if !rootClosed { throw fail(.noRootElement) }
                    return nil
                }
                guard scalar == "<" else { throw fail(rootClosed ? .contentAfterRoot : .textOutsideRoot) }
                if looking(at: "<!--") {
                    try comment()
                } else if looking(at: "<?") {
                    try processingInstruction()
                } else if looking(at: "<![CDATA[") {
                    throw fail(rootClosed ? .contentAfterRoot : .textOutsideRoot)
                } else if looking(at: "<!") {
                    try markupDeclaration()
                } else if looking(at: "</") {
                    return try endTag()
                } else if rootClosed {
                    throw fail(.contentAfterRoot)
                } else {
                    return try startTag()
                }
            } else {
                line = scanLine
                guard peek() != nil else {
                    let innermost = open.last
                    throw XMLError(.unclosedElement(innermost?.name ?? ""), line: innermost?.line ?? scanLine)
                }
                if looking(at: "<"), !looking(at: "<!--"), !looking(at: "<![CDATA[") {
                    if looking(at: "</") { return try endTag() }
                    // Inside the root a processing instruction or a declaration can only be refused.
                    if looking(at: "<?") {
                        try processingInstruction()
                        continue
                    }
                    if looking(at: "<!") {
                        try markupDeclaration()
                        continue
                    }
                    return try startTag()
                }
                if let text = try characterData() { return .text(text) }
            }
        }
    }

    private mutating func close(_ name: String) -> Event {
        _ = open.popLast()
        if open.isEmpty { rootClosed = true }
        return .end(name)
    }

    private mutating func startTag() throws(XMLError) -> Event {
        advance()  // <
        guard let name = name() else { throw fail(.malformed("expected an element name after \"<\"")) }
        guard open.count < Self.maximumDepth else { throw XMLError(.tooDeep, line: line) }
        var attributes: [String: String] = [:]
        var selfClosing = false
        while true {
            let spaced = skipWhitespace()
            if skip(">") { break }
            if skip("/>") {
                selfClosing = true
                break
            }
            guard peek() != nil else { throw XMLError(.unterminated("the start tag <\(name)>"), line: line) }
            let attributeLine = scanLine
            guard spaced, let attribute = self.name() else {
                throw fail(.malformed("expected whitespace and an attribute, \">\" or \"/>\" in <\(name)>"))
            }
            skipWhitespace()
            guard skip("=") else { throw fail(.malformed("expected \"=\" after the attribute \(attribute) in <\(name)>")) }
            skipWhitespace()
            let value = try attributeValue(of: attribute)
            guard attributes[attribute] == nil else {
                throw XMLError(.duplicateAttribute(attribute, element: name), line: attributeLine)
            }
            attributes[attribute] = value
        }
        open.append((name, line))
        if selfClosing { pendingEnd = name }
        return .start(name, attributes: attributes)
    }

    private mutating func endTag() throws(XMLError) -> Event {
        advance(2)  // </
        guard let name = name() else { throw fail(.malformed("expected an element name after \"</\"")) }
        skipWhitespace()
        guard skip(">") else { throw fail(.malformed("expected \">\" to end </\(name)")) }
        guard let innermost = open.last else { throw XMLError(.unexpectedEndTag(name), line: line) }
        guard innermost.name == name else {
            throw XMLError(.mismatchedTag(expected: innermost.name, found: name), line: line)
        }
        return close(name)
    }

    /// Text up to the next tag: character data, references and CDATA, with comments skipped.
    /// Nil when there was none (only comments, or an empty CDATA section).
    private mutating func characterData() throws(XMLError) -> String? {
        var text = ""
        while let scalar = peek() {
            if scalar == "<" {
                if looking(at: "<!--") {
                    try comment()
                    continue
                }
                if looking(at: "<![CDATA[") {
                    try cdata(into: &text)
                    continue
                }
                break
            }
            if scalar == "&" {
                text.unicodeScalars.append(try reference())
                continue
            }
            if scalar == "]" && looking(at: "]]>") { throw fail(.malformed("\"]]>\" in character data")) }
            text.unicodeScalars.append(scalar)
            advance()
        }
        return text.isEmpty ? nil : text
    }

    private mutating func attributeValue(of attribute: String) throws(XMLError) -> String {
        guard let quote = peek(), quote == "\"" || quote == "'" else {
            throw fail(.malformed("the value of \(attribute) must be in quotes"))
        }
        let opened = scanLine
        advance()
        var value = ""
        while let scalar = peek() {
            if scalar == quote {
                advance()
                return value
            }
            if scalar == "<" { throw fail(.malformed("\"<\" in the value of \(attribute)")) }
            if scalar == "&" {
                value.unicodeScalars.append(try reference())
                continue
            }
            // Attribute-value normalisation: literal tabs and line ends are spaces.
            value.unicodeScalars.append(scalar == "\n" || scalar == "\t" ? " " : scalar)
            advance()
        }
        throw XMLError(.unterminated("the value of \(attribute)"), line: opened)
    }

    /// `&name;`, `&#NN;` or `&#xNN;`, at `&`. Only the five predefined entities exist: no DTD is read.
    private mutating func reference() throws(XMLError) -> Unicode.Scalar {
        let referenceLine = scanLine
        advance()  // &
        let misused = XMLError(.malformed("\"&\" must begin a reference such as &amp; or &#38;"), line: referenceLine)
        if skip("#") {
            let hex = skip("x")
            var spelled = hex ? "&#x" : "&#"
            var value: UInt32 = 0
            var digits = 0
            var outOfRange = false
            while let scalar = peek(), let digit = Self.digitValue(scalar, hex: hex) {
                if spelled.unicodeScalars.count < 16 { spelled.unicodeScalars.append(scalar) }
                // Stop accumulating past the last code point, so the arithmetic cannot overflow.
                if value > 0x10FFFF { outOfRange = true } else { value = value * (hex ? 16 : 10) + digit }
                digits += 1
                advance()
            }
            guard digits > 0, skip(";") else { throw misused }
            spelled += ";"
            guard !outOfRange, let scalar = Unicode.Scalar(value), Self.isCharacter(scalar) else {
                throw XMLError(.invalidCharacterReference(spelled), line: referenceLine)
            }
            return scalar
        }
        guard let name = name(), skip(";") else { throw misused }
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "apos": return "'"
        case "quot": return "\""
        default: throw XMLError(.undefinedEntity(name), line: referenceLine)
        }
    }

    private mutating func comment() throws(XMLError) {
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

    private mutating func cdata(into text: inout String) throws(XMLError) {
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
    private mutating func markupDeclaration() throws(XMLError) {
        if looking(at: "<!DOCTYPE") { throw fail(.doctype) }
        throw fail(.malformed("unknown markup after \"<!\""))
    }

    /// At `<?`: the XML declaration when it opens the document; any other is refused. Returns
    /// only after reading the declaration.
    private mutating func processingInstruction() throws(XMLError) {
        let atStart = position == 0
        advance(2)  // <?
        guard let target = name() else { throw fail(.malformed("expected a name after \"<?\"")) }
        guard target.lowercased() == "xml" else { throw XMLError(.processingInstruction(target), line: line) }
        guard atStart, target == "xml" else { throw XMLError(.misplacedDeclaration, line: line) }
        try declaration()
    }

    /// The rest of `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` (in that order; only
    /// version is required).
    private mutating func declaration() throws(XMLError) {
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

    // MARK: Scanning

    /// The scalar `offset` places ahead, or nil past either end: the only way `scalars` is read.
    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let index = position + offset
        return scalars.indices.contains(index) ? scalars[index] : nil
    }

    private mutating func advance(_ count: Int = 1) {
        for _ in 0..<max(count, 0) {
            guard let scalar = peek() else { return }
            if scalar == "\n" { scanLine += 1 }
            position += 1
        }
    }

    private func looking(at literal: String) -> Bool {
        var offset = 0
        for scalar in literal.unicodeScalars {
            guard peek(offset) == scalar else { return false }
            offset += 1
        }
        return true
    }

    private mutating func skip(_ literal: String) -> Bool {
        guard looking(at: literal) else { return false }
        advance(literal.unicodeScalars.count)
        return true
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        var skipped = false
        while let scalar = peek(), scalar == " " || scalar == "\t" || scalar == "\n" {
            advance()
            skipped = true
        }
        return skipped
    }

    private mutating func name() -> String? {
        guard let first = peek(), Self.isNameStart(first) else { return nil }
        var name = ""
        name.unicodeScalars.append(first)
        advance()
        while let scalar = peek(), Self.isNameStart(scalar) || Self.isNameContinuation(scalar) {
            name.unicodeScalars.append(scalar)
            advance()
        }
        return name
    }

    private func fail(_ problem: XMLError.Problem) -> XMLError { XMLError(problem, line: scanLine) }

    // MARK: Character classes (XML 1.0, fifth edition)

    /// `Char`: tab, line feed, carriage return, and everything from U+0020 except U+FFFE and U+FFFF
    /// (surrogates are not scalars).
    private static func isCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    /// `NameStartChar`.
    private static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3A, 0x41...0x5A, 0x5F, 0x61...0x7A, 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D,
             0x37F...0x1FFF, 0x200C...0x200D, 0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF,
             0xF900...0xFDCF, 0xFDF0...0xFFFD, 0x10000...0xEFFFF:
            return true
        default:
            return false
        }
    }

    /// `NameChar` minus `NameStartChar`.
    private static func isNameContinuation(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2D, 0x2E, 0x30...0x39, 0xB7, 0x300...0x36F, 0x203F...0x2040: return true
        default: return false
        }
    }

    private static func digitValue(_ scalar: Unicode.Scalar, hex: Bool) -> UInt32? {
        switch scalar.value {
        case 0x30...0x39: return scalar.value - 0x30
        case 0x41...0x46 where hex: return scalar.value - 0x41 + 10
        case 0x61...0x66 where hex: return scalar.value - 0x61 + 10
        default: return nil
        }
    }
}

/// Why ``XMLReader`` stopped, and the line it stopped on.
struct XMLError: Error, Equatable, Sendable, CustomStringConvertible {
    enum Problem: Equatable, Sendable, CustomStringConvertible {
        case tooLarge(bytes: Int)
        case notUTF8
        case invalidCharacter(UInt32)
        case doctype
        case processingInstruction(String)
        case misplacedDeclaration
        case declaration(String)
        case unsupportedEncoding(String)
        case noRootElement
        case textOutsideRoot
        case contentAfterRoot
        case tooDeep
        case unclosedElement(String)
        case unexpectedEndTag(String)
        case mismatchedTag(expected: String, found: String)
        case duplicateAttribute(String, element: String)
        case undefinedEntity(String)
        case invalidCharacterReference(String)
        case unterminated(String)
        case malformed(String)

        var description: String {
            switch self {
            case .tooLarge(let bytes): "the document is \(bytes) bytes; at most \(XMLReader.maximumBytes) are read"
            case .notUTF8: "not valid UTF-8"
            case .invalidCharacter(let value): "the character \(Self.codePoint(value)) is not allowed in XML"
            case .doctype: "<!DOCTYPE> is refused: document type definitions, and the entities they declare, are not read"
            case .processingInstruction(let target): "the processing instruction <?\(target) …?> is refused"
            case .misplacedDeclaration: "the XML declaration <?xml …?> may only open the document"
            case .declaration(let detail): "XML declaration: \(detail)"
            case .unsupportedEncoding(let name): "the encoding \"\(name)\" is refused; only UTF-8 is read"
            case .noRootElement: "no root element"
            case .textOutsideRoot: "text outside the root element"
            case .contentAfterRoot: "content after the root element"
            case .tooDeep: "elements nested more than \(XMLReader.maximumDepth) deep"
            case .unclosedElement(let name): "<\(name)> is never closed"
            case .unexpectedEndTag(let name): "</\(name)> closes no open element"
            case .mismatchedTag(let expected, let found): "</\(found)> does not close <\(expected)>"
            case .duplicateAttribute(let attribute, let element): "<\(element)> repeats the attribute \(attribute)"
            case .undefinedEntity(let name): "the entity &\(name); is not defined (without a DTD only &lt; &gt; &amp; &apos; &quot; exist)"
            case .invalidCharacterReference(let spelled): "\(spelled) is not a character XML allows"
            case .unterminated(let what): "\(what) is not closed"
            case .malformed(let detail): detail
            }
        }

        /// `U+0001`, `U+FFFF`: at least four hex digits, as Unicode writes them.
        private static func codePoint(_ value: UInt32) -> String {
            let hex = String(value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }

    let problem: Problem
    /// 1-based; line ends are LF, CR LF or CR.
    let line: Int

    init(_ problem: Problem, line: Int) {
        self.problem = problem
        self.line = line
    }

    var description: String { "line \(line): \(problem)" }
}
