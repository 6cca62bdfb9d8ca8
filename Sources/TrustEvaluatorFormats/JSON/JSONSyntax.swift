import FoundationEssentials

/// Strict JSON (RFC 8259) read into ``JSONValue``, saying where the text stops being JSON
/// (Foundation's decoder says only "The given data was not valid JSON"). No object may repeat a
/// key (RFC 8259 leaves the meaning of a repeated key open: one reader takes the first, another
/// the last, so a signed or configured value could be read two ways); strings must be UTF-8 with
/// paired surrogates; nesting is bounded. A leading byte order mark is skipped.
package enum JSONSyntax {
    package struct Problem: Equatable, Sendable {
        package let line: Int
        package let column: Int
        package let message: String
    }

    /// The document's value, or the first place it is not JSON.
    package static func parse(_ bytes: [UInt8]) throws(Problem) -> JSONValue {
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        if bytes.count - parser.index >= 3, bytes[parser.index] == 0xEF, bytes[parser.index + 1] == 0xBB, bytes[parser.index + 2] == 0xBF {
            parser.index += 3
        }
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        if parser.index < bytes.count { throw parser.problem("unexpected text after the end of the document") }
        return value
    }

    package static func firstProblem(in bytes: [UInt8]) -> Problem? {
        do throws(Problem) {
            _ = try parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        func problem(_ message: String) -> Problem {
            var line = 1, column = 1
            for byte in bytes[..<min(index, bytes.count)] {
                if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
            }
            return Problem(line: line, column: column, message: message)
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(Problem) {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { throw problem("expected \(what)") }
            index += 1
        }

        mutating func value(depth: Int) throws(Problem) -> JSONValue {
            guard depth < 64 else { throw problem("nested more than 64 levels deep") }
            skipWhitespace()
            guard index < bytes.count else { throw problem("unexpected end of the document") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return .object(try object(depth: depth))
            case UInt8(ascii: "["): return .array(try array(depth: depth))
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw problem("expected a value (object, array, string, number, true, false or null)")
            }
        }

        mutating func object(depth: Int) throws(Problem) -> [String: JSONValue] {
            index += 1
            skipWhitespace()
            var members: [String: JSONValue] = [:]
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return members }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw problem("expected a key in double quotes") }
                let keyStart = index
                let key = try string()
                guard members[key] == nil else {
                    index = keyStart
                    throw problem("the key \"\(key)\" appears twice in one object")
                }
                try expect(UInt8(ascii: ":"), "':' after the key")
                members[key] = try value(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw problem("unexpected end of the document: '}' missing") }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return members }
                guard bytes[index] == UInt8(ascii: ",") else { throw problem("expected ',' or '}'") }
                index += 1
            }
        }

        mutating func array(depth: Int) throws(Problem) -> [JSONValue] {
            index += 1
            skipWhitespace()
            var elements: [JSONValue] = []
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return elements }
            while true {
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw problem("unexpected end of the document: ']' missing") }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return elements }
                guard bytes[index] == UInt8(ascii: ",") else { throw problem("expected ',' or ']'") }
                index += 1
            }
        }

        mutating func literal(_ word: StaticString) throws(Problem) {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count,
                word.withUTF8Buffer({ expected in bytes[index..<index + count].elementsEqual(expected) })
            else {
                throw problem("expected \(word)")
            }
            index += count
        }

        /// A string, its escapes resolved; `index` is at its opening quote.
        mutating func string() throws(Problem) -> String {
            index += 1
            let start = index
            var ascii = true
            // Most strings have no escape: they are read where they lie.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = try text(bytes[start..<index], ascii: ascii)
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw problem("a control character inside a string (escape it)") }
                if byte >= 0x80 { ascii = false }
                index += 1
            }
            var decoded = Array(bytes[start..<min(index, bytes.count)])
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = try text(decoded[...], ascii: false)
                    index += 1
                    return text
                }
                if byte < 0x20 { throw problem("a control character inside a string (escape it)") }
                guard byte == UInt8(ascii: "\\") else { decoded.append(byte); index += 1; continue }
                index += 1
                guard index < bytes.count else { break }
                switch bytes[index] {
                case UInt8(ascii: "u"): try unicodeEscape(into: &decoded); continue
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(bytes[index])
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                default: throw problem("an unknown escape in a string")
                }
                index += 1
            }
            throw problem("unexpected end of the document inside a string")
        }

        func text(_ utf8: ArraySlice<UInt8>, ascii: Bool) throws(Problem) -> String {
            if ascii { return String(decoding: utf8, as: UTF8.self) }
            guard let text = String(validating: utf8, as: UTF8.self) else { throw problem("a string that is not valid UTF-8") }
            return text
        }

        /// `\uXXXX` (and its low surrogate, for a character beyond the BMP); `index` is at the `u`.
        mutating func unicodeEscape(into decoded: inout [UInt8]) throws(Problem) {
            func hex() throws(Problem) -> UInt32 {
                guard bytes.count - index >= 5 else { throw problem("\\u needs four hexadecimal digits") }
                var value: UInt32 = 0
                for byte in bytes[(index + 1)...(index + 4)] {
                    let digit: UInt8
                    switch byte {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                    default: throw problem("\\u needs four hexadecimal digits")
                    }
                    value = value << 4 | UInt32(digit)
                }
                index += 5
                return value
            }
            var code = try hex()
            if (0xDC00...0xDFFF).contains(code) { throw problem("an unpaired surrogate in a \\u escape") }
            if (0xD800...0xDBFF).contains(code) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw problem("an unpaired surrogate in a \\u escape")
                }
                index += 1
                let low = try hex()
                guard (0xDC00...0xDFFF).contains(low) else { throw problem("an unpaired surrogate in a \\u escape") }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { throw problem("an unpaired surrogate in a \\u escape") }
            decoded.append(contentsOf: UTF8.encode(scalar)!)
        }

        mutating func number() throws(Problem) -> Double {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
                return index - first
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            let integerDigits = digits()
            guard integerDigits > 0 else { throw problem("a number needs digits") }
            guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
                index = integerStart
                throw problem("a number may not start with 0 (leading zeros are not JSON)")
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw problem("a number needs digits after '.'") }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw problem("a number needs digits in its exponent") }
            }
            guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
                index = start
                throw problem("a number too large to represent")
            }
            return value
        }
    }
}

extension JSONSyntax.Problem: Error {}

extension JSONSyntax.Problem: CustomStringConvertible {
    /// "not valid JSON: line L, column C: what".
    package var description: String { "not valid JSON: line \(line), column \(column): \(message)" }
}
