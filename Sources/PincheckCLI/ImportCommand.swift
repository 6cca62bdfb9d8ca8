import ArgumentParser
import FoundationEssentials
import TrustEvaluator

extension ConfigurationFormat: RawValueArgument {}

/// `pincheck import KIND FILE`: prints the equivalent Pincheck configuration.
struct Import: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        _superCommandName: Pincheck.name,
        abstract: "Print the Pincheck configuration equivalent to a TrustKit, Android, OkHttp or ATS pinning configuration.",
        discussion:
            "KIND is trustkit (plist XML: an Info.plist with TSKConfiguration, or that dictionary), android (network_security_config.xml), okhttp (lines of 'pattern sha256/…') or ats (an Info.plist with NSAppTransportSecurity/NSPinnedDomains, or that dictionary). --config reads these formats directly too."
    )

    @Argument(
        help: ArgumentHelp(
            "trustkit, android, okhttp or ats; pincheck checks a Pincheck configuration and prints it back, keys sorted.", valueName: "kind"))
    var kind: ConfigurationFormat

    @Argument(help: ArgumentHelp("The configuration to import.", valueName: "file"))
    var file: String

    @Option(
        name: .customLong("android-raw"),
        help: ArgumentHelp(
            "Where an Android configuration's @raw/NAME certificates are. Default: the app's res/raw, beside the file's res/xml.", valueName: "folder"
        ))
    var androidRaw: String?

    func execute(_ console: Console) throws -> ExitStatus {
        let data = Data(try InputFile.read(file, limit: InputFile.configurationLimit, what: "configuration file"))
        let json = try ConfigurationImporter.pincheckJSON(from: data, format: kind, source: file, androidRawFolder: androidRaw)
        // Check that what was printed loads (patterns, pins), so a bad import fails here, not later.
        // The CT log lists are the loader's to give (--ct-log-list, or certificateTransparencyLogLists
        // added to the file): here an empty set of logs stands in for them.
        let imported = try Configuration.decode(
            Data(json.utf8), source: file, baseDirectory: ".",
            certificateTransparencyLogs: CertificateTransparency.Logs([]))
        console.line(json)
        if imported.hosts.contains(where: { $0.policy.validationPolicy.certificateTransparency != nil }) {
            Console.standardError.line(
                "pincheck: note: the imported configuration requires Certificate Transparency; it loads only with log lists (--ct-log-list, or \"certificateTransparencyLogLists\" added to it)"
            )
        }
        return .trusted
    }
}
