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
    public static func load(
        contentsOf path: String, anchors: TrustAnchors? = nil, androidRawFolder: String? = nil,
        format: ConfigurationFormat? = nil,
        publicSuffixes: PublicSuffixList? = PublicSuffixList.system
    ) throws(PincheckError) -> Configuration {
        try load(
            contentsOf: path, anchors: anchors, androidRawFolder: androidRawFolder, format: format,
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
    public static func load(
        contentsOf path: String, anchors: TrustAnchors? = nil, androidRawFolder: String? = nil,
        format: ConfigurationFormat? = nil, publicSuffixes: PublicSuffixList? = PublicSuffixList.system,
        certificateTransparencyLogs: CertificateTransparency.Logs?
    ) throws(PincheckError) -> Configuration {
        let (data, directory) = try read(path)
        return try decode(
            data, source: path, baseDirectory: directory, anchors: anchors, androidRawFolder: androidRawFolder, format: format,
            publicSuffixes: publicSuffixes, certificateTransparencyLogs: certificateTransparencyLogs)
    }

    /// A configuration file's bytes and the folder its relative paths are read from.
    private static func read(_ path: String) throws(PincheckError) -> (Data, String) {
        let data = Data(try InputFile.read(path, limit: InputFile.configurationLimit, what: "configuration file"))
        let directory = FilePath.directory(of: path)
        return (data, directory.isEmpty ? "." : directory)
    }

    /// Decodes a configuration in any supported format (Pincheck JSON unless detected or named otherwise).
    public static func decode(
        _ data: Data, source: String = "<configuration>", baseDirectory: String,
        anchors anchorOverride: TrustAnchors? = nil, androidRawFolder: String? = nil,
        format: ConfigurationFormat? = nil,
        publicSuffixes: PublicSuffixList? = PublicSuffixList.system
    ) throws(PincheckError) -> Configuration {
        try decode(
            data, source: source, baseDirectory: baseDirectory, anchors: anchorOverride, androidRawFolder: androidRawFolder,
            format: format, publicSuffixes: publicSuffixes, certificateTransparencyLogs: nil)
    }

    /// Decodes a configuration whose Certificate Transparency requirements take their logs from
    /// `certificateTransparencyLogs` (nil: from the file's `certificateTransparencyLogLists`).
    public static func decode(
        _ data: Data, source: String = "<configuration>", baseDirectory: String,
        anchors anchorOverride: TrustAnchors? = nil, androidRawFolder: String? = nil,
        format: ConfigurationFormat? = nil, publicSuffixes: PublicSuffixList? = PublicSuffixList.system,
        certificateTransparencyLogs: CertificateTransparency.Logs?
    ) throws(PincheckError) -> Configuration {
        try decode(
            data, source: source, baseDirectory: baseDirectory, anchors: anchorOverride, androidRawFolder: androidRawFolder,
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
    public static func load(
        contentsOf path: String, anchors: TrustAnchors? = nil, androidRawFolder: String? = nil,
        format: ConfigurationFormat? = nil, publicSuffixes: PublicSuffixList? = PublicSuffixList.system,
        certificateTransparencyLogStore: CertificateTransparency.LogStore
    ) throws(PincheckError) -> Configuration {
        let (data, directory) = try read(path)
        return try decode(
            data, source: path, baseDirectory: directory, anchors: anchors, androidRawFolder: androidRawFolder, format: format,
            publicSuffixes: publicSuffixes, logs: nil, logStore: certificateTransparencyLogStore)
    }

    /// Decodes a configuration whose Certificate Transparency requirements read their logs from
    /// `certificateTransparencyLogStore` once per evaluation.
    public static func decode(
        _ data: Data, source: String = "<configuration>", baseDirectory: String,
        anchors anchorOverride: TrustAnchors? = nil, androidRawFolder: String? = nil,
        format: ConfigurationFormat? = nil, publicSuffixes: PublicSuffixList? = PublicSuffixList.system,
        certificateTransparencyLogStore: CertificateTransparency.LogStore
    ) throws(PincheckError) -> Configuration {
        try decode(
            data, source: source, baseDirectory: baseDirectory, anchors: anchorOverride, androidRawFolder: androidRawFolder,
            format: format, publicSuffixes: publicSuffixes, logs: nil, logStore: certificateTransparencyLogStore)
    }

    /// The decoder: CT requirements read `logStore` when there is one, else `logs`, else the file's lists.
    private static func decode(
        _ data: Data, source: String, baseDirectory: String, anchors anchorOverride: TrustAnchors?,
        androidRawFolder: String?, format: ConfigurationFormat?, publicSuffixes: PublicSuffixList?,
        logs: CertificateTransparency.Logs?,
        logStore: CertificateTransparency.LogStore?
    ) throws(PincheckError) -> Configuration {
        let raw: RawConfiguration
        if let imported = try ConfigurationImporter.importIfForeign(data, format: format, source: source, androidRawFolder: androidRawFolder) {
            raw = imported
        } else {
            raw = try RawConfiguration(data, source: source)
        }
        return try ConfigurationBuilder(
            source: source, baseDirectory: baseDirectory, anchorOverride: anchorOverride,
            publicSuffixes: publicSuffixes, logs: logs, logStore: logStore
        ).configuration(raw)
    }

    /// Decodes a configuration already parsed (a signed pin-set update carries one).
    static func decode(
        document: JSONValue, source: String, baseDirectory: String, anchors anchorOverride: TrustAnchors?,
        logStore: CertificateTransparency.LogStore?
    ) throws(PincheckError) -> Configuration {
        let raw: RawConfiguration
        do throws(ConfigurationFieldError) { raw = try RawConfiguration(json: document) } catch { throw error.error(source: source) }
        return try ConfigurationBuilder(
            source: source, baseDirectory: baseDirectory, anchorOverride: anchorOverride,
            publicSuffixes: PublicSuffixList.system, logs: nil, logStore: logStore
        ).configuration(raw)
    }
}

extension RawConfiguration {
    /// Pincheck JSON from its bytes: strict JSON (a repeated key is refused, not silently one of
    /// its values), then each section read strictly.
    init(_ data: Data, source: String) throws(PincheckError) {
        let document: JSONValue
        do throws(JSONSyntax.Problem) { document = try JSONSyntax.parse(Array(data)) } catch {
            throw PincheckError(.invalidPolicy, error.description, source: source)
        }
        do throws(ConfigurationFieldError) { try self.init(json: document) } catch { throw error.error(source: source) }
    }
}
