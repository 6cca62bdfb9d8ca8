import FoundationEssentials
import TrustEvaluatorCore

/// Turns a configuration document into a trust manager, one section at a time: the file's
/// settings and anchors here, Certificate Transparency in `TransparencySection.swift`, each host
/// in `HostSection.swift`. Every error names the file and the key path of the first problem.
struct ConfigurationBuilder {
    let source: String
    let baseDirectory: String
    /// What stands in for the system store wherever the file says "system" (`--ca-file`); nil: the store itself.
    let anchorOverride: TrustAnchors?
    let publicSuffixes: PublicSuffixList?
    /// The logs every CT requirement knows: the caller's, else the file's lists (read once).
    var logs: CertificateTransparency.Logs?
    /// When given, CT requirements read their logs from it once per evaluation.
    let logStore: CertificateTransparency.LogStore?

    /// Whether a missing backup pin is a load error (`"backupPins": "error"`).
    var backupPinsRequired = false

    func fail(_ path: String, _ message: String) -> PincheckError {
        PincheckError(.invalidPolicy, "\(path): \(message)", source: source)
    }

    func resolve(_ file: String) -> String { FilePath.join(baseDirectory, file) }

    /// What "system" means: read only where the file says it (the store costs tens of
    /// milliseconds to load, and a file that names its own anchors never needs it).
    var system: TrustAnchors { anchorOverride ?? .system }

    func certificates(_ files: [String], at path: String) throws(PincheckError) -> [Certificate] {
        var result: [Certificate] = []
        for (index, file) in files.enumerated() {
            do { result += try Certificate.load(contentsOf: resolve(file)) } catch { throw fail("\(path)[\(index)]", error.description) }
        }
        return result
    }

    /// Anchors as the file writes them. Anchors the file names itself keep their meaning, and an
    /// explicitly empty list trusts nothing (Android's empty <trust-anchors>); in a list,
    /// "@system" stands for the system store (as Android lists src="system" beside its own CAs).
    func anchors(_ raw: RawAnchors, at key: String) throws(PincheckError) -> TrustAnchors {
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

    /// The whole configuration: the file's settings, then each host, then how patterns match.
    func configuration(_ raw: RawConfiguration) throws(PincheckError) -> Configuration {
        var builder = self
        guard raw.version == 1 else { throw fail("version", "unsupported version \(raw.version) (this Pincheck reads version 1)") }
        switch raw.backupPins ?? "warning" {
        case "warning": builder.backupPinsRequired = false
        case "error": builder.backupPinsRequired = true
        case let other: throw fail("backupPins", "\"\(other)\" is not \"warning\" or \"error\"")
        }
        let fileAnchors = try anchors(raw.anchors ?? .system, at: "anchors")
        if logStore == nil, logs == nil, let files = raw.certificateTransparencyLogLists {
            builder.logs = try logLists(files)
        }
        let defaultTransparency = try builder.transparency(raw.certificateTransparency, at: "certificateTransparency")

        var entries: [Configuration.HostEntry] = []
        entries.reserveCapacity(raw.hosts.count)
        var seen: [HostPattern: String] = [:]
        for (index, host) in raw.hosts.enumerated() {
            let path = "hosts[\(index)]"
            let pattern = try pattern(host, at: path)
            if let other = seen.updateValue(path, forKey: pattern) {
                throw fail("\(path).pattern", "\"\(host.pattern)\" is already configured at \(other)")
            }
            entries.append(
                try builder.hostEntry(
                    host, pattern: pattern, at: path, fileAnchors: fileAnchors,
                    defaultTransparency: defaultTransparency))
        }
        var defaultValidation = ValidationPolicy(anchors: fileAnchors)
        defaultValidation.certificateTransparency = defaultTransparency
        var manager = TrustManager(
            policies: entries.map(\.policy), allHostsMustBeEvaluated: raw.allHostsMustBeEvaluated ?? true,
            defaultValidation: defaultValidation)
        manager.patternMatching = try patternMatching(raw.patternMatching, entries: entries)
        return Configuration(trustManager: manager, hosts: entries, backupPinsRequired: builder.backupPinsRequired)
    }

    /// "most-specific" (TrustKit, Android, Alamofire) or "all-matching" (OkHttp's union of pins,
    /// which is one set of public keys: every host entry must be that shape).
    private func patternMatching(_ text: String?, entries: [Configuration.HostEntry]) throws(PincheckError) -> TrustManager.PatternMatching {
        switch text ?? "most-specific" {
        case "most-specific": return .mostSpecific
        case "all-matching":
            for entry in entries where !entry.policy.pinSets.allSatisfy({ $0.isUnionable }) || entry.policy.pinSets.count > 1 {
                throw fail(
                    "\(entry.path)",
                    "\"patternMatching\": \"all-matching\" takes enforced public-key pins without expiry only (OkHttp's CertificatePinner)")
            }
            return .allMatching
        case let other: throw fail("patternMatching", "\"\(other)\" is not \"most-specific\" or \"all-matching\"")
        }
    }
}
