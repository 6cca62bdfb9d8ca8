import TrustEvaluatorCore

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
