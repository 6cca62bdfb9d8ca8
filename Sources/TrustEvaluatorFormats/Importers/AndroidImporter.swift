import FoundationEssentials
import TrustEvaluatorCore

/// Android's `network_security_config.xml`.
extension ConfigurationImporter {
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
                throw Failure(
                    message:
                        "line \(line): no <domain> elements in <domain-config> (Android refuses the file: \"No domain elements in domain-config\")")
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
        required
            ? RawTransparency(
                policy: CertificateTransparency.Policy.chrome.rawValue,
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
                    host = RawHost(
                        pattern: domain.name, includeSubdomains: subdomains, mode: "public-key", pins: pins,
                        expires: expiration, anchors: anchors, pinOverrideAnchors: overrides)
                } else {
                    host = RawHost(pattern: domain.name, includeSubdomains: subdomains, mode: "none", anchors: anchors)
                }
                // Only where the host's answer differs from the file's (base-config's) answer.
                if ct != baseCT { host.certificateTransparency = Self.transparency(ct) }
                hosts.append(host)
            }
        }
        return RawConfiguration(
            allHostsMustBeEvaluated: false, anchors: base.anchors.map(Self.anchors), hosts: hosts,
            certificateTransparency: baseCT ? Self.transparency(true) : nil)
    }
}
