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

    let scalars: [Unicode.Scalar]
    var position = 0
    /// The line of `scalars[position]`, kept up to date by ``advance(_:)``.
    var scanLine = 1
    var open: [(name: String, line: Int)] = []
    var pendingEnd: String?
    var rootClosed = false
    /// Sticky: after an error, every later ``next()`` throws it again.
    var failure: XMLError?

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
    static func decode(_ bytes: some Collection<UInt8>) -> Result<[Unicode.Scalar], XMLError> {
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

    mutating func step() throws(XMLError) -> Event? {
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

    mutating func close(_ name: String) -> Event {
        _ = open.popLast()
        if open.isEmpty { rootClosed = true }
        return .end(name)
    }

    mutating func startTag() throws(XMLError) -> Event {
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

    mutating func endTag() throws(XMLError) -> Event {
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
    mutating func characterData() throws(XMLError) -> String? {
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

    mutating func attributeValue(of attribute: String) throws(XMLError) -> String {
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
    mutating func reference() throws(XMLError) -> Unicode.Scalar {
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
}
