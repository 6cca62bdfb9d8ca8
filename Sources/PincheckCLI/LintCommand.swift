import ArgumentParser
import FoundationEssentials
import TrustEvaluator

/// `pincheck lint CONFIG`: pin health of a configuration.
struct Lint: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        _superCommandName: Pincheck.name,
        abstract:
            "Check a configuration's pin health: backup pins, expiring leaf pins, public-root pins, SHA-1 pins, expired pin sets, CT requirements that never apply or whose log lists are too old.",
        discussion: """
            Exits 1 when a finding is at error level (a missing backup pin on an enforced host, an expired pin set, CT log lists too old for a policy that then refuses the host), 0 otherwise.
            --client-ca judges the anchors an mTLS server trusts for its clients (with or without a configuration): \
            a public root among them is a warning (client-anchor-public-root), since public CAs stopped issuing \
            client certificates in 2026. For a SPIFFE bundle folder: --client-ca FOLDER/*.trust-bundle.pem.
            """)

    @Argument(help: ArgumentHelp("A configuration: Pincheck JSON, TrustKit plist, Android XML, OkHttp pins or ATS Info.plist.", valueName: "config"))
    var config: String?

    @Option(
        name: .customLong("client-ca"),
        help: ArgumentHelp("A CA file an mTLS server trusts for its clients' certificates; repeatable.", valueName: "file"))
    var clientCAs: [String] = []

    @Option(help: ArgumentHelp("Flag pinned leaf certificates expiring within this many days.", valueName: "days"))
    var days: Int = 30

    @OptionGroup var when: TimeOption

    @OptionGroup var configurationFile: ConfigurationFileOptions
    var androidRaw: String? { configurationFile.androidRaw }
    var configFormat: ConfigurationFormat? { configurationFile.configFormat }

    @Option(
        name: .customLong("ct-log-list"),
        help: ArgumentHelp(
            "A CT log list for the configuration's certificateTransparency requirements, in place of the file's certificateTransparencyLogLists; repeatable. Lists too old for their policy are findings.",
            valueName: "file"))
    var ctLogLists: [String] = []

    @Option(
        name: .customLong("ct-log-list-date"),
        help: ArgumentHelp("The date of log lists that carry none (Apple's), for the policy's list-age limit.", valueName: "time"),
        transform: TimeOption.parse)
    var ctListDate: Date?

    @Option(
        help: ArgumentHelp(
            "A chain a host serves (PEM or DER, leaf first): the backup-pin rule is also judged on it, as the engine judges it (every pin on the current chain is no backup). Needs --host.",
            valueName: "file"))
    var chain: String?

    @Option(help: ArgumentHelp("The host --chain is served for.", valueName: "name"))
    var host: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if days < 0 { throw ValidationError("--days must not be negative") }
        if (chain == nil) != (host == nil) { throw ValidationError("--chain and --host go together: the chain a host serves, and that host") }
        if chain != nil && config == nil { throw ValidationError("--chain judges a configuration's pins: give the configuration") }
        if config == nil && clientCAs.isEmpty { throw ValidationError("give a configuration, --client-ca files, or both") }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        var findings: [LintFinding] = []
        for path in clientCAs {
            let anchors = try TrustAnchors(certificates: try Certificate.load(contentsOf: path))
            findings += anchors.clientAuthenticationWarnings().map {
                LintFinding(level: .warning, code: "client-anchor-public-root", path: path, pattern: "client anchors", message: $0)
            }
        }
        guard let config else {
            return report(findings, subject: "\(clientCAs.count) client CA file\(clientCAs.count == 1 ? "" : "s")", console)
        }
        var logs: CertificateTransparency.Logs? = nil
        if !ctLogLists.isEmpty {
            var lists: [CertificateTransparency.LogList] = []
            for path in ctLogLists { lists.append(try CertificateTransparency.LogList(contentsOf: path, publishedAt: ctListDate)) }
            logs = CertificateTransparency.Logs(lists)
        }
        let configuration = try Configuration.load(
            contentsOf: config, androidRawFolder: androidRaw, format: configFormat,
            certificateTransparencyLogs: logs)
        let time = when.time
        // Pins on the system's roots are over-broad; an absent system bundle just skips that check.
        var roots: [Certificate] = []
        if case .system(let file, _) = TrustAnchors.system.origin { roots = (try? Certificate.load(contentsOf: file)) ?? [] }
        findings = configuration.lint(at: time, expiringWithinDays: days, publicRoots: roots) + findings
        if let chain, let host {
            findings += try configuration.backupPinFindings(
                servedChain: try Certificate.load(contentsOf: chain), host: host, at: time,
                besides: findings)
        }
        return report(findings, subject: "\(config): \(configuration.hosts.count) host\(configuration.hosts.count == 1 ? "" : "s")", console)
    }

    private func report(_ findings: [LintFinding], subject: String, _ console: Console) -> ExitStatus {
        if output.json {
            console.line(
                JSONLines.line([
                    "findings": findings.map {
                        ["level": $0.level.rawValue, "code": $0.code, "path": $0.path, "pattern": $0.pattern, "message": $0.message]
                    }
                ]))
        } else if findings.isEmpty {
            console.line("\(subject), no findings.")
        } else {
            var table = Table()
            for finding in findings {
                let level = finding.level == .error ? console.paint("error", .red) : console.paint("warning", .yellow)
                table.add([level, finding.path, finding.pattern, "\(finding.message) [\(finding.code)]"])
            }
            table.render().forEach(console.line)
        }
        return findings.contains { $0.level == .error } ? .notTrusted : .trusted
    }
}
