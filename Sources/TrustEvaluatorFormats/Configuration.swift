import FoundationEssentials
import TrustEvaluatorCore

/// Pincheck's JSON configuration file, decoded into a `TrustManager`.
///
/// ```json
/// { "version": 1, "allHostsMustBeEvaluated": true, "anchors": "system", "backupPins": "warning",
///   "hosts": [ { "pattern": "api.example.com", "includeSubdomains": false, "mode": "public-key",
///                "pins": ["sha256/…", "sha256/…"], "pinnedCertificates": ["certs/api.pem"],
///                "enforce": true, "expires": "2027-06-30", "validatesDomainName": true,
///                "allowInvalidCertificates": false, "reportURIs": ["https://reports.example.com/pins"],
///                "certificateTransparency": { "policy": "chrome", "enforcement": "enforce" } } ],
///   "certificateTransparencyLogLists": ["ct/log_list.json"] }
/// ```
/// Unknown keys are errors naming their path; relative file paths resolve against the file's folder.
///
/// `certificateTransparency` (`policy`: `chrome`, `apple` or `off`; `enforcement`: `enforce` or
/// `report-only`; `scope`: `public-anchors` or `every-anchor`; `whenUnenforceable`: `fail` or
/// `allow`) sets a host's Certificate Transparency requirement; at the top level it is the
/// requirement of every host that sets none and of hosts no entry names. Its logs are those of
/// the lists the caller gives at load, or else of `certificateTransparencyLogLists`; a requirement
/// with neither is a load error.
public struct Configuration: Sendable {
    /// The decoded trust manager.
    public let trustManager: TrustManager
    /// The hosts as written, for `pincheck lint`.
    public let hosts: [HostEntry]
    /// Whether a missing backup pin is a load error (`"backupPins": "error"`) or a warning.
    public let backupPinsRequired: Bool

    /// One host entry as configured.
    public struct HostEntry: Sendable {
        public let path: String
        public let policy: HostPolicy
        public let enforce: Bool
        public let expires: Date?
    }

    /// Reads and decodes a configuration file.
    /// - Parameters:
    ///   - path: The file.
    ///   - anchors: What the file's "system" means (`--ca-file` on the command line); nil: the system store.
    ///   - androidRawFolder: Where an Android file's `@raw/NAME` resources are; by default the
    ///     app's `res/raw/`, beside the `res/xml/` the file is in.
    ///   - publicSuffixes: For refusing subdomain patterns on public suffixes; Debian's list by default.
    ///   - format: The file's format; nil: detected from its bytes, and an empty (blank or
    ///     comment-only) file refused, since a truncated file must never read as "nothing pinned".
    /// - Throws: `PincheckError` naming the file and the key path of the first problem.
    public static func load(contentsOf path: String, anchors: TrustAnchors? = nil, androidRawFolder: String? = nil,
                            format: ConfigurationFormat? = nil,
                            publicSuffixes: PublicSuffixList? = PublicSuffixList.system) throws(PincheckError) -> Configuration {
        try load(contentsOf: path, anchors: anchors, androidRawFolder: androidRawFolder, format: format,
                 publicSuffixes: publicSuffixes, certificateTransparencyLogs: nil)
    }

    /// Reads and decodes a configuration file whose Certificate Transparency requirements take
    /// their logs from the lists given here (the file's `certificateTransparencyLogLists` are then
    /// not read).
    /// - Parameters:
    ///   - path: The file.
    ///   - anchors: What the file's "system" means; nil: the system store.
    ///   - androidRawFolder: Where an Android file's `@raw/NAME` resources are.
    ///   - format: The file's format; nil: detected.
    ///   - publicSuffixes: For refusing subdomain patterns on public suffixes.
    ///   - certificateTransparencyLogs: The logs every CT requirement knows; nil: the file's lists.
    /// - Throws: `PincheckError` naming the file and the key path of the first problem.
    public static func load(contentsOf path: String, anchors: TrustAnchors? = nil, androidRawFolder: String? = nil,
                            format: ConfigurationFormat? = nil, publicSuffixes: PublicSuffixList? = PublicSuffixList.system,
                            certificateTransparencyLogs: CertificateTransparency.Logs?) throws(PincheckError) -> Configuration {
        let data = Data(try InputFile.read(path, limit: InputFile.configurationLimit, what: "configuration file"))
        let directory = FilePath.directory(of: path)
        return try decode(data, source: path, baseDirectory: directory.isEmpty ? "." : directory,
                          anchors: anchors, androidRawFolder: androidRawFolder, format: format, publicSuffixes: publicSuffixes,
                          certificateTransparencyLogs: certificateTransparencyLogs)
    }

    /// Decodes a configuration in any supported format (Pincheck JSON unless detected or named otherwise).
    public static func decode(_ data: Data, source: String = "<configuration>", baseDirectory: String,
                              anchors anchorOverride: TrustAnchors? = nil, androidRawFolder: String? = nil,
                              format: ConfigurationFormat? = nil,
                              publicSuffixes: PublicSuffixList? = PublicSuffixList.system) throws(PincheckError) -> Configuration {
        try decode(data, source: source, baseDirectory: baseDirectory, anchors: anchorOverride, androidRawFolder: androidRawFolder,
                   format: format, publicSuffixes: publicSuffixes, certificateTransparencyLogs: nil)
    }

    /// Decodes a configuration whose Certificate Transparency requirements take their logs from
    /// `certificateTransparencyLogs` (nil: from the file's `certificateTransparencyLogLists`).
    public static func decode(_ data: Data, source: String = "<configuration>", baseDirectory: String,
                              anchors anchorOverride: TrustAnchors? = nil, androidRawFolder: String? = nil,
                              format: ConfigurationFormat? = nil, publicSuffixes: PublicSuffixList? = PublicSuffixList.system,
                              certificateTransparencyLogs: CertificateTransparency.Logs?) throws(PincheckError) -> Configuration {
        try decode(data, source: source, baseDirectory: baseDirectory, anchors: anchorOverride, androidRawFolder: androidRawFolder,
                   format: format, publicSuffixes: publicSuffixes, logs: certificateTransparencyLogs, logStore: nil)
    }

    /// Reads and decodes a configuration file whose Certificate Transparency requirements read
    /// their logs from `certificateTransparencyLogStore` once per evaluation, so an update of the
    /// store reaches every host at once while the process runs (the file's
    /// `certificateTransparencyLogLists` are not read).
    /// - Parameters:
    ///   - path: The file.
    ///   - anchors: What the file's "system" means; nil: the system store.
    ///   - androidRawFolder: Where an Android file's `@raw/NAME` resources are.
    ///   - format: The file's format; nil: detected.
    ///   - publicSuffixes: For refusing subdomain patterns on public suffixes.
    ///   - certificateTransparencyLogStore: The lists every CT requirement reads.
    /// - Throws: `PincheckError` naming the file and the key path of the first problem.
    public static func load(contentsOf path: String, anchors: TrustAnchors? = nil, androidRawFolder: String? = nil,
                            format: ConfigurationFormat? = nil, publicSuffixes: PublicSuffixList? = PublicSuffixList.system,
                            certificateTransparencyLogStore: CertificateTransparency.LogStore) throws(PincheckError) -> Configuration {
        let data = Data(try InputFile.read(path, limit: InputFile.configurationLimit, what: "configuration file"))
        let directory = FilePath.directory(of: path)
        return try decode(data, source: path, baseDirectory: directory.isEmpty ? "." : directory,
                          anchors: anchors, androidRawFolder: androidRawFolder, format: format, publicSuffixes: publicSuffixes,
                          logs: nil, logStore: certificateTransparencyLogStore)
    }

    /// Decodes a configuration whose Certificate Transparency requirements read their logs from
    /// `certificateTransparencyLogStore` once per evaluation.
    public static func decode(_ data: Data, source: String = "<configuration>", baseDirectory: String,
                              anchors anchorOverride: TrustAnchors? = nil, androidRawFolder: String? = nil,
                              format: ConfigurationFormat? = nil, publicSuffixes: PublicSuffixList? = PublicSuffixList.system,
                              certificateTransparencyLogStore: CertificateTransparency.LogStore) throws(PincheckError) -> Configuration {
        try decode(data, source: source, baseDirectory: baseDirectory, anchors: anchorOverride, androidRawFolder: androidRawFolder,
                   format: format, publicSuffixes: publicSuffixes, logs: nil, logStore: certificateTransparencyLogStore)
    }

    /// The decoder: CT requirements read `logStore` when there is one, else `logs`, else the file's lists.
    private static func decode(_ data: Data, source: String, baseDirectory: String, anchors anchorOverride: TrustAnchors?,
                               androidRawFolder: String?, format: ConfigurationFormat?, publicSuffixes: PublicSuffixList?,
                               logs certificateTransparencyLogs: CertificateTransparency.Logs?,
                               logStore: CertificateTransparency.LogStore?) throws(PincheckError) -> Configuration {
        let raw: RawConfiguration
        do {
            if let imported = try ConfigurationImporter.importIfForeign(data, format: format, source: source, androidRawFolder: androidRawFolder) {
                raw = imported
            } else {
                // A repeated key is refused before decoding: the decoder would silently keep one of them.
                if let problem = JSONSyntax.firstProblem(in: Array(data)) {
                    throw PincheckError(.invalidPolicy, "not valid JSON: line \(problem.line), column \(problem.column): \(problem.message)", source: source)
                }
                raw = try JSONDecoder().decode(RawConfiguration.self, from: data)
            }
        } catch let error as PincheckError {
            throw error
        } catch let error as DecodingError {
            // Foundation says only "not valid JSON": say where.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               let problem = JSONSyntax.firstProblem(in: Array(data)) {
                throw PincheckError(.invalidPolicy, "not valid JSON: line \(problem.line), column \(problem.column): \(problem.message)", source: source)
            }
            throw PincheckError(.invalidPolicy, ConfigurationError.describe(error), source: source)
        } catch {
            throw PincheckError(.invalidPolicy, "not valid JSON: \(error)", source: source)
        }
        func fail(_ path: String, _ message: String) -> PincheckError {
            PincheckError(.invalidPolicy, "\(path): \(message)", source: source)
        }
        func resolve(_ file: String) -> String {
            FilePath.join(baseDirectory, file)
        }
        func certificates(_ files: [String], at path: String) throws(PincheckError) -> [Certificate] {
            var result: [Certificate] = []
            for (index, file) in files.enumerated() {
                do {
                    result += try Certificate.load(contentsOf: resolve(file))
                } catch {
                    throw fail("\(path)[\(index)]", error.description)
                }
            }
            return result
        }

        guard raw.version == 1 else { throw fail("version", "unsupported version \(raw.version) (this Pincheck reads version 1)") }
        let backupPinsRequired: Bool
        switch raw.backupPins ?? "warning" {
        case "warning": backupPinsRequired = false
        case "error": backupPinsRequired = true
        case let other: throw fail("backupPins", "\"\(other)\" is not \"warning\" or \"error\"")
        }
        // What "system" means wherever the file says it: the system store, or what stands in for it
        // (`--ca-file`). Anchors the file names itself keep their meaning, and an explicitly empty
        // list trusts nothing (Android's empty <trust-anchors>); in a list, "@system" stands for the
        // system store (as Android lists src="system" beside its own CAs).
        let system = anchorOverride ?? .system
        func resolveAnchors(_ raw: RawAnchors, at key: String) throws(PincheckError) -> TrustAnchors {
            switch raw {
            case .system: return system
            case .files(let files) where files.isEmpty: return .nothing
            case .files(let files) where files == [RawAnchors.systemToken]: return system
            case .files(let files):
                let own = try certificates(files.filter { $0 != RawAnchors.systemToken }, at: key)
                do {
                    guard files.contains(RawAnchors.systemToken) else { return try TrustAnchors(certificates: own) }
                    if case .system = system.origin { return try TrustAnchors(systemAnd: own) }
                    return try TrustAnchors(certificates: system.certificates + own)
                } catch { throw fail(key, error.message) }
            }
        }
        let anchors = try resolveAnchors(raw.anchors ?? .system, at: "anchors")

        // Certificate Transparency: the logs are the caller's (a store, or fixed lists), else the
        // file's lists, read once.
        var logs = certificateTransparencyLogs
        if logStore == nil, logs == nil, let files = raw.certificateTransparencyLogLists {
            var lists: [CertificateTransparency.LogList] = []
            for (index, file) in files.enumerated() {
                do { lists.append(try CertificateTransparency.LogList(contentsOf: resolve(file))) } catch {
                    throw fail("certificateTransparencyLogLists[\(index)]", error.description)
                }
            }
            logs = CertificateTransparency.Logs(lists)
        }
        func transparency(_ raw: RawTransparency?, at key: String) throws(PincheckError) -> CertificateTransparency.Requirement? {
            guard let raw else { return nil }
            func value<Value: RawRepresentable<String> & CaseIterable>(_ text: String?, _ field: String, default fallback: Value) throws(PincheckError) -> Value {
                guard let text else { return fallback }
                guard let value = Value(rawValue: text) else {
                    throw fail("\(key).\(field)", "\"\(text)\" is not \(Value.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
                }
                return value
            }
            if raw.policy == RawTransparency.off {
                guard raw.enforcement == nil, raw.scope == nil, raw.whenUnenforceable == nil else {
                    throw fail(key, "policy \"off\" takes no enforcement, scope or whenUnenforceable")
                }
                return nil
            }
            guard let policy = CertificateTransparency.Policy(rawValue: raw.policy) else {
                throw fail("\(key).policy", "\"\(raw.policy)\" is not \"chrome\", \"apple\" or \"off\"")
            }
            let enforcement: CertificateTransparency.Enforcement = try value(raw.enforcement, "enforcement", default: .enforce)
            var requirement: CertificateTransparency.Requirement
            if let logStore {
                requirement = CertificateTransparency.Requirement(policy: policy, logStore: logStore, enforcement: enforcement)
            } else if let logs {
                requirement = CertificateTransparency.Requirement(policy: policy, logs: logs, enforcement: enforcement)
            } else {
                throw fail(key, "a Certificate Transparency policy needs log lists: certificateTransparencyLogLists in the file, or lists given at load (--ct-log-list)")
            }
            requirement.scope = try value(raw.scope, "scope", default: .publiclyTrustedAnchors)
            requirement.whenUnenforceable = try value(raw.whenUnenforceable, "whenUnenforceable", default: .fail)
            return requirement
        }
        let defaultTransparency = try transparency(raw.certificateTransparency, at: "certificateTransparency")

        var entries: [HostEntry] = []
        var seen: [HostPattern: String] = [:]
        for (index, host) in raw.hosts.enumerated() {
            let path = "hosts[\(index)]"
            let pattern: HostPattern
            do {
                pattern = try HostPattern(host.pattern, includeSubdomains: host.includeSubdomains ?? false, publicSuffixes: publicSuffixes)
            } catch { throw fail("\(path).pattern", error.message) }
            if let other = seen[pattern] { throw fail("\(path).pattern", "\"\(host.pattern)\" is already configured at \(other)") }
            seen[pattern] = path
            var revocationLists: [CertificateRevocationList] = []
            for (crlIndex, file) in (host.revocation?.crls ?? []).enumerated() {
                do { revocationLists += try CertificateRevocationList.load(contentsOf: resolve(file)) } catch {
                    throw fail("\(path).revocation.crls[\(crlIndex)]", error.description)
                }
            }
            let revocationScope: TrustPolicy.RevocationScope
            switch host.revocation?.crlScope ?? "leaf" {
            case "leaf": revocationScope = .leaf
            case "chain": revocationScope = .wholeChain
            case let other: throw fail("\(path).revocation.crlScope", "\"\(other)\" is not \"leaf\" or \"chain\"")
            }

            var pinnedCertificates: [Certificate] = []
            if let files = host.pinnedCertificates {
                pinnedCertificates = try certificates(files, at: "\(path).pinnedCertificates")
            }
            var pins: [PublicKeyPin] = []
            for (pinIndex, text) in (host.pins ?? []).enumerated() {
                do { pins.append(try PublicKeyPin(text)) } catch { throw fail("\(path).pins[\(pinIndex)]", error.message) }
            }
            // Positional pins (Apple's NSPinnedDomains): one enforced set per list, all of which must
            // match; an empty list is a set no chain matches, which blocks the host.
            var positional: [PinnedPublicKeys] = []
            for (list, scope, key) in [(host.leafPins, PinnedPublicKeys.Scope.leaf, "leafPins"), (host.caPins, .certificateAuthorities, "caPins")] {
                guard let list else { continue }
                guard host.mode == nil || host.mode == "public-key", host.pinnedCertificates == nil else {
                    throw fail("\(path).\(key)", "leafPins and caPins are public-key pins: not with mode \"\(host.mode ?? "")\" or pinnedCertificates")
                }
                var scoped: [PublicKeyPin] = []
                for (pinIndex, text) in list.enumerated() {
                    do { scoped.append(try PublicKeyPin(text)) } catch { throw fail("\(path).\(key)[\(pinIndex)]", error.message) }
                }
                positional.append(scoped.isEmpty ? PinnedPublicKeys(blockingEverythingIn: scope) : try PinnedPublicKeys(pins: scoped, scope: scope))
            }
            let pinning: TrustPolicy.Pinning
            switch host.mode ?? "public-key" {
            case "public-key" where !positional.isEmpty && host.pins == nil:
                pinning = .none
            case "none":
                guard host.pins == nil, host.pinnedCertificates == nil else {
                    throw fail("\(path).mode", "mode \"none\" takes no pins or pinnedCertificates")
                }
                pinning = .none
            case "certificate":
                guard host.pins == nil else { throw fail("\(path).pins", "certificate mode pins whole certificates: use pinnedCertificates") }
                do { pinning = .certificates(try PinnedCertificates(pinnedCertificates)) } catch {
                    throw fail("\(path).pinnedCertificates", "certificate mode needs at least one pinned certificate (an empty pin list fails closed)")
                }
            case "public-key":
                do { pinning = .publicKeys(try PinnedPublicKeys(pins: pins, certificates: pinnedCertificates)) } catch {
                    throw fail("\(path).pins", "public-key mode needs at least one pin (an empty pin list fails closed)")
                }
            case let other:
                throw fail("\(path).mode", "\"\(other)\" is not none, certificate or public-key")
            }

            var expires: Date? = nil
            if let text = host.expires {
                guard let date = PinSet.expiryDate(text) else { throw fail("\(path).expires", "\"\(text)\" is not a yyyy-MM-dd date") }
                expires = date
            }
            let enforce = host.enforce ?? true
            var pinSets: [PinSet] = []
            if case .none = pinning {} else {
                pinSets.append(try PinSet(pinning, enforcement: enforce ? .enforce : .reportOnly, expires: expires))
                if backupPinsRequired && enforce && pinSets[0].pinCount < 2 {
                    throw fail("\(path).pins", "an enforced pin set needs a backup pin (at least two pins, one not in the current chain; RFC 7469 §2.5)")
                }
            }
            for scoped in positional {
                pinSets.append(try PinSet(.publicKeys(scoped), enforcement: enforce ? .enforce : .reportOnly, expires: expires))
            }
            var reportURIs: [URL] = []
            for (uriIndex, text) in (host.reportURIs ?? []).enumerated() {
                guard let url = URL(string: text), url.scheme == "https", url.host != nil else {
                    throw fail("\(path).reportURIs[\(uriIndex)]", "\"\(text)\" is not an https:// URL")
                }
                reportURIs.append(url)
            }
            // A host's own anchors, read as the file's (nil: the file's).
            func hostAnchors(_ raw: RawAnchors, at key: String) throws(PincheckError) -> TrustAnchors {
                try resolveAnchors(raw, at: "\(path).\(key)")
            }
            let ownAnchors = try host.anchors.map { raw throws(PincheckError) in try hostAnchors(raw, at: "anchors") } ?? anchors
            var validation = ValidationPolicy(
                anchors: ownAnchors,
                chainValidation: host.allowInvalidCertificates == true ? .disabled(because: "allowInvalidCertificates in \(path)") : .required,
                nameValidation: host.validatesDomainName == false ? .disabled(because: "validatesDomainName false in \(path)") : .required)
            validation.revocationLists = revocationLists
            validation.revocationScope = revocationScope
            validation.certificateTransparency = host.certificateTransparency == nil
                ? defaultTransparency : try transparency(host.certificateTransparency, at: "\(path).certificateTransparency")
            var revocation = RevocationPolicy(requireStapledOCSP: host.revocation?.requireStapledOCSP ?? false)
            switch host.revocation?.distributionPoints ?? "off" {
            case "off": break
            case "soft": revocation.distributionPointCRLs = DistributionPointCRLs(scope: revocationScope, failure: .soft)
            case "hard": revocation.distributionPointCRLs = DistributionPointCRLs(scope: revocationScope, failure: .hard)
            case let other: throw fail("\(path).revocation.distributionPoints", "\"\(other)\" is not \"off\", \"soft\" or \"hard\"")
            }
            var policy = HostPolicy(pattern: pattern, pinSets: pinSets, validation: validation, reportURIs: reportURIs, revocation: revocation)
            policy.pinOverrideAnchors = try host.pinOverrideAnchors.map { raw throws(PincheckError) in try hostAnchors(raw, at: "pinOverrideAnchors") }
            entries.append(HostEntry(path: path, policy: policy, enforce: enforce, expires: expires))
        }
        let patternMatching: TrustManager.PatternMatching
        switch raw.patternMatching ?? "most-specific" {
        case "most-specific": patternMatching = .mostSpecific
        case "all-matching":
            patternMatching = .allMatching
            // OkHttp's union of pins is one set of public keys: every host entry must be that shape.
            for entry in entries where !entry.policy.pinSets.allSatisfy({ $0.isUnionable }) || entry.policy.pinSets.count > 1 {
                throw fail("\(entry.path)", "\"patternMatching\": \"all-matching\" takes enforced public-key pins without expiry only (OkHttp's CertificatePinner)")
            }
        case let other: throw fail("patternMatching", "\"\(other)\" is not \"most-specific\" or \"all-matching\"")
        }
        var defaultValidation = ValidationPolicy(anchors: anchors)
        defaultValidation.certificateTransparency = defaultTransparency
        var manager = TrustManager(policies: entries.map(\.policy), allHostsMustBeEvaluated: raw.allHostsMustBeEvaluated ?? true,
                                   defaultValidation: defaultValidation)
        manager.patternMatching = patternMatching
        return Configuration(trustManager: manager, hosts: entries, backupPinsRequired: backupPinsRequired)
    }
}

// MARK: The file format

struct RawConfiguration: Codable {
    let version: Int
    let allHostsMustBeEvaluated: Bool?
    let anchors: RawAnchors?
    let backupPins: String?
    /// "most-specific" (the default: TrustKit, Android, Alamofire) or "all-matching" (OkHttp).
    let patternMatching: String?
    let hosts: [RawHost]
    /// The CT requirement of hosts that set none, and of hosts no entry names.
    let certificateTransparency: RawTransparency?
    /// Log lists (Google v3, Apple v5) for the CT requirements, when the caller gives none.
    let certificateTransparencyLogLists: [String]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case version, allHostsMustBeEvaluated, anchors, backupPins, patternMatching, hosts
        case certificateTransparency, certificateTransparencyLogLists
    }

    init(allHostsMustBeEvaluated: Bool?, patternMatching: String? = nil, anchors: RawAnchors? = nil, hosts: [RawHost],
         certificateTransparency: RawTransparency? = nil) {
        version = 1
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.anchors = anchors
        backupPins = nil
        self.patternMatching = patternMatching
        self.hosts = hosts
        self.certificateTransparency = certificateTransparency
        certificateTransparencyLogLists = nil
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        allHostsMustBeEvaluated = try container.decodeIfPresent(Bool.self, forKey: .allHostsMustBeEvaluated)
        anchors = try container.decodeIfPresent(RawAnchors.self, forKey: .anchors)
        backupPins = try container.decodeIfPresent(String.self, forKey: .backupPins)
        patternMatching = try container.decodeIfPresent(String.self, forKey: .patternMatching)
        hosts = try container.decode([RawHost].self, forKey: .hosts)
        certificateTransparency = try container.decodeIfPresent(RawTransparency.self, forKey: .certificateTransparency)
        certificateTransparencyLogLists = try container.decodeIfPresent([String].self, forKey: .certificateTransparencyLogLists)
    }
}

enum RawAnchors: Codable {
    case system
    case files([String])

    /// In a host's list of anchor files, the system store (which `--ca-file` replaces).
    static let systemToken = "@system"

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let files = try? container.decode([String].self) {
            self = .files(files)
        } else if try container.decode(String.self) == "system" {
            self = .system
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected \"system\" or a list of PEM files")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .system: try container.encode("system")
        case .files(let files): try container.encode(files)
        }
    }
}

struct RawHost: Codable {
    let pattern: String
    let includeSubdomains: Bool?
    let mode: String?
    let pins: [String]?
    let pinnedCertificates: [String]?
    let enforce: Bool?
    let expires: String?
    let validatesDomainName: Bool?
    let allowInvalidCertificates: Bool?
    let reportURIs: [String]?
    let revocation: RawRevocation?
    /// Pins the leaf alone must match (Apple's NSPinnedLeafIdentities); empty blocks the host.
    let leafPins: [String]?
    /// Pins a certificate above the leaf must match (Apple's NSPinnedCAIdentities); empty blocks the host.
    let caPins: [String]?
    /// This host's own anchors ("system", or PEM files; an empty list trusts nothing). Absent: the file's.
    let anchors: RawAnchors?
    /// Anchors whose chains skip the pins (Android's overridePins="true").
    let pinOverrideAnchors: RawAnchors?
    /// This host's CT requirement; absent: the file's.
    var certificateTransparency: RawTransparency?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case pattern, includeSubdomains, mode, pins, pinnedCertificates, enforce, expires
        case validatesDomainName, allowInvalidCertificates, reportURIs, revocation, leafPins, caPins, anchors, pinOverrideAnchors
        case certificateTransparency
    }

    init(pattern: String, includeSubdomains: Bool? = nil, mode: String? = nil, pins: [String]? = nil,
         enforce: Bool? = nil, expires: String? = nil, reportURIs: [String]? = nil,
         leafPins: [String]? = nil, caPins: [String]? = nil, anchors: RawAnchors? = nil, pinOverrideAnchors: RawAnchors? = nil) {
        self.leafPins = leafPins
        self.caPins = caPins
        self.anchors = anchors
        self.pinOverrideAnchors = pinOverrideAnchors
        self.pattern = pattern
        self.includeSubdomains = includeSubdomains
        self.mode = mode
        self.pins = pins
        self.pinnedCertificates = nil
        self.enforce = enforce
        self.expires = expires
        self.validatesDomainName = nil
        self.allowInvalidCertificates = nil
        self.reportURIs = reportURIs
        self.revocation = nil
        certificateTransparency = nil
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pattern = try c.decode(String.self, forKey: .pattern)
        includeSubdomains = try c.decodeIfPresent(Bool.self, forKey: .includeSubdomains)
        mode = try c.decodeIfPresent(String.self, forKey: .mode)
        pins = try c.decodeIfPresent([String].self, forKey: .pins)
        pinnedCertificates = try c.decodeIfPresent([String].self, forKey: .pinnedCertificates)
        enforce = try c.decodeIfPresent(Bool.self, forKey: .enforce)
        expires = try c.decodeIfPresent(String.self, forKey: .expires)
        validatesDomainName = try c.decodeIfPresent(Bool.self, forKey: .validatesDomainName)
        allowInvalidCertificates = try c.decodeIfPresent(Bool.self, forKey: .allowInvalidCertificates)
        reportURIs = try c.decodeIfPresent([String].self, forKey: .reportURIs)
        revocation = try c.decodeIfPresent(RawRevocation.self, forKey: .revocation)
        leafPins = try c.decodeIfPresent([String].self, forKey: .leafPins)
        caPins = try c.decodeIfPresent([String].self, forKey: .caPins)
        anchors = try c.decodeIfPresent(RawAnchors.self, forKey: .anchors)
        pinOverrideAnchors = try c.decodeIfPresent(RawAnchors.self, forKey: .pinOverrideAnchors)
        certificateTransparency = try c.decodeIfPresent(RawTransparency.self, forKey: .certificateTransparency)
    }
}

/// `"certificateTransparency": { "policy": "chrome", "enforcement": "enforce" }`.
struct RawTransparency: Codable, Equatable {
    /// "chrome", "apple", or "off" (none, where the file's would apply).
    let policy: String
    let enforcement: String?
    let scope: String?
    let whenUnenforceable: String?

    static let off = "off"

    enum CodingKeys: String, CodingKey, CaseIterable { case policy, enforcement, scope, whenUnenforceable }

    init(policy: String, enforcement: String? = nil, scope: String? = nil, whenUnenforceable: String? = nil) {
        self.policy = policy
        self.enforcement = enforcement
        self.scope = scope
        self.whenUnenforceable = whenUnenforceable
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        policy = try c.decode(String.self, forKey: .policy)
        enforcement = try c.decodeIfPresent(String.self, forKey: .enforcement)
        scope = try c.decodeIfPresent(String.self, forKey: .scope)
        whenUnenforceable = try c.decodeIfPresent(String.self, forKey: .whenUnenforceable)
    }
}

struct RawRevocation: Codable {
    let crls: [String]?
    let crlScope: String?
    let requireStapledOCSP: Bool?
    /// The CRLs at the certificates' distribution points: "off" (default), "soft" or "hard".
    let distributionPoints: String?

    enum CodingKeys: String, CodingKey, CaseIterable { case crls, crlScope, requireStapledOCSP, distributionPoints }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        crls = try c.decodeIfPresent([String].self, forKey: .crls)
        crlScope = try c.decodeIfPresent(String.self, forKey: .crlScope)
        requireStapledOCSP = try c.decodeIfPresent(Bool.self, forKey: .requireStapledOCSP)
        distributionPoints = try c.decodeIfPresent(String.self, forKey: .distributionPoints)
    }
}

private struct AnyKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue; intValue = nil }
    init(intValue: Int) { stringValue = "\(intValue)"; self.intValue = intValue }
}

extension Decoder {
    /// Strict decoding: a key the format does not define is an error at its path.
    fileprivate func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        let container = try self.container(keyedBy: AnyKey.self)
        // Each key asked of the type itself: no set of names built per object (a configuration
        // of 20,000 hosts decodes 20,000 of them).
        for key in container.allKeys where Keys(stringValue: key.stringValue) == nil {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: "unknown key"))
        }
    }
}

enum ConfigurationError {
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue { text += "[\(index)]" } else { text += text.isEmpty ? key.stringValue : ".\(key.stringValue)" }
        }
        return text.isEmpty ? "(top level)" : text
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context):
            if context.debugDescription == "unknown key" { return "\(path(context.codingPath)): unknown key" }
            if context.codingPath.isEmpty { return "not valid JSON (\(context.underlyingError.map { "\($0)" } ?? context.debugDescription))" }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): required key missing"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(type), found null"
        @unknown default:
            return "\(error)"
        }
    }
}
