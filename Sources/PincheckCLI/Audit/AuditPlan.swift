import ArgumentParser
import FoundationEssentials
import PincheckTLS
import ServerTrust
import TrustEvaluator

/// Which hosts `audit` and `watch` check, and how many at once.
package struct AuditedHostsOptions: ParsableArguments {
    @Option(help: ArgumentHelp("More hosts, one per line: NAME [ADDRESS[:PORT]] (# starts a comment).", valueName: "file"))
    var hosts: String?

    @Option(help: ArgumentHelp("The port for hosts given without one.", valueName: "port"))
    var port: UInt16 = 443

    @Option(help: ArgumentHelp("How many hosts are checked at the same time.", valueName: "n"))
    package var concurrency: Int = 8

    package init() {}

    package func validate() throws {
        guard port > 0 else { throw ValidationError("--port must be 1–65535") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 256") }
    }

    /// The configuration's exact names and those of `--hosts`.
    package func plan(_ configuration: Configuration) throws -> AuditPlan {
        try AuditPlan(configuration: configuration, hostsPath: hosts, defaultPort: port)
    }
}

/// Which hosts to audit and where to connect to each.
package struct AuditPlan {
    /// The configuration's exact names and those of the `--hosts` file at `hostsPath`.
    init(configuration: Configuration, hostsPath: String?, defaultPort: UInt16) throws {
        let hostsFile = try hostsPath.map { path throws(PincheckError) in
            let bytes = try InputFile.read(path, limit: InputFile.configurationLimit, what: "hosts file")
            guard !PEM.containsPrivateKey(bytes) else {
                throw PincheckError(
                    .unexpectedPEMBlock, "the hosts file holds a private key: this is not a host list (nothing of it is printed)", source: path)
            }
            return UnicodeText.droppingByteOrderMark(String(decoding: bytes, as: UTF8.self))
        }
        try self.init(configuration: configuration, hostsFile: hostsFile, defaultPort: defaultPort)
    }

    package struct Entry {
        package let name: String
        let target: ProbeTarget

        /// Where it connects, as its JSON record's `address` spells it.
        package var address: String { "\(target.host):\(target.port)" }
        /// What names it in a shard and in a resume file: the name and where it connects.
        package var key: String { "\(name) \(address)" }

        /// The key of an `audit --json` host record (`host` and `address`); nil for any other line.
        package static func recordKey(_ line: [UInt8]) -> String? {
            struct Record: Decodable { let host: String; let address: String }
            return (try? JSONDecoder().decode(Record.self, from: Data(line))).map { "\($0.host) \($0.address)" }
        }
    }

    package var entries: [Entry] = []
    /// Patterns no audited name falls under (wildcards without a --hosts name).
    package var unaudited: [String] = []

    init(configuration: Configuration, hostsFile: String?, defaultPort: UInt16) throws(PincheckError) {
        // Names audited, and each name with its address: a name listed twice with two addresses is
        // audited at both (a host served from two places can fail at one).
        var seen = Set<String>()
        var listed = Set<String>()
        for (index, line) in (hostsFile ?? "").split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            // Key material without a header (a key's body, a key as one base64 line) is refused
            // and summarised: no part of it reaches an error message.
            if PEM.looksLikeKeyMaterial(line) {
                throw PincheckError(
                    .invalidHost,
                    "hosts file line \(index + 1) looks like key material or base64, not a host name (\(line.utf8.count) bytes; nothing of it is printed)"
                )
            }
            let text = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingWhitespaceCharacters()
            guard !text.isEmpty else { continue }
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard fields.count <= 2 else { throw PincheckError(.invalidPolicy, "hosts file: \"\(text)\" is not NAME [ADDRESS[:PORT]]") }
            let name = try HostName.peerName(for: fields[0]).text
            let target = try ProbeTarget(parsing: fields.count == 2 ? fields[1] : fields[0], defaultPort: defaultPort)
            seen.insert(name)
            if listed.insert("\(name) \(target.host) \(target.port)").inserted { entries.append(Entry(name: name, target: target)) }
        }
        for host in configuration.hosts {
            let pattern = host.policy.pattern
            switch pattern.kind {
            case .exact, .includingSubdomains:
                if seen.insert(pattern.base).inserted {
                    entries.append(Entry(name: pattern.base, target: ProbeTarget(host: pattern.base, port: defaultPort)))
                }
            case .oneLabel, .anyDepth:
                if !seen.contains(where: { (try? configuration.trustManager.policy(for: $0))??.pattern == pattern }) {
                    unaudited.append("\(pattern)")
                }
            }
        }
    }
}

/// An app's own configuration, read with its format's meaning: `audit` and `plan`.
package struct AppConfigurationOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp("The app's configuration: Pincheck JSON, TrustKit plist, Android XML, OkHttp pins or ATS Info.plist.", valueName: "config")
    )
    package var config: String

    @OptionGroup var anchorFiles: AnchorFileOptions
    var caFiles: [String] { anchorFiles.files }

    @OptionGroup var configurationFile: ConfigurationFileOptions
    var androidRaw: String? { configurationFile.androidRaw }
    var configFormat: ConfigurationFormat? { configurationFile.configFormat }

    @Option(help: ArgumentHelp("Seconds allowed for name resolution, connect and handshake, per host.", valueName: "seconds"))
    package var timeout: Double = 10

    @OptionGroup var when: TimeOption

    @Flag(help: "Print JSON Lines instead of the human-readable report: one object per host, with \"schema\" (docs/json.md).")
    package var json = false

    package init() {}

    package func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be between 0 and 3600 seconds") }
    }

    package func load() throws -> Configuration {
        let anchors = caFiles.isEmpty ? nil : try TrustAnchors(contentsOf: caFiles)
        return try Configuration.load(contentsOf: config, anchors: anchors, androidRawFolder: androidRaw, format: configFormat)
    }

    var time: Date { when.time }
    /// The fixed evaluation time (--at); nil: now, at each evaluation.
    package var fixedTime: Date? { when.at }
    package var probe: TLSProbe { TLSProbe(timeout: .milliseconds(Int64(timeout * 1000))) }
}
