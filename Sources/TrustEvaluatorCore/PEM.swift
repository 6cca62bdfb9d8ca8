/// A strict reader for RFC 7468 PEM text: labelled blocks of base64 between BEGIN and END lines.
///
/// Text outside blocks (comments, `openssl x509 -text` output) is ignored, as OpenSSL does, but an
/// END line there is an error (its block's BEGIN line was not recognised); a leading UTF-8 byte
/// order mark is skipped, as OpenSSL 3 does. Inside a block only base64 and white space are
/// allowed (a block that is not base64 is read, and refused when its bytes are asked for), and
/// every BEGIN needs its END.
package enum PEM {
    struct Block {
        let label: String
        /// The decoded body, or nil when it is not base64: a legacy encrypted private key's
        /// `Proc-Type` and `DEK-Info` header lines, for one. Callers that want the bytes ask
        /// ``bytes(source:)``; callers that refuse the block for its label need not decode it.
        let contents: [UInt8]?
        /// 1-based line of the BEGIN line.
        let line: Int

        /// The decoded body.
        /// - Throws: ``PincheckError`` (`input.malformed-pem`) naming the block when it is not base64.
        func bytes(source: String?) throws(PincheckError) -> [UInt8] {
            guard let contents else {
                throw PincheckError(.malformedPEM, "the \(label) block starting on line \(line) is not valid base64", source: source)
            }
            return contents
        }
    }

    /// `bytes` as one PEM block labelled `label`: base64 in lines of 64 characters, ending in a newline.
    package static func encode(_ bytes: [UInt8], label: String) -> String {
        let body = Base64.encode(bytes)
        var lines = ["-----BEGIN \(label)-----"]
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether the bytes hold a private-key header (any kind: PKCS #8, encrypted, RSA, EC,
    /// OpenSSH, PuTTY, SSH2; also near misses — any case, dashes missing or doubled, a byte order
    /// mark or spaces before it): a file that must not be read as a host list or echoed line by
    /// line in error messages.
    package static func containsPrivateKey(_ bytes: some Collection<UInt8>) -> Bool {
        String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).contains { isPrivateKeyHeader($0) }
    }

    /// True when a line names a private key (see ``containsPrivateKey(_:)``).
    package static func isPrivateKeyHeader(_ line: some StringProtocol) -> Bool {
        let upper = line.uppercased()
        return (upper.contains("BEGIN") || upper.contains("END")) && (upper.contains("PRIVATE KEY") || upper.contains("PRIVATE-KEY"))
            || upper.contains("PUTTY-USER-KEY-FILE") || upper.contains("PRIVATE-LINES:")
    }

    /// Whether a line of an input that should name hosts is, or is likely part of, key material,
    /// and so must never be echoed: a private-key header, or a run of base64 that no host name
    /// can be — longer than a DNS label (63) with no dot, or 16 characters or more with `+`, `/`
    /// or `=`. A byte order mark and white space around it are ignored.
    package static func looksLikeKeyMaterial(_ line: some StringProtocol) -> Bool {
        if isPrivateKeyHeader(line) { return true }
        for token in line.split(whereSeparator: { $0.isWhitespace || $0 == "\u{FEFF}" }) {
            let base64 = token.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard base64 else { continue }
            if token.utf8.count > 63 { return true }
            if token.utf8.count >= 16 && token.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "=") })
            {
                return true
            }
        }
        return false
    }

    static func looksLikePEM(_ bytes: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return false }
        // Fast path for the common case, then a search of the bytes (PEM may follow a comment):
        // never a String of a binary file, whose grapheme breaking made a 3 MB .p7b take a second.
        if Array(bytes.prefix(marker.count)) == marker { return true }
        return bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            let last = buffer.count - marker.count
            while index <= last {
                if buffer[index] == 0x2D && buffer[index + 1] == 0x2D && (0..<marker.count).allSatisfy({ buffer[index + $0] == marker[$0] }) {
                    return true
                }
                index += 1
            }
            return false
        }
    }

    static func blocks(in text: String, source: String?) throws(PincheckError) -> [Block] {
        try blocks(in: Array(text.utf8), source: source)
    }

    /// Reads the blocks of UTF-8 text without building a string per line: certificate files are
    /// read on every start of the command, and bundles can hold hundreds of certificates.
    static func blocks(in bytes: [UInt8], source: String?) throws(PincheckError) -> [Block] {
        var result: [Block] = []
        var open: (label: String, line: Int, body: [UInt8])? = nil
        var lineNumber = 0
        // A UTF-8 byte order mark (Windows editors write one) is not part of the first line, as in
        // OpenSSL 3's reader; otherwise the first BEGIN line would not be one, and its block, the
        // leaf of a served chain, would be skipped as text.
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let begin = Array("-----BEGIN ".utf8), end = Array("-----END ".utf8), dashes = Array("-----".utf8)
        while start <= bytes.count {
            // Lines end at any line break Swift's Character.isNewline knows, "\r\n" counting as one
            // (RFC 7468 allows CRLF files).
            let (lineEnd, next) = UnicodeText.lineBreak(in: bytes, from: start)
            lineNumber += 1
            let line = UnicodeText.trimmed(bytes, start..<lineEnd)
            func label(after prefix: [UInt8]) -> String {
                String(decoding: bytes[(line.lowerBound + prefix.count)..<(line.upperBound - dashes.count)], as: UTF8.self)
            }
            func has(_ prefix: [UInt8]) -> Bool {
                line.count >= prefix.count && bytes[line.lowerBound..<(line.lowerBound + prefix.count)].elementsEqual(prefix)
            }
            var hasSuffixDashes: Bool {
                line.count >= dashes.count && bytes[(line.upperBound - dashes.count)..<line.upperBound].elementsEqual(dashes)
            }
            if let current = open {
                if has(end) {
                    guard hasSuffixDashes, line.count >= end.count + dashes.count, label(after: end) == current.label else {
                        throw PincheckError(
                            .malformedPEM, "line \(lineNumber): END line does not match BEGIN \(current.label) on line \(current.line)",
                            source: source)
                    }
                    result.append(Block(label: current.label, contents: Base64.decode(current.body), line: current.line))
                    open = nil
                } else if has(begin) {
                    throw PincheckError(
                        .malformedPEM,
                        "line \(lineNumber): BEGIN inside the \(current.label) block starting on line \(current.line) (missing END line)",
                        source: source)
                } else {
                    open?.body.append(contentsOf: bytes[line])
                }
            } else if has(begin) {
                guard hasSuffixDashes, line.count > begin.count + dashes.count else {
                    throw PincheckError(.malformedPEM, "line \(lineNumber): malformed BEGIN line", source: source)
                }
                open = (label(after: begin), lineNumber, [])
            } else if has(end) {
                // An END line outside any block means a block whose BEGIN line was not recognised:
                // skipping it as text would drop a certificate without a word.
                throw PincheckError(
                    .malformedPEM, "line \(lineNumber): END line with no BEGIN line before it (a damaged BEGIN line?)", source: source)
            }
            start = next
        }
        if let current = open {
            throw PincheckError(
                .malformedPEM, "the \(current.label) block starting on line \(current.line) has no END line (truncated?)", source: source)
        }
        return result
    }
}

/// Line breaks and white space in UTF-8 bytes, as Swift's `Character.isNewline` and
/// `Character.isWhitespace` define them, without decoding the text.
package enum UnicodeText {
    /// `text` without the UTF-8 byte order mark a Windows editor writes first, which would
    /// otherwise hide a file's first character or become part of its first value.
    package static func droppingByteOrderMark(_ text: String) -> String {
        text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
    }

    /// The end of the line starting at `start`, and where the next line starts (past `count` when
    /// this is the last line).
    static func lineBreak(in bytes: [UInt8], from start: Int) -> (end: Int, next: Int) {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x0A, 0x0B, 0x0C:
                return (index, index + 1)
            case 0x0D:
                return (index, index + 1 < bytes.count && bytes[index + 1] == 0x0A ? index + 2 : index + 1)
            case 0xC2 where index + 1 < bytes.count && bytes[index + 1] == 0x85:  // U+0085
                return (index, index + 2)
            case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                return (index, index + 3)  // U+2028, U+2029
            default:
                index += 1
            }
        }
        return (bytes.count, bytes.count + 1)
    }

    /// `range` without leading and trailing white space (Unicode White_Space).
    static func trimmed(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, let length = whitespaceLength(bytes, at: lower, limit: upper) { lower += length }
        while lower < upper, let length = whitespaceLength(bytes, endingAt: upper, floor: lower) { upper -= length }
        return lower..<upper
    }

    /// The UTF-8 encodings of the White_Space characters beyond ASCII.
    private static let wide: [[UInt8]] =
        [
            [0xC2, 0x85], [0xC2, 0xA0], [0xE1, 0x9A, 0x80], [0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9], [0xE2, 0x80, 0xAF],
            [0xE2, 0x81, 0x9F], [0xE3, 0x80, 0x80],
        ] + (0x80...0x8A).map { [0xE2, 0x80, UInt8($0)] }

    private static func isASCIIWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    private static func whitespaceLength(_ bytes: [UInt8], at index: Int, limit: Int) -> Int? {
        if isASCIIWhitespace(bytes[index]) { return 1 }
        guard bytes[index] >= 0xC2 else { return nil }
        return wide.first { index + $0.count <= limit && bytes[index..<(index + $0.count)].elementsEqual($0) }?.count
    }

    private static func whitespaceLength(_ bytes: [UInt8], endingAt end: Int, floor: Int) -> Int? {
        if isASCIIWhitespace(bytes[end - 1]) { return 1 }
        guard bytes[end - 1] >= 0x80 else { return nil }
        return wide.first { end - $0.count >= floor && bytes[(end - $0.count)..<end].elementsEqual($0) }?.count
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
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    package static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        decode(Array(text.utf8))
    }

    package static func decode(_ input: [UInt8]) -> [UInt8]? {
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        let equals = UInt8(ascii: "=")
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            var triple: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let character = input[index + offset]
                var value: UInt8 = 0
                if character == equals {
                    guard isLast, offset >= 2 else { return nil }
                    padding += 1
                } else {
                    guard padding == 0 else { return nil }
                    value = table[Int(character)]
                    guard value != 0xFF else { return nil }
                }
                triple = triple << 6 | UInt32(value)
            }
            output.append(UInt8(truncatingIfNeeded: triple >> 16))
            if padding < 2 { output.append(UInt8(truncatingIfNeeded: triple >> 8)) }
            if padding < 1 { output.append(UInt8(truncatingIfNeeded: triple)) }
            index += 4
        }
        return output
    }

    package static func encode(_ bytes: [UInt8]) -> String {
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
