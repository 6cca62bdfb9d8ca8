/// A strict reader for RFC 7468 PEM text: labelled blocks of base64 between BEGIN and END lines.
///
/// Text outside blocks (comments, `openssl x509 -text` output) is ignored, as OpenSSL does; inside
/// a block only base64 and white space are allowed, and every BEGIN needs its END.
enum PEM {
    struct Block {
        let label: String
        let bytes: [UInt8]
        /// 1-based line of the BEGIN line.
        let line: Int
    }

    static func looksLikePEM(_ bytes: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return false }
        // Fast path for the common case, then a search (PEM may follow a comment).
        if Array(bytes.prefix(marker.count)) == marker { return true }
        return String(decoding: bytes, as: UTF8.self).contains("-----BEGIN ")
    }

    static func blocks(in text: String, source: String?) throws(PincheckError) -> [Block] {
        var result: [Block] = []
        var open: (label: String, line: Int, body: String)? = nil
        var lineNumber = 0
        // Split on any line break: "\r\n" is one Character in Swift, so splitting on "\n" alone
        // would leave a CRLF file (RFC 7468 allows them) as a single line.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            let line = rawLine.trimmingWhitespace()
            if let current = open {
                if line.hasPrefix("-----END ") {
                    let label = String(line.dropFirst("-----END ".count).dropLast("-----".count))
                    guard line.hasSuffix("-----"), label == current.label else {
                        throw PincheckError(.malformedPEM, "line \(lineNumber): END line does not match BEGIN \(current.label) on line \(current.line)", source: source)
                    }
                    guard let bytes = Base64.decode(current.body) else {
                        throw PincheckError(.malformedPEM, "the \(current.label) block starting on line \(current.line) is not valid base64", source: source)
                    }
                    result.append(Block(label: current.label, bytes: bytes, line: current.line))
                    open = nil
                } else if line.hasPrefix("-----BEGIN ") {
                    throw PincheckError(.malformedPEM, "line \(lineNumber): BEGIN inside the \(current.label) block starting on line \(current.line) (missing END line)", source: source)
                } else {
                    open?.body += line
                }
            } else if line.hasPrefix("-----BEGIN ") {
                guard line.hasSuffix("-----"), line.count > "-----BEGIN -----".count else {
                    throw PincheckError(.malformedPEM, "line \(lineNumber): malformed BEGIN line", source: source)
                }
                let label = String(line.dropFirst("-----BEGIN ".count).dropLast("-----".count))
                open = (label, lineNumber, "")
            }
        }
        if let current = open {
            throw PincheckError(.malformedPEM, "the \(current.label) block starting on line \(current.line) has no END line (truncated?)", source: source)
        }
        return result
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var s = self
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return s
    }
}

/// Strict standard base64 (RFC 4648 §4): the alphabet, `=` padding at the end only, length a multiple of 4.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            var values: [UInt8] = []
            var padding = 0
            for offset in 0..<4 {
                let character = input[index + offset]
                if character == UInt8(ascii: "=") {
                    guard isLast, offset >= 2 else { return nil }
                    padding += 1
                    values.append(0)
                } else {
                    guard padding == 0 else { return nil }
                    let value = table[Int(character)]
                    guard value != 0xFF else { return nil }
                    values.append(value)
                }
            }
            let triple = (UInt32(values[0]) << 18) | (UInt32(values[1]) << 12) | (UInt32(values[2]) << 6) | UInt32(values[3])
            output.append(UInt8(truncatingIfNeeded: triple >> 16))
            if padding < 2 { output.append(UInt8(truncatingIfNeeded: triple >> 8)) }
            if padding < 1 { output.append(UInt8(truncatingIfNeeded: triple)) }
            index += 4
        }
        return output
    }

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let triple = (b0 << 16) | (b1 << 8) | b2
            output.append(alphabet[Int((triple >> 18) & 0x3F)])
            output.append(alphabet[Int((triple >> 12) & 0x3F)])
            output.append(remaining > 1 ? alphabet[Int((triple >> 6) & 0x3F)] : UInt8(ascii: "="))
            output.append(remaining > 2 ? alphabet[Int(triple & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
