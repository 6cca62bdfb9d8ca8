import TrustEvaluatorCore

/// Reading the scalars: bounds-checked peeks, literals, names, and XML 1.0's character classes.
extension XMLReader {
    // MARK: Scanning

    /// The scalar `offset` places ahead, or nil past either end: the only way `scalars` is read.
    func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let index = position + offset
        return scalars.indices.contains(index) ? scalars[index] : nil
    }

    mutating func advance(_ count: Int = 1) {
        for _ in 0..<max(count, 0) {
            guard let scalar = peek() else { return }
            if scalar == "\n" { scanLine += 1 }
            position += 1
        }
    }

    func looking(at literal: String) -> Bool {
        var offset = 0
        for scalar in literal.unicodeScalars {
            guard peek(offset) == scalar else { return false }
            offset += 1
        }
        return true
    }

    mutating func skip(_ literal: String) -> Bool {
        guard looking(at: literal) else { return false }
        advance(literal.unicodeScalars.count)
        return true
    }

    @discardableResult
    mutating func skipWhitespace() -> Bool {
        var skipped = false
        while let scalar = peek(), scalar == " " || scalar == "\t" || scalar == "\n" {
            advance()
            skipped = true
        }
        return skipped
    }

    mutating func name() -> String? {
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

    func fail(_ problem: XMLError.Problem) -> XMLError { XMLError(problem, line: scanLine) }

    // MARK: Character classes (XML 1.0, fifth edition)

    /// `Char`: tab, line feed, carriage return, and everything from U+0020 except U+FFFE and U+FFFF
    /// (surrogates are not scalars).
    static func isCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    /// `NameStartChar`.
    static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
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
    static func isNameContinuation(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2D, 0x2E, 0x30...0x39, 0xB7, 0x300...0x36F, 0x203F...0x2040: return true
        default: return false
        }
    }

    static func digitValue(_ scalar: Unicode.Scalar, hex: Bool) -> UInt32? {
        switch scalar.value {
        case 0x30...0x39: return scalar.value - 0x30
        case 0x41...0x46 where hex: return scalar.value - 0x41 + 10
        case 0x61...0x66 where hex: return scalar.value - 0x61 + 10
        default: return nil
        }
    }
}
