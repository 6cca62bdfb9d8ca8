/// Small text and path helpers, so the engine needs FoundationEssentials only (not Foundation,
/// whose loading dominates a short command's start-up).
package enum FilePath {
    /// `directory/name`, or `name` alone when it is absolute.
    package static func join(_ directory: String, _ name: String) -> String {
        if name.hasPrefix("/") || directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Everything before the last `/` (`""` when there is none; `/` for a file in the root).
    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component without its extension (`my_ca` for `res/raw/my_ca.pem`).
    package static func stem(_ path: String) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// The part after the last `.` of the last component, without the dot (`""` when none).
    static func pathExtension(_ path: String) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}

package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hexadecimal, two digits a byte.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: lowercase(bytes), as: UTF8.self)
    }

    /// The same, as the UTF-8 bytes of the text.
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return out
    }

    /// The bytes of hexadecimal text (either case, no separators); nil for anything else.
    package static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
