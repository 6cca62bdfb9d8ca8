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
            let (ats, trustKit) = head.hasPrefix("bplist") ? ("NSPinnedDomains", "TSKPinnedDomains")
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
           first != UInt8(ascii: "#"), first != UInt8(ascii: "/"), first < 0x80 {
            return false
        }
        return text(data).split(whereSeparator: \.isNewline).allSatisfy { line in
            let trimmed = String(line).trimmingWhitespaceCharacters()
            return trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix("//")
        }
    }

    /// Why a blank configuration is refused, unless its format is named.
    static let blankRefused = "the configuration is empty (nothing but white space or comments): an empty or truncated file is refused rather than read as \"nothing pinned\"; if an OkHttp pin list with no pins is meant, name its format (--config-format okhttp)"

    /// What ``detect(_:)`` tried, for a file it recognises as none of them.
    static let formatsTried = "it is none of the formats Pincheck reads: Pincheck JSON (an object, {…}), a TrustKit or App Transport Security (NSPinnedDomains) plist or an Android network_security_config.xml (XML, <…>), OkHttp pins (lines of \"pattern sha256/BASE64\")"

    /// Converts a configuration of any supported format into Pincheck's JSON.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - format: The file's format; nil detects it (and refuses a blank file).
    ///   - source: The file's name, for messages and for finding an Android file's resources.
    ///   - androidRawFolder: Where an Android file's `@raw/NAME` resources are; by default
    ///     the app's `res/raw/`, beside the `res/xml/` the file is in.
    /// - Throws: `PincheckError` naming the file and what in it cannot be imported.
    public static func pincheckJSON(from data: Data, format: ConfigurationFormat? = nil, source: String,
                                    androidRawFolder: String? = nil) throws(PincheckError) -> String {
        if format == nil, isBlank(data) { throw PincheckError(.invalidPolicy, blankRefused, source: source) }
        let format = format ?? detect(data)
        let raw: RawConfiguration
        switch format {
        case .pincheck:
            do { raw = try JSONDecoder().decode(RawConfiguration.self, from: data) } catch let error as DecodingError {
                throw PincheckError(.invalidPolicy, ConfigurationError.describe(error), source: source)
            } catch { throw PincheckError(.invalidPolicy, "not valid JSON", source: source) }
        case .trustKit: raw = try trustKit(data, source: source)
        case .android: raw = try android(data, source: source, rawFolder: androidRawFolder)
        case .okHttp: raw = try okHttp(data, source: source)
        case .ats: raw = try ats(data, source: source)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(raw) else { throw PincheckError(.invalidPolicy, "cannot encode the imported configuration", source: source) }
        return String(decoding: json, as: UTF8.self)
    }

    /// The imported document when `data` is not Pincheck JSON; nil when it is.
    /// - Parameter format: The format the caller named; nil: detected, and a blank file refused.
    static func importIfForeign(_ data: Data, format named: ConfigurationFormat? = nil, source: String,
                                androidRawFolder: String? = nil) throws(PincheckError) -> RawConfiguration? {
        if named == nil, isBlank(data) { throw PincheckError(.invalidPolicy, blankRefused, source: source) }
        switch named ?? detect(data) {
        case .pincheck:
            let head = text(data.prefix(64)).trimmingWhitespaceCharacters()
            guard head.hasPrefix("{") else { throw PincheckError(.invalidPolicy, named == nil ? formatsTried : "not a Pincheck JSON configuration (an object, {…})", source: source) }
            return nil
        case .trustKit: return try trustKit(data, source: source)
        case .android: return try android(data, source: source, rawFolder: androidRawFolder)
        case .okHttp: return try okHttp(data, source: source)
        case .ats: return try ats(data, source: source)
        }
    }

    // MARK: Apple's NSPinnedDomains

    private static let atsDomainKeys: Set<String> = ["NSIncludesSubdomains", "NSPinnedLeafIdentities", "NSPinnedCAIdentities"]

    /// App Transport Security identity pinning (iOS 14+, macOS 11+): per domain, the leaf must match
    /// one of `NSPinnedLeafIdentities` and a certificate above it one of `NSPinnedCAIdentities`;
    /// with both lists, both must; an empty list blocks the domain. Each identity is a dictionary
    /// `{ SPKI-SHA256-BASE64: … }`. Unlisted domains get ATS's default validation.
    static func ats(_ data: Data, source: String) throws(PincheckError) -> RawConfiguration {
        let root = try plistDictionary(data, source: source, format: "App Transport Security")
        let transport = root["NSAppTransportSecurity"]?.dictionary ?? root
        guard let domains = transport["NSPinnedDomains"]?.dictionary else {
            throw PincheckError(.invalidPolicy, "no NSPinnedDomains dictionary (nor an NSAppTransportSecurity holding one)", source: source)
        }
        var hosts: [RawHost] = []
        for (domain, path, settings) in try domainSettings(domains, in: "NSPinnedDomains", allowing: atsDomainKeys, source: source) {
            func identities(_ key: String) throws(PincheckError) -> [String]? {
                guard let value = settings[key] else { return nil }
                guard case .array(let entries) = value else {
                    throw PincheckError(.invalidPolicy, "\(path).\(key): not an array of identities", source: source)
                }
                var pins: [String] = []
                for (index, entry) in entries.enumerated() {
                    guard let identity = entry.dictionary, identity.count == 1, let hash = identity["SPKI-SHA256-BASE64"]?.string else {
                        throw PincheckError(.invalidPolicy, "\(path).\(key)[\(index)]: an identity is a dictionary holding SPKI-SHA256-BASE64 only", source: source)
                    }
                    pins.append("sha256/" + hash)
                }
                return pins
            }
            let leaf = try identities("NSPinnedLeafIdentities")
            let authorities = try identities("NSPinnedCAIdentities")
            guard leaf != nil || authorities != nil else {
                throw PincheckError(.invalidPolicy, "\(path): neither NSPinnedLeafIdentities nor NSPinnedCAIdentities", source: source)
            }
            // A Boolean in Apple's schema; another type is refused rather than read as false.
            if let value = settings["NSIncludesSubdomains"], value.bool == nil {
                throw PincheckError(.invalidPolicy, "\(path).NSIncludesSubdomains: not a Boolean (<true/> or <false/>)", source: source)
            }
            hosts.append(RawHost(pattern: domain, includeSubdomains: settings["NSIncludesSubdomains"]?.bool,
                                 leafPins: leaf, caPins: authorities))
        }
        return RawConfiguration(allHostsMustBeEvaluated: false, hosts: hosts)
    }

    /// A plist's per-domain dictionaries in name order, each with its key path; a domain whose
    /// value is not a dictionary, or holds a key outside `allowed`, is an error naming it.
    private static func domainSettings(_ domains: [String: PlistValue], in key: String, allowing allowed: Set<String>,
                                       source: String) throws(PincheckError) -> [(String, String, [String: PlistValue])] {
        var result: [(String, String, [String: PlistValue])] = []
        for domain in domains.keys.sorted() {
            let path = "\(key).\(domain)"
            guard let settings = domains[domain]?.dictionary else {
                throw PincheckError(.invalidPolicy, "\(path): not a dictionary", source: source)
            }
            if let unknown = settings.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw PincheckError(.invalidPolicy, "\(path).\(unknown): unknown \(key) key", source: source)
            }
            result.append((domain, path, settings))
        }
        return result
    }

    /// A property list's top dictionary, XML or binary (a built app's Info.plist), with the
    /// importers' guards: UTF-8 XML, and bounded nesting and size.
    private static func plistDictionary(_ data: Data, source: String, format: String) throws(PincheckError) -> [String: PlistValue] {
        let tooDeep = PincheckError(.invalidPolicy, "the property list nests more than \(PlistValue.maximumDepth) levels deep", source: source)
        if data.starts(with: BinaryPlistShape.magic) {
            switch BinaryPlistShape.check([UInt8](data), maximumDepth: PlistValue.maximumDepth, maximumValues: PlistValue.maximumValues) {
            case .fits: break
            case .tooDeep: throw tooDeep
            case .tooLarge: throw PincheckError(.invalidPolicy, "the binary property list expands to more than \(PlistValue.maximumValues) values", source: source)
            case .malformed: throw PincheckError(.invalidPolicy, "not a property list (a binary plist whose object table cannot be read)", source: source)
            }
        } else {
            guard String(validating: data, as: UTF8.self) != nil else {
                throw PincheckError(.invalidPolicy, "not valid UTF-8 (\(format) configurations are plist XML or binary plists)", source: source)
            }
            guard PlistValue.nestingDepth(data) <= PlistValue.maximumDepth else { throw tooDeep }
            if let problem = PlistValue.xmlRootProblem(data) {
                throw PincheckError(.invalidPolicy, "not a property list: \(problem)", source: source)
            }
        }
        let object: PlistValue
        do { object = try PropertyListDecoder().decode(PlistValue.self, from: data) } catch {
            throw PincheckError(.invalidPolicy, "not a property list (\(format) configurations are plist XML or binary plists)", source: source)
        }
        guard let dictionary = object.dictionary else {
            throw PincheckError(.invalidPolicy, "the property list is not a dictionary", source: source)
        }
        return dictionary
    }

    // MARK: OkHttp

    static func okHttp(_ data: Data, source: String) throws(PincheckError) -> RawConfiguration {
        var order: [String] = []
        var pins: [String: [String]] = [:]
        for (number, rawLine) in text(data).split(whereSeparator: \.isNewline).enumerated() {
            let line = String(rawLine).trimmingWhitespaceCharacters()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("//") { continue }
            let parts = line.split(whereSeparator: \.isWhitespace)
            guard parts.count == 2, parts[1].hasPrefix("sha256/") || parts[1].hasPrefix("sha1/") else {
                throw PincheckError(.invalidPolicy, "line \(number + 1): expected \"pattern sha256/BASE64\" (OkHttp CertificatePinner.add)", source: source)
            }
            let pattern = String(parts[0])
            if pins[pattern] == nil { order.append(pattern) }
            pins[pattern, default: []].append(String(parts[1]))
        }
        // An empty CertificatePinner pins nothing: every host gets default validation.
        return RawConfiguration(allHostsMustBeEvaluated: false, patternMatching: "all-matching",
                                hosts: order.map { RawHost(pattern: $0, mode: "public-key", pins: pins[$0]) })
    }

    // MARK: TrustKit

    /// The exclusion key as TrustKit reads it at run time: the value of its
    /// `kTSKExcludeSubdomainFromParentPolicy` constant is `kSKExcludeSubdomainFromParentPolicy`
    /// (TrustKit/TSKTrustKitConfig.m). The constant's own name is accepted too.
    private static let exclusionKeys = ["kSKExcludeSubdomainFromParentPolicy", "TSKExcludeSubdomainFromParentPolicy"]

    private static let trustKitDomainKeys: Set<String> = Set([
        "TSKPublicKeyHashes", "TSKIncludeSubdomains", "TSKEnforcePinning", "TSKExpirationDate", "TSKReportUris",
        "TSKDisableDefaultReportUri", "TSKPublicKeyAlgorithms",
    ] + exclusionKeys)

    /// The values of TrustKit's (older) `TSKPublicKeyAlgorithms`; any other is refused.
    private static let trustKitAlgorithms: Set<String> = [
        "TSKAlgorithmRsa2048", "TSKAlgorithmRsa4096", "TSKAlgorithmEcDsaSecp256r1", "TSKAlgorithmEcDsaSecp384r1",
    ]

    static func trustKit(_ data: Data, source: String) throws(PincheckError) -> RawConfiguration {
        // Only XML property lists, as TrustKit's Info.plist configurations are, only UTF-8, and
        // nesting bounded before the (recursive) property-list parser sees the document.
        var configuration = try plistDictionary(data, source: source, format: "TrustKit")
        if let nested = configuration["TSKConfiguration"]?.dictionary { configuration = nested }
        guard let domains = configuration["TSKPinnedDomains"]?.dictionary else {
            throw PincheckError(.invalidPolicy, "no TSKPinnedDomains dictionary (nor a TSKConfiguration holding one)", source: source)
        }
        // TrustKit's load-time rules (parseTrustKitConfiguration): a configuration TrustKit refuses
        // to load is refused here too, with TrustKit's reason.
        guard !domains.isEmpty else {
            throw PincheckError(.invalidPolicy, "TSKPinnedDomains is empty: TrustKit refuses a configuration with no pinned domains", source: source)
        }
        var hosts: [RawHost] = []
        var exclusions: [String] = []
        var includingSubdomains: [String] = []
        for (domain, path, settings) in try domainSettings(domains, in: "TSKPinnedDomains", allowing: trustKitDomainKeys, source: source) {
            func flag(_ key: String) throws(PincheckError) -> Bool? {
                guard let value = settings[key] else { return nil }
                guard let bool = value.objectiveCBoolValue else {
                    throw PincheckError(.invalidPolicy, "\(path).\(key): not a Boolean, number or string (TrustKit reads it with -boolValue, which this value does not have)", source: source)
                }
                return bool
            }
            var excluded = false
            for key in exclusionKeys where try flag(key) == true { excluded = true }
            if excluded {
                guard settings.count == 1 else {
                    throw PincheckError(.invalidPolicy, "\(path): an excluded domain takes no other key (TrustKit refuses it)", source: source)
                }
                exclusions.append(domain)
                hosts.append(RawHost(pattern: domain, mode: "none"))
                continue
            }
            guard let hashes = settings["TSKPublicKeyHashes"]?.strings else {
                throw PincheckError(.invalidPolicy, "\(path).TSKPublicKeyHashes: missing (a list of base64 SPKI SHA-256 hashes)", source: source)
            }
            for hash in hashes where Base64.decode(hash)?.count != 32 {
                throw PincheckError(.invalidPolicy, "\(path).TSKPublicKeyHashes: \"\(hash)\" is not a base64 SHA-256 hash (TrustKit refuses it)", source: source)
            }
            // TrustKit: an enforced policy needs a backup pin, a report-only one at least one pin.
            let enforcement = try flag("TSKEnforcePinning")
            let enforced = enforcement ?? true
            let required = enforced ? 2 : 1
            guard Set(hashes).count >= required else {
                throw PincheckError(.invalidPolicy, "\(path).TSKPublicKeyHashes: \(enforced ? "an enforced policy" : "a policy") needs at least \(required) distinct pins (TrustKit refuses fewer: no backup pin)", source: source)
            }
            for algorithm in settings["TSKPublicKeyAlgorithms"]?.strings ?? [] where !trustKitAlgorithms.contains(algorithm) {
                throw PincheckError(.invalidPolicy, "\(path).TSKPublicKeyAlgorithms: unknown algorithm \"\(algorithm)\"", source: source)
            }
            let includesSubdomains = try flag("TSKIncludeSubdomains")
            _ = try flag("TSKDisableDefaultReportUri")
            if includesSubdomains == true { includingSubdomains.append(domain) }
            hosts.append(RawHost(
                pattern: domain,
                includeSubdomains: includesSubdomains,
                mode: "public-key",
                pins: hashes.map { "sha256/" + $0 },
                // TrustKit enforces by default; `TSKEnforcePinning: NO` is report-only.
                enforce: enforcement,
                expires: settings["TSKExpirationDate"]?.string,
                reportURIs: settings["TSKReportUris"]?.strings))
        }
        // An exclusion needs a parent policy that covers it (TrustKit looks one up and refuses otherwise).
        for excluded in exclusions where !includingSubdomains.contains(where: { excluded.hasSuffix("." + $0) }) {
            throw PincheckError(.invalidPolicy, "TSKPinnedDomains.\(excluded): excluded from a parent policy, but no parent domain with TSKIncludeSubdomains covers it (TrustKit refuses it)", source: source)
        }
        return RawConfiguration(allHostsMustBeEvaluated: false, hosts: hosts)
    }

    // MARK: Android Network Security Config

    static func android(_ data: Data, source: String, rawFolder: String? = nil) throws(PincheckError) -> RawConfiguration {
        // Refused before any reading, with a message naming the format (the reader would refuse it too, by line).
        guard String(validating: data, as: UTF8.self) != nil else {
            throw PincheckError(.invalidPolicy, "not valid UTF-8 (network_security_config.xml is UTF-8 XML)", source: source)
        }
        var reader = XMLReader(data)
        // Absolute, so the imported file names resolve wherever the configuration is read from.
        var walker = NetworkSecurityConfigReader(rawFolder: Self.absolute(rawFolder ?? Self.androidRawFolder(for: source)))
        while true {
            let event: XMLReader.Event?
            do {
                event = try reader.next()
            } catch {
                if case .tooLarge = error.problem { throw PincheckError(.tooLarge, "\(error.problem)", source: source) }
                throw PincheckError(.invalidPolicy, "malformed XML (line \(error.line)): \(error.problem)", source: source)
            }
            guard let event else { break }
            do {
                try walker.read(event, line: reader.line)
            } catch {
                throw PincheckError(.invalidPolicy, error.message, source: source)
            }
        }
        return walker.configuration()
    }

    /// Where `@raw/NAME` resources live: the app's `res/raw/`, the `raw/` folder beside the folder
    /// the configuration is in (its `res/xml/`).
    static func androidRawFolder(for source: String) -> String {
        let folder = FilePath.directory(of: absolute(source))
        return FilePath.join(FilePath.directory(of: folder), "raw")
    }

    /// `path` from the working directory, with `.` and `..` components resolved.
    static func absolute(_ path: String) -> String {
        let joined = path.hasPrefix("/") ? path : FilePath.join(FileManager.default.currentDirectoryPath, path)
        var components: [Substring] = []
        for component in joined.split(separator: "/") {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }
}

/// Walks `network_security_config.xml` as Android's `XmlConfigSource` reads it: a nested
/// `domain-config` inherits what it does not set (pins, trust anchors, Certificate Transparency)
/// from its parent, then from `base-config`, then from the platform default (the system store,
/// CT not required); `<trust-anchors>` replaces what it would inherit, and an empty one trusts
/// nothing. As in Android's `NetworkSecurityConfig.Builder`, what is inherited is resolved once
/// the whole file is read, so the order of the elements inside a `domain-config` does not matter.
/// `debug-overrides` applies to debuggable builds only and is ignored.
///
/// `<certificateTransparency enabled="true|false"/>` (base-config and domain-config only; a
/// bare element means false) is resolved as `Builder.getCertificateTransparencyVerificationRequired`
/// does: the element, if the config has one; else false when the config's own `<certificates>`
/// include a user-controlled source (`user` or `@raw/NAME`); else the parent's answer; else the
/// platform default, which Pincheck takes as not required (an app targeting API 36 or lower).
/// Where CT is required the host gets Chrome's policy on every anchor's paths, since Android's
/// conscrypt checks SCTs whatever the anchor.
private struct NetworkSecurityConfigReader {
    /// What in a well-formed file cannot be imported; the first one ends the import.
    struct Failure: Error {
        let message: String
    }

    /// One `<certificates>` entry: `system`, `user` (read as system: Linux has no user store), or
    /// a resolved `@raw/NAME` file.
    private struct Source {
        let file: String?
        let overridesPins: Bool
        /// `user` or `@raw/NAME`: a source the app's user or developer controls, which turns CT
        /// off unless the config asks for it (`CertificatesEntryRef.disableCT`).
        let disablesTransparency: Bool
    }

    /// One `domain-config` (or base-config) as written: what it sets itself, nil where it inherits.
    private struct Config {
        /// The enclosing domain-config; nil: base-config (or, for base-config, the platform default).
        var parent: Int?
        var domains: [(name: String, includeSubdomains: Bool)] = []
        var pins: [String]?
        var expiration: String?
        var anchors: [Source]?
        var transparency: Bool?
    }

    let rawFolder: String
    /// The domain-configs in document order (a parent before its children).
    private var configs: [Config] = []
    private var base = Config()
    /// Indices into `configs` of the domain-configs being read, innermost last.
    private var stack: [Int] = []
    /// Indices into `configs` in the order their elements closed (the order hosts are listed in).
    private var closed: [Int] = []
    private var text = ""
    private var pendingDomain: Bool?
    private var pendingDigest: String?
    private var inPinSet = false
    private var inBaseConfig = false
    /// The trust-anchors element being read, if any.
    private var trustAnchors: [Source]?
    /// Depth inside debug-overrides (ignored).
    private var debugDepth = 0

    init(rawFolder: String) {
        self.rawFolder = rawFolder
    }

    /// - Parameter line: Where the event began, for the messages.
    mutating func read(_ event: XMLReader.Event, line: Int) throws(Failure) {
        switch event {
        case .start(let element, let attributes):
            if debugDepth > 0 || element == "debug-overrides" { debugDepth += 1; return }
            try start(element, attributes: attributes, line: line)
        case .text(let string):
            if debugDepth == 0 { text += string }
        case .end(let element):
            if debugDepth > 0 { debugDepth -= 1; return }
            try end(element, line: line)
        }
    }

    /// The config an element inside a `domain-config` or `base-config` sets.
    private mutating func withCurrent(_ change: (inout Config) -> Void) {
        if let index = stack.last { change(&configs[index]) } else if inBaseConfig { change(&base) }
    }

    private mutating func start(_ element: String, attributes: [String: String], line: Int) throws(Failure) {
        text = ""
        switch element {
        case "base-config":
            inBaseConfig = true
        case "domain-config":
            configs.append(Config(parent: stack.last))
            stack.append(configs.count - 1)
        case "domain":
            pendingDomain = attributes["includeSubdomains"] == "true"
        case "pin-set":
            guard let index = stack.last else { throw Failure(message: "<pin-set> outside <domain-config>") }
            inPinSet = true
            configs[index].pins = []
            configs[index].expiration = attributes["expiration"]
        case "pin":
            pendingDigest = attributes["digest"] ?? ""
        case "trust-anchors":
            trustAnchors = []
        case "certificates":
            guard trustAnchors != nil else { throw Failure(message: "line \(line): <certificates> outside <trust-anchors>") }
            let overrides = attributes["overridePins"] == "true"
            let src = attributes["src"] ?? ""
            switch src {
            case "system", "user":
                trustAnchors?.append(Source(file: nil, overridesPins: overrides, disablesTransparency: src == "user"))
            case let reference where reference.hasPrefix("@raw/") && reference.count > 5:
                let file = try resolve(String(reference.dropFirst(5)), line: line)
                trustAnchors?.append(Source(file: file, overridesPins: overrides, disablesTransparency: true))
            default:
                throw Failure(message: "line \(line): certificates src \"\(src)\" is not system, user or @raw/NAME")
            }
        case "certificateTransparency":
            // XmlConfigSource.parseCertificateTransparency: getAttributeBooleanValue("enabled", false).
            let enabled = attributes["enabled"] == "true"
            withCurrent { $0.transparency = enabled }
        default:
            break
        }
    }

    /// `res/raw/NAME.*`: Android resource names carry no extension.
    private func resolve(_ name: String, line: Int) throws(Failure) -> String {
        guard !name.contains("/"), !name.contains("..") else { throw Failure(message: "line \(line): \"@raw/\(name)\" is not a resource name") }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: rawFolder)) ?? []
        let matches = entries.filter { $0 == name || FilePath.stem($0) == name }.sorted()
        guard let file = matches.first else {
            throw Failure(message: "line \(line): @raw/\(name) is not in \(rawFolder) (the app's res/raw, beside res/xml)")
        }
        return FilePath.join(rawFolder, file)
    }

    private static func anchors(_ sources: [Source]) -> RawAnchors {
        let files = sources.compactMap(\.file)
        if sources.isEmpty { return .files([]) }
        if files.isEmpty { return .system }
        return .files((sources.contains { $0.file == nil } ? [RawAnchors.systemToken] : []) + files)
    }

    private static func overriding(_ sources: [Source]) -> RawAnchors? {
        let overriding = sources.filter(\.overridesPins)
        return overriding.isEmpty ? nil : anchors(overriding)
    }

    // Every index below is guarded: the input is hostile, and a trap here would take the process down.
    private mutating func end(_ element: String, line: Int) throws(Failure) {
        let value = text.trimmingWhitespaceCharacters()
        text = ""
        switch element {
        case "domain":
            guard let index = stack.last else { throw Failure(message: "<domain> outside <domain-config>") }
            configs[index].domains.append((value, pendingDomain ?? false))
            pendingDomain = nil
        case "pin":
            guard inPinSet, let index = stack.last else { throw Failure(message: "line \(line): <pin> outside <pin-set>") }
            guard pendingDigest == "SHA-256" else {
                throw Failure(message: "line \(line): pin digest \"\(pendingDigest ?? "")\" is not SHA-256 (Android accepts only SHA-256)")
            }
            configs[index].pins?.append("sha256/" + value)
            pendingDigest = nil
        case "pin-set":
            inPinSet = false
        case "trust-anchors":
            let sources = trustAnchors ?? []
            trustAnchors = nil
            withCurrent { $0.anchors = sources }
        case "base-config":
            inBaseConfig = false
        case "domain-config":
            guard let index = stack.popLast() else { throw Failure(message: "line \(line): unbalanced </domain-config>") }
            // XmlConfigSource.parseConfigEntry: a domain-config must name its domains.
            guard !configs[index].domains.isEmpty else {
                throw Failure(message: "line \(line): no <domain> elements in <domain-config> (Android refuses the file: \"No domain elements in domain-config\")")
            }
            closed.append(index)
        default:
            break
        }
    }

    // MARK: Inheritance, resolved once the file is read

    /// The config `index` takes `field` from: itself, else its nearest parent that sets it, else
    /// base-config (which may not set it either).
    private func owner(_ index: Int, setting field: (Config) -> Bool) -> Config {
        var current: Int? = index
        while let at = current, configs.indices.contains(at) {
            if field(configs[at]) { return configs[at] }
            current = configs[at].parent
        }
        return base
    }

    /// Whether `config` requires CT (`Builder.getCertificateTransparencyVerificationRequired`).
    private static func requiresTransparency(_ config: Config, parent: () -> Bool) -> Bool {
        if let explicit = config.transparency { return explicit }
        if config.anchors?.contains(where: \.disablesTransparency) == true { return false }
        return parent()
    }

    private var baseRequiresTransparency: Bool { Self.requiresTransparency(base) { false } }

    private func requiresTransparency(_ index: Int) -> Bool {
        guard configs.indices.contains(index) else { return baseRequiresTransparency }
        return Self.requiresTransparency(configs[index]) {
            configs[index].parent.map(requiresTransparency) ?? baseRequiresTransparency
        }
    }

    /// Chrome's policy on every anchor's paths, or "off" where the file's would apply and must not.
    private static func transparency(_ required: Bool) -> RawTransparency {
        required ? RawTransparency(policy: CertificateTransparency.Policy.chrome.rawValue,
                                   scope: CertificateTransparency.Scope.everyAnchor.rawValue)
                 : RawTransparency(policy: RawTransparency.off)
    }

    /// The imported document.
    func configuration() -> RawConfiguration {
        let baseCT = baseRequiresTransparency
        var hosts: [RawHost] = []
        for index in closed {
            let config = configs[index]
            let pinning = owner(index) { $0.pins != nil }
            let pins = pinning.pins
            let expiration = pinning.expiration
            let sources = owner(index) { $0.anchors != nil }.anchors
            let anchors = sources.map(Self.anchors)
            let overrides = sources.flatMap(Self.overriding)
            let ct = requiresTransparency(index)
            for domain in config.domains {
                let subdomains = domain.includeSubdomains ? true : nil
                var host: RawHost
                if let pins, !pins.isEmpty {
                    host = RawHost(pattern: domain.name, includeSubdomains: subdomains, mode: "public-key", pins: pins,
                                   expires: expiration, anchors: anchors, pinOverrideAnchors: overrides)
                } else {
                    host = RawHost(pattern: domain.name, includeSubdomains: subdomains, mode: "none", anchors: anchors)
                }
                // Only where the host's answer differs from the file's (base-config's) answer.
                if ct != baseCT { host.certificateTransparency = Self.transparency(ct) }
                hosts.append(host)
            }
        }
        return RawConfiguration(allHostsMustBeEvaluated: false, anchors: base.anchors.map(Self.anchors), hosts: hosts,
                                certificateTransparency: baseCT ? Self.transparency(true) : nil)
    }
}

/// A property-list value, read with FoundationEssentials' `PropertyListDecoder` (no
/// `PropertyListSerialization`, which would link all of Foundation).
enum PlistValue: Decodable {
    case dictionary([String: PlistValue])
    case array([PlistValue])
    case string(String)
    case bool(Bool)
    case integer(Int)
    case real(Double)
    case date(Date)
    case data(Data)

    /// Deeper documents are refused before parsing (TrustKit configurations nest 4 levels).
    static let maximumDepth = 64
    /// A binary plist that expands to more values is refused before parsing (an app's whole
    /// Info.plist holds hundreds).
    static let maximumValues = 200_000

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var dictionary: [String: PlistValue] = [:]
            for key in keyed.allKeys { dictionary[key.stringValue] = try keyed.decode(PlistValue.self, forKey: key) }
            self = .dictionary(dictionary)
        } else if var unkeyed = try? decoder.unkeyedContainer() {
            var array: [PlistValue] = []
            while !unkeyed.isAtEnd { array.append(try unkeyed.decode(PlistValue.self)) }
            self = .array(array)
        } else {
            let single = try decoder.singleValueContainer()
            if let value = try? single.decode(Bool.self) { self = .bool(value) }
            else if let value = try? single.decode(Int.self) { self = .integer(value) }
            else if let value = try? single.decode(Double.self) { self = .real(value) }
            else if let value = try? single.decode(String.self) { self = .string(value) }
            else if let value = try? single.decode(Date.self) { self = .date(value) }
            else { self = .data(try single.decode(Data.self)) }
        }
    }

    var dictionary: [String: PlistValue]? { if case .dictionary(let value) = self { value } else { nil } }
    var string: String? { if case .string(let value) = self { value } else { nil } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// Why an XML property list is not one document with one value (nil: it is): a second
    /// `<plist>` element, or a `<plist>` holding more than one value. Apple's parser refuses both;
    /// the decoder here would read the first and drop the rest. The prolog (declaration, DOCTYPE)
    /// is skipped: the strict reader checks from the `<plist>` element on.
    static func xmlRootProblem(_ data: Data) -> String? {
        let bytes = [UInt8](data)
        let marker = Array("<plist".utf8)
        guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) else { return nil }
        var reader = XMLReader(Data(bytes[start...]))
        var depth = 0
        var values = 0
        var closed = false
        do {
            while let event = try reader.next() {
                switch event {
                case .start:
                    if depth == 1 { values += 1 }
                    depth += 1
                case .end:
                    depth -= 1
                    closed = depth == 0
                case .text:
                    break
                }
            }
        } catch {
            // Anything after </plist> but comments and white space: a second document (its
            // <?xml?> declaration and DOCTYPE fail before its <plist> does) or a second root.
            if closed { return "content after the </plist> element (a second document or root element?)" }
            if case .contentAfterRoot = error.problem { return "content after the </plist> element (a second root element?)" }
            return nil   // Anything else is the decoder's to refuse, with its own message.
        }
        return values > 1 ? "the <plist> element holds \(values) values; a property list holds exactly one" : nil
    }

    /// The value as Objective-C's `-boolValue` reads it, which is how TrustKit reads its flags:
    /// a number is true when not zero; a string (NSString's rule) when, after leading white space,
    /// an optional sign and leading zeros, it starts with Y, y, T, t or a digit 1–9 ("YES",
    /// "true", "1"). Nil for what has no `-boolValue` (data, dates, arrays, dictionaries): TrustKit
    /// would raise an exception on it.
    var objectiveCBoolValue: Bool? {
        switch self {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        case .real(let value): return value != 0
        case .string(let text):
            var rest = Substring(text).drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
            rest = rest.drop { $0 == "0" }
            guard let first = rest.first else { return false }
            return "YyTt123456789".contains(first)
        case .dictionary, .array, .date, .data: return nil
        }
    }
    /// An array of strings only; nil if any element is something else.
    var strings: [String]? {
        guard case .array(let values) = self else { return nil }
        var result: [String] = []
        for value in values {
            guard let text = value.string else { return nil }
            result.append(text)
        }
        return result
    }

    private static let nestingNames = [Array("dict".utf8), Array("array".utf8)]

    /// The deepest nesting of `<dict>` and `<array>` elements in plist XML, counted on the bytes
    /// (self-closing `<dict/>` and `<array/>` do not nest).
    static func nestingDepth(_ data: Data) -> Int {
        var depth = 0
        var deepest = 0
        let bytes = [UInt8](data)
        var index = 0
        func matches(_ word: [UInt8], at start: Int) -> Bool {
            start + word.count <= bytes.count && bytes[start..<(start + word.count)].elementsEqual(word)
        }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "<") {
                let closing = index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/")
                let nameStart = closing ? index + 2 : index + 1
                for name in nestingNames where matches(name, at: nameStart) {
                    let after = nameStart + name.count
                    let end = after < bytes.count ? bytes[after] : 0
                    let selfClosing = end == UInt8(ascii: "/")
                    guard end == UInt8(ascii: ">") || end == UInt8(ascii: " ") || selfClosing else { continue }
                    if closing { depth -= 1 } else if !selfClosing {
                        depth += 1
                        deepest = max(deepest, depth)
                    }
                }
            }
            index += 1
        }
        return deepest
    }
}
