import FoundationEssentials

/// The Public Suffix List: which names are registries (`co.uk`), where anyone may register.
///
/// Pinning every subdomain of a public suffix, or of a name with public suffixes beneath it
/// (`amazonaws.com`, above `s3.amazonaws.com`), would pin names that belong to strangers, so such
/// patterns are refused.
public struct PublicSuffixList: Sendable {
    /// Debian's copy (package `publicsuffix`), kept current by the distribution.
    public static let debianPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    /// The list's rules, parsed on first use: a configuration that names no subdomain pattern
    /// never needs them, and parsing the 12,000 lines costs more than reading the file.
    private let storage: Storage

    fileprivate final class Storage: Sendable {
        let parsed: Locked<Either>
        enum Either { case text(String), tables(Tables) }
        init(text: String) { parsed = Locked(.text(text)) }

        var tables: Tables {
            parsed.withLock { state in
                switch state {
                case .tables(let tables): return tables
                case .text(let text):
                    let tables = Tables(text: text)
                    state = .tables(tables)
                    return tables
                }
            }
        }
    }

    fileprivate struct Tables {
        var rules = Set<String>(), wildcards = Set<String>(), exceptions = Set<String>()
        /// The rules of the list's ICANN section (all rules when the text has no section markers).
        var icann = (rules: Set<String>(), wildcards: Set<String>(), exceptions: Set<String>())
        /// Every proper ancestor of some rule: names with public suffixes beneath them.
        var ancestors = Set<String>()
    }

    /// Takes the list's text (rules one a line, `//` comments, `*.` wildcards, `!` exceptions;
    /// the `===BEGIN PRIVATE DOMAINS===` comment starts the private section), parsed when first asked.
    public init(text: String) {
        storage = Storage(text: text)
    }
}

extension PublicSuffixList.Tables {
    init(text: String) {
        var rules = Set<String>(), wildcards = Set<String>(), exceptions = Set<String>(), ancestors = Set<String>()
        var icann = (rules: Set<String>(), wildcards: Set<String>(), exceptions: Set<String>())
        var inPrivateSection = false
        let privateMarker = Array("===BEGIN PRIVATE DOMAINS===".utf8)
        // Byte-level: the list has 12,000 lines, and Character-level splitting costs tens of
        // milliseconds at start-up. Only the few non-ASCII rules go through Punycode.
        for rawLine in text.utf8.split(separator: UInt8(ascii: "\n")) {
            let rule = rawLine.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "\r") }
            if rawLine.first == UInt8(ascii: "/"), rawLine.count >= privateMarker.count + 3,
                rawLine.dropFirst(3).starts(with: privateMarker)
            {
                inPrivateSection = true
                continue
            }
            guard !rule.isEmpty, !(rule.first == UInt8(ascii: "/") && rule.dropFirst().first == UInt8(ascii: "/")) else { continue }
            let line = String(decoding: rule, as: UTF8.self)
            let ascii =
                rule.allSatisfy { $0 < 0x80 }
                ? line.lowercased()
                : line.split(separator: ".").map { Punycode.aLabel(String($0).lowercased()) ?? String($0) }.joined(separator: ".")
            let name: String
            if ascii.hasPrefix("!") {
                name = String(ascii.dropFirst()); exceptions.insert(name)
                if !inPrivateSection { icann.exceptions.insert(name) }
            } else if ascii.hasPrefix("*.") {
                name = String(ascii.dropFirst(2)); wildcards.insert(name)
                if !inPrivateSection { icann.wildcards.insert(name) }
            } else {
                name = ascii; rules.insert(name)
                if !inPrivateSection { icann.rules.insert(name) }
            }
            var labels = name.split(separator: ".")
            while labels.count > 1 {
                labels.removeFirst()
                ancestors.insert(labels.joined(separator: "."))
            }
            if ascii.hasPrefix("*.") { ancestors.insert(name) }
        }
        self.rules = rules
        self.wildcards = wildcards
        self.exceptions = exceptions
        self.ancestors = ancestors
        self.icann = icann
    }
}

extension PublicSuffixList {

    /// Reads the list from a file (Debian's by default).
    /// - Throws: ``PincheckError`` (`input.unreadable-file`) naming the file and the package to install.
    public init(contentsOf path: String = PublicSuffixList.debianPath) throws(PincheckError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PincheckError(.unreadableFile, "the Public Suffix List cannot be read (Debian: apt-get install publicsuffix)", source: path)
        }
        self.init(text: String(decoding: data, as: UTF8.self))
    }

    /// The list loaded once from Debian's copy, or nil when it is not installed.
    public static let system: PublicSuffixList? = try? PublicSuffixList()

    /// True when `name` (lowercase A-labels) is itself a public suffix, of either section.
    public func isPublicSuffix(_ name: String) -> Bool {
        let tables = storage.tables
        return Self.isSuffix(name, rules: tables.rules, wildcards: tables.wildcards, exceptions: tables.exceptions)
    }

    /// True when `name` (lowercase A-labels) is a suffix of the list's ICANN section, or an
    /// unknown top-level domain: a registry, as Chromium's host check counts them
    /// (`EXCLUDE_PRIVATE_REGISTRIES`, `INCLUDE_UNKNOWN_REGISTRIES`). `s3.amazonaws.com` and
    /// `github.io`, suffixes of the private section, are not.
    public func isICANNSuffix(_ name: String) -> Bool {
        let icann = storage.tables.icann
        return Self.isSuffix(name, rules: icann.rules, wildcards: icann.wildcards, exceptions: icann.exceptions)
    }

    private static func isSuffix(_ name: String, rules: Set<String>, wildcards: Set<String>, exceptions: Set<String>) -> Bool {
        if exceptions.contains(name) { return false }
        if rules.contains(name) { return true }
        if let dot = name.firstIndex(of: "."), wildcards.contains(String(name[name.index(after: dot)...])) { return true }
        // An unlisted top-level label is a suffix too (the list's implicit "*" rule).
        return !name.contains(".")
    }

    /// True when pinning every subdomain of `name` would reach names registered by others:
    /// `name` is a public suffix, or has a public suffix beneath it.
    public func coversOtherRegistrants(_ name: String) -> Bool {
        isPublicSuffix(name) || storage.tables.ancestors.contains(name)
    }
}
