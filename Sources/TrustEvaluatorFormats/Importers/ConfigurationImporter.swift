import FoundationEssentials
import TrustEvaluatorCore

/// The configuration formats Pincheck reads.
public enum ConfigurationFormat: String, Sendable, CaseIterable {
    /// Pincheck's own JSON.
    case pincheck
    /// TrustKit: an Info.plist with a `TSKConfiguration` key, or that dictionary alone (plist XML).
    case trustKit = "trustkit"
    /// Android's `network_security_config.xml`.
    case android
    /// OkHttp `CertificatePinner` pins: `pattern sha256/…` lines.
    case okHttp = "okhttp"
    /// Apple's App Transport Security pins: an Info.plist with `NSAppTransportSecurity` /
    /// `NSPinnedDomains`, or that dictionary alone.
    case ats
}

/// Reads other pinning configurations so existing apps can be audited as they are.
///
/// What is kept: patterns, pins, includeSubdomains, enforcement, expiry, report URIs. Imported
/// configurations use the system anchors and let unlisted hosts through with default validation,
/// as TrustKit, Android and OkHttp do.
public enum ConfigurationImporter {
    /// The format of a configuration file's bytes.
    public static func detect(_ data: Data) -> ConfigurationFormat {
        let head = text(data.prefix(4096)).trimmingWhitespaceCharacters()
        if head.hasPrefix("{") { return .pincheck }
        if head.contains("<network-security-config") { return .android }
        if head.hasPrefix("<") || head.hasPrefix("bplist") {
            // An app's Info.plist may hold both; TrustKit's key decides for TrustKit, as the app would use it.
            let plist = text(data.prefix(1 << 20))
            // A binary plist stores its keys as plain strings, without the XML around them.
            let (ats, trustKit) =
                head.hasPrefix("bplist")
                ? ("NSPinnedDomains", "TSKPinnedDomains")
                : ("<key>NSPinnedDomains</key>", "<key>TSKPinnedDomains</key>")
            if plist.contains(ats) && !plist.contains(trustKit) { return .ats }
            return .trustKit
        }
        // OkHttp pins: the first meaningful line is "pattern sha256/…". A file with no meaningful
        // line is not recognised as anything: an empty CertificatePinner and a configuration
        // truncated by a failed download look the same, and only the caller can say which it is
        // (by naming the format; see ``isBlank(_:)``).
        let first = head.split(whereSeparator: \.isNewline).map { String($0).trimmingWhitespaceCharacters() }
            .first { !$0.isEmpty && !$0.hasPrefix("#") && !$0.hasPrefix("//") }
        guard let first else { return .pincheck }
        let fields = first.split(whereSeparator: \.isWhitespace)
        if fields.count == 2, fields[1].hasPrefix("sha256/") || fields[1].hasPrefix("sha1/") { return .okHttp }
        return .pincheck
    }

    /// A configuration file's bytes as text, without a byte order mark: it would hide a file's
    /// first `{` or `<` from ``detect(_:)``, or become part of the first OkHttp pattern.
    static func text(_ data: Data) -> String {
        UnicodeText.droppingByteOrderMark(String(decoding: data, as: UTF8.self))
    }

    /// True when the bytes hold nothing but white space, a byte order mark and comment lines:
    /// what a zero-length download, a full disk or a FIFO without a writer leaves.
    static func isBlank(_ data: Data) -> Bool {
        // The first byte that is not ASCII white space (or a byte order mark) decides at once for
        // every file that starts with content: a configuration is not read line by line twice.
        if let first = data.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }),
            first != UInt8(ascii: "#"), first != UInt8(ascii: "/"), first < 0x80
        {
            return false
        }
        return text(data).split(whereSeparator: \.isNewline).allSatisfy { line in
            let trimmed = String(line).trimmingWhitespaceCharacters()
            return trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix("//")
        }
    }

    /// Why a blank configuration is refused, unless its format is named.
    static let blankRefused =
        "the configuration is empty (nothing but white space or comments): an empty or truncated file is refused rather than read as \"nothing pinned\"; if an OkHttp pin list with no pins is meant, name its format (--config-format okhttp)"

    /// What ``detect(_:)`` tried, for a file it recognises as none of them.
    static let formatsTried =
        "it is none of the formats Pincheck reads: Pincheck JSON (an object, {…}), a TrustKit or App Transport Security (NSPinnedDomains) plist or an Android network_security_config.xml (XML, <…>), OkHttp pins (lines of \"pattern sha256/BASE64\")"

    /// Converts a configuration of any supported format into Pincheck's JSON.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - format: The file's format; nil detects it (and refuses a blank file).
    ///   - source: The file's name, for messages and for finding an Android file's resources.
    ///   - androidRawFolder: Where an Android file's `@raw/NAME` resources are; by default
    ///     the app's `res/raw/`, beside the `res/xml/` the file is in.
    /// - Throws: `PincheckError` naming the file and what in it cannot be imported.
    public static func pincheckJSON(
        from data: Data, format: ConfigurationFormat? = nil, source: String,
        androidRawFolder: String? = nil
    ) throws(PincheckError) -> String {
        if format == nil, isBlank(data) { throw PincheckError(.invalidPolicy, blankRefused, source: source) }
        let format = format ?? detect(data)
        let raw: RawConfiguration
        switch format {
        case .pincheck:
            raw = try RawConfiguration(data, source: source)
        case .trustKit: raw = try trustKit(data, source: source)
        case .android: raw = try android(data, source: source, rawFolder: androidRawFolder)
        case .okHttp: raw = try okHttp(data, source: source)
        case .ats: raw = try ats(data, source: source)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(raw) else {
            throw PincheckError(.invalidPolicy, "cannot encode the imported configuration", source: source)
        }
        return String(decoding: json, as: UTF8.self)
    }

    /// The imported document when `data` is not Pincheck JSON; nil when it is.
    /// - Parameter format: The format the caller named; nil: detected, and a blank file refused.
    static func importIfForeign(
        _ data: Data, format named: ConfigurationFormat? = nil, source: String,
        androidRawFolder: String? = nil
    ) throws(PincheckError) -> RawConfiguration? {
        if named == nil, isBlank(data) { throw PincheckError(.invalidPolicy, blankRefused, source: source) }
        switch named ?? detect(data) {
        case .pincheck:
            let head = text(data.prefix(64)).trimmingWhitespaceCharacters()
            guard head.hasPrefix("{") else {
                throw PincheckError(
                    .invalidPolicy, named == nil ? formatsTried : "not a Pincheck JSON configuration (an object, {…})", source: source)
            }
            return nil
        case .trustKit: return try trustKit(data, source: source)
        case .android: return try android(data, source: source, rawFolder: androidRawFolder)
        case .okHttp: return try okHttp(data, source: source)
        case .ats: return try ats(data, source: source)
        }
    }
}
