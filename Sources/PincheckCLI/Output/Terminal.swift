/// Text from a peer or an input, made safe for a terminal.
enum Terminal {
    /// `text` with every control character (C0, DEL, C1) written as `\u{XX}`, so a server's
    /// subjectAltName or a host-list line cannot move the cursor, set a title or ring the bell.
    /// - Parameter keepingNewlines: Keep line feeds (Pincheck's own multi-line messages).
    static func printable(_ text: String, keepingNewlines: Bool = false) -> String {
        let escapes = { (scalar: Unicode.Scalar) in isControl(scalar) && !(keepingNewlines && scalar == "\n") }
        guard text.unicodeScalars.contains(where: escapes) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if escapes(scalar) {
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
