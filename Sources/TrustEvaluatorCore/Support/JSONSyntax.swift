import FoundationEssentials

/// Where JSON text stops being JSON (RFC 8259), for error messages: Foundation's decoder says only
/// "The given data was not valid JSON". Checks syntax, and that no object repeats a key (RFC 8259
/// leaves the meaning of a repeated key open: one reader takes the first, another the last, so a
/// signed or configured value could be read two ways); nesting is bounded.
package enum JSONSyntax {
    package struct Problem: Equatable, Sendable {
        package let line: Int
        package let column: Int
        package let message: String
    }

    package static func firstProblem(in bytes: [UInt8]) -> Problem? {
        var scanner = Scanner(bytes: bytes)
        do throws(Problem) {
            scanner.skipWhitespace()
            if scanner.index < bytes.count, bytes[scanner.index] == 0xEF { scanner.index += 3 }   // BOM
            scanner.skipWhitespace()
            try scanner.value(depth: 0)
            scanner.skipWhitespace()
            if scanner.index < bytes.count { throw scanner.problem("unexpected text after the end of the document") }
            return nil
        } catch {
            return error
        }
    }

    private struct Scanner {
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
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(Problem) {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { throw problem("expected \(what)") }
            index += 1
        }

        mutating func value(depth: Int) throws(Problem) {
            guard depth < 64 else { throw problem("nested more than 64 levels deep") }
            skipWhitespace()
            guard index < bytes.count else { throw problem("unexpected end of the document") }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return }
                var keys = Set<String>()
                while true {
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw problem("expected a key in double quotes") }
                    let keyStart = index
                    try string()
                    let key = Self.decodedKey(bytes[keyStart..<index])
                    guard keys.insert(key).inserted else {
                        index = keyStart
                        throw problem("the key \"\(key)\" appears twice in one object")
                    }
                    try expect(UInt8(ascii: ":"), "':' after the key")
                    try value(depth: depth + 1)
                    skipWhitespace()
                    guard index < bytes.count else { throw problem("unexpected end of the document: '}' missing") }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return }
                    guard bytes[index] == UInt8(ascii: ",") else { throw problem("expected ',' or '}'") }
                    index += 1
                }
            case UInt8(ascii: "["):
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return }
                while true {
                    try value(depth: depth + 1)
                    skipWhitespace()
                    guard index < bytes.count else { throw problem("unexpected end of the document: ']' missing") }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return }
                    guard bytes[index] == UInt8(ascii: ",") else { throw problem("expected ',' or ']'") }
                    index += 1
                }
            case UInt8(ascii: "\""):
                try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try number()
            default:
                throw problem("expected a value (object, array, string, number, true, false or null)")
            }
        }

        /// A quoted key as the decoder reads it (escapes resolved), so `"\u0073erial"` is `serial`.
        static func decodedKey(_ quoted: ArraySlice<UInt8>) -> String {
            guard quoted.contains(UInt8(ascii: "\\")) else { return String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self) }
            return (try? JSONDecoder().decode(String.self, from: Data(quoted))) ?? String(decoding: quoted, as: UTF8.self)
        }

        mutating func literal(_ word: String) throws(Problem) {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
                throw problem("expected \(word)")
            }
            index += expected.count
        }

        mutating func string() throws(Problem) {
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") { index += 1; return }
                if byte < 0x20 { throw problem("a control character inside a string (escape it)") }
                if byte == UInt8(ascii: "\\") {
                    index += 1
                    guard index < bytes.count else { break }
                    switch bytes[index] {
                    case UInt8(ascii: "u"):
                        let hex = bytes[(index + 1)...].prefix(4)
                        guard hex.count == 4, hex.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }) else {
                            throw problem("\\u needs four hexadecimal digits")
                        }
                        index += 4
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    default:
                        throw problem("an unknown escape in a string")
                    }
                }
                index += 1
            }
            throw problem("unexpected end of the document inside a string")
        }

        mutating func number() throws(Problem) {
            func digits() -> Int {
                let start = index
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
                return index - start
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw problem("a number needs digits") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw problem("a number needs digits after '.'") }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw problem("a number needs digits in its exponent") }
            }
        }
    }
}

extension JSONSyntax.Problem: Error {}
