import ArgumentParser
import FoundationEssentials
import PincheckTLS
import ServerTrust
import TrustEvaluator

/// `pincheck audit CONFIG [--hosts FILE]`: an app's pinning configuration against the live hosts it pins.
struct Audit: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        _superCommandName: Pincheck.name,
        abstract: "Check an app's pinning configuration (any supported format) against the live hosts it pins.",
        discussion: """
            Audits every exact name the configuration pins, plus the names --hosts gives (needed for \
            wildcard patterns; a line may also say where to connect: "NAME [ADDRESS[:PORT]]"). \
            For each host: the verdict the app would reach now, the pin that matched and its depth, \
            whether a backup pin exists that is not on the current chain, the days left on each \
            pinned certificate, and what a routine leaf-key rotation would do.
            Hosts are audited --concurrency at a time, each printed as it finishes. As one of many jobs \
            (docs/command.md, "Fleet scans"): --shard K/N or --shard-from-env audits one stable share of the \
            hosts, --resume FILE keeps the JSON records and skips the hosts already there, --rate caps new \
            handshakes per second.
            Exit codes: the worst host's — 0 allowed · 1 refused · 3 network or handshake failure · 2 bad input \
            (also when nothing could be audited).
            """)

    @OptionGroup var app: AppConfigurationOptions
    @OptionGroup var revocation: RevocationOptions

    @OptionGroup var audited: AuditedHostsOptions
    @OptionGroup(title: "Fleet scans") var fleet: FleetOptions

    func execute(_ console: Console) throws -> ExitStatus {
        let configuration = try app.load()
        let time = app.time
        let json = app.json
        let plan = try audited.plan(configuration)
        for pattern in plan.unaudited {
            if json {
                console.line(
                    JSONLines.line([
                        "pattern": .string(pattern), "outcome": .string("not-audited"),
                        "reason": .string("no host name given for this pattern (--hosts)"),
                    ]))
            } else {
                console.line("\(pattern): no host name given for this pattern; add one with --hosts to audit it")
            }
        }
        // Auditing nothing is not a pass: a wildcard-only or empty configuration without --hosts.
        guard !plan.entries.isEmpty else {
            throw PincheckError(
                .emptyInput, "nothing was audited: the configuration pins no exact host name, and --hosts names none", source: app.config)
        }
        let probe = app.probe
        // The leaf's distribution points are consulted where the configuration says nothing of them.
        let manager = revocation.apply(to: configuration.trustManager, default: .crl)
        let fetcher = try revocation.fetcher(timeout: app.timeout)
        // This job's share of the hosts, without those its resume file already records.
        let run = try FleetRun(fleet, command: "audit", key: AuditPlan.Entry.recordKey, redone: "audited")
        let share = plan.entries.filter { run.decide($0.key) != .otherShard }
        let entries = share.filter { run.decide($0.key) == .check }
        if run.records != nil, !json {
            console.line(
                "\(share.count - entries.count) of \(share.count) hosts already recorded in \(Terminal.printable(fleet.resume ?? "")) (not audited again)"
            )
        }
        let state = AuditProgress(
            console: console, json: json, total: entries.count,
            showsProgress: Console.standardError.isTerminal && !json, separated: !plan.unaudited.isEmpty || (run.records != nil && !json),
            run: run)
        // Hosts are audited concurrently, each printed as soon as it is done: a killed audit has
        // printed every host it finished, and 1,000 unreachable names take 1,000 / --concurrency
        // timeouts rather than 1,000.
        FleetRun.runWorkers(min(audited.concurrency, entries.count), name: "pincheck-audit") {
            while let entry = state.nextEntry(of: entries) {
                run.waitForSlot()
                let result: Result<AuditResult, PincheckError>
                do throws(PincheckError) {
                    result = .success(try AuditResult.run(entry, manager: manager, fetcher: fetcher, probe: probe, at: time))
                } catch {
                    result = .failure(error)
                }
                state.record(result, for: entry)
            }
        }
        let status = state.finish()
        if let error = run.recordError { throw error }
        return status
    }
}

/// The audit's shared state: which host is next, what has been printed, the worst status.
final class AuditProgress: Sendable {
    private let console: Console
    private let json: Bool
    private let total: Int
    private let showsProgress: Bool
    private let run: FleetRun
    private let state: Locked<State>

    private struct State {
        var next = 0
        var done = 0
        var printed: Bool
        var worst = ExitStatus.trusted
    }

    init(console: Console, json: Bool, total: Int, showsProgress: Bool, separated: Bool, run: FleetRun) {
        self.console = console
        self.json = json
        self.total = total
        self.showsProgress = showsProgress
        self.state = Locked(State(printed: separated))
        self.run = run
    }

    func nextEntry(of entries: [AuditPlan.Entry]) -> AuditPlan.Entry? {
        state.withLock { state in
            guard state.next < entries.count else { return nil }
            defer { state.next += 1 }
            return entries[state.next]
        }
    }

    func record(_ result: Result<AuditResult, PincheckError>, for entry: AuditPlan.Entry) {
        state.withLock { state in
            state.done += 1
            if showsProgress { Console.standardError.write("\r\u{1B}[2K") }
            let status: ExitStatus
            let record: String
            switch result {
            case .success(let audited):
                (status, record) = (audited.status, audited.jsonLine)
            case .failure(let error):
                status = .badInput
                record = JSONLines.line([
                    "host": .string(entry.name), "address": .string(entry.address), "outcome": .string("bad-input"),
                    "error": .object(["code": .string("\(error.code)"), "message": .string(error.description)]),
                ])
            }
            state.worst = ExitStatus.worst(state.worst, status)
            run.keep(record)
            if json {
                console.line(record)
            } else {
                if state.printed { console.line() }
                switch result {
                case .success(let audited): audited.render(to: console)
                case .failure(let error):
                    console.line("\(entry.name): \(console.paint("BAD INPUT", .red)) — \(error.code): \(error.description)")
                }
            }
            state.printed = true
            if showsProgress, state.done < total { Console.standardError.write("audited \(state.done)/\(total)") }
        }
    }

    func finish() -> ExitStatus {
        state.withLock { state in
            if showsProgress { Console.standardError.write("\r\u{1B}[2K") }
            return state.worst
        }
    }
}

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

/// One host's audit.
package struct AuditResult {
    package enum Outcome {
        case evaluated(Verdict)
        case networkFailure(ProbeError)
    }

    package let name: String
    let target: ProbeTarget
    package let outcome: Outcome

    /// Where it connected, as its JSON record's `address` spells it.
    package var address: String { AuditPlan.Entry(name: name, target: target).address }

    package var status: ExitStatus {
        switch outcome {
        case .networkFailure: .networkFailure
        case .evaluated(let verdict): ExitStatus(verdict)
        }
    }

    /// - Throws: `PincheckError` only when the chain cannot be judged at all (bad input).
    package static func run(
        _ entry: AuditPlan.Entry, manager: TrustManager, fetcher: RevocationListFetcher, probe: TLSProbe,
        at time: Date
    ) throws(PincheckError) -> AuditResult {
        let served: ProbeResult
        do {
            served = try probe.probe(entry.target, serverName: entry.name)
        } catch {
            return AuditResult(name: entry.name, target: entry.target, outcome: .networkFailure(error))
        }
        let verdict = try manager.evaluate(
            served.servedChain, host: entry.name, port: Int(entry.target.port), at: time,
            stapledOCSPResponse: served.stapledOCSPResponse, waitingForRevocationListsFrom: fetcher)
        return AuditResult(name: entry.name, target: entry.target, outcome: .evaluated(verdict))
    }

    /// The active pins of the host's policy (every pin set that has not expired, enforced or not).
    package static func activePins(_ verdict: Verdict) -> [PublicKeyPin] {
        verdict.hostPolicy?.pinSets.filter { $0.isActive(at: verdict.evaluationTime) }.flatMap(\.keyPins) ?? []
    }

    /// Pins of the policy that no certificate of the current chain (served, or the path built) carries.
    static func backupPins(_ verdict: Verdict) -> [PublicKeyPin] {
        let onChain = verdict.servedChain + ((verdict.verifiedPath ?? verdict.builtPath)?.certificates ?? [])
        return activePins(verdict).filter { pin in !onChain.contains { pin.matches($0) } }
    }

    /// The engine's backup-pin finding for this host (``BackupPinCheck``), if it has one.
    static func backupPinWarning(_ verdict: Verdict) -> Reason? {
        verdict.warnings.first { $0.code == .noBackupPin }
    }

    /// What the root programs say that will hurt: the chain ends at a root a program has
    /// distrusted or scheduled, or a pinned root is in no program while the host's chain is public.
    static func rootProgramNotes(_ verdict: Verdict) -> [String] {
        guard let answer = verdict.rootPrograms else { return [] }
        var notes: [String] = []
        if let root = answer.anchor, root.isDistrustedOrScheduled {
            notes.append("the chain ends at \(root.name): \(root.programSummary); the host must move to another CA, and pins on this one with it")
        }
        if answer.anchorIsPublic {
            let pinnedRoots =
                verdict.hostPolicy?.pinSets.filter { $0.isActive(at: verdict.evaluationTime) }.flatMap(\.pinnedCertificates)
                .filter { $0.isSelfSigned && $0.isCertificateAuthority } ?? []
            let programs = verdict.hostPolicy?.validationPolicy.rootPrograms.data ?? .bundled
            for root in pinnedRoots where programs.root(for: root) == nil {
                notes.append(
                    "the pinned root \(root.subject) is in no root program while the host's chain is public: that pin matches only if the host moves to this private CA"
                )
            }
        }
        return notes
    }

    /// What a routine renewal with a new leaf key (same CA) would do.
    static func leafRotation(_ verdict: Verdict) -> String {
        let pins = activePins(verdict)
        guard !pins.isEmpty else { return "not pinned: a new leaf key changes nothing" }
        if let deepest = verdict.pinsFound.filter({ $0.depth > 0 }).map(\.depth).min() {
            return "survives: a pin matches at depth \(deepest), above the leaf"
        }
        guard verdict.pinsCompared else { return "unknown: the chain is refused before its pins are compared" }
        guard !verdict.pinsFound.isEmpty else { return "already refused: no pin matches the current chain" }
        let backups = backupPins(verdict).count
        if backups > 0 {
            return "survives only if the new leaf key is one of the \(backups) backup pin\(backups == 1 ? "" : "s")"
        }
        return "would break: only the leaf key is pinned and there is no backup pin"
    }

    func render(to console: Console) {
        let header = "\(name) (\(target.host):\(target.port))"
        switch outcome {
        case .networkFailure(let error):
            console.line("\(header): \(console.paint("NO CONNECTION", .red)) — \(error)")
        case .evaluated(let verdict):
            let disposition = Disposition(serverTrust: verdict)
            let label = disposition.allowsConnection ? console.paint("ALLOWED", .green) : console.paint("REFUSED", .red)
            console.line("\(header): \(label) (\(disposition.name), \(verdict.coverage))")
            for reason in verdict.failures { console.line("  \(reason.code): \(reason.message.split(separator: "\n").first ?? "")") }
            for reason in verdict.reportOnlyFailures { console.line("  report-only \(reason.code)") }
            var table = Table()
            if let policy = verdict.hostPolicy { table.add(["policy", "\(policy.pattern)"]) }
            let pins = Self.activePins(verdict)
            if pins.isEmpty {
                table.add(["pins", "none (default validation)"])
            } else {
                for match in verdict.pinsFound {
                    table.add(["matched", "\(match.pin) at depth \(match.depth): \(match.certificate.subject)"])
                }
                if verdict.pinsFound.isEmpty {
                    table.add([
                        "matched",
                        verdict.pinsCompared
                            ? "no pin matches the verified path"
                            : "not compared: the chain is refused before its pins are",
                    ])
                }
                let backups = Self.backupPins(verdict)
                if let warning = Self.backupPinWarning(verdict) {
                    table.add(["backup", console.paint(warning.message, .yellow)])
                } else {
                    table.add(["backup", "\(backups.count) pin\(backups.count == 1 ? "" : "s") not on the current chain"])
                }
                for match in verdict.pinsFound {
                    table.add([
                        "expires",
                        "depth \(match.depth) in \(Format.daysLeft(match.certificate, at: verdict.evaluationTime)) days (\(Format.day(match.certificate.notAfter)))",
                    ])
                }
            }
            table.add(["leaf rotation", Self.leafRotation(verdict)])
            for note in Self.rootProgramNotes(verdict) { table.add(["root program", console.paint(note, .yellow)]) }
            for status in verdict.revocationStatuses {
                table.add([
                    "revocation",
                    "depth \(status.depth) \(status.outcome.rawValue): \(Terminal.printable(status.url ?? "no CRL distribution point"))",
                ])
            }
            table.render(indent: "  ").forEach(console.line)
        }
    }

    var jsonLine: String { JSONLines.line(jsonObject) }

    /// The fields of its `--json` record.
    package var jsonObject: [String: JSONValue] {
        var object: [String: JSONValue] = ["host": .string(name), "address": .string(address)]
        switch outcome {
        case .networkFailure(let error):
            object["outcome"] = .string("network-failure")
            object["error"] = .string("\(error)")
        case .evaluated(let verdict):
            let disposition = Disposition(serverTrust: verdict)
            object["outcome"] = .string(disposition.allowsConnection ? "allowed" : "refused")
            object["disposition"] = .string(disposition.name)
            object["coverage"] = .string("\(verdict.coverage)")
            object["policy"] = verdict.hostPolicy.map { .string("\($0.pattern)") } ?? .null
            object["reasons"] = .array(verdict.failures.map { .string("\($0.code)") })
            object["reportOnly"] = .array(verdict.reportOnlyFailures.map { .string("\($0.code)") })
            object["pinsCompared"] = .bool(verdict.pinsCompared)
            object["matchedPins"] = .array(
                verdict.pinsFound.map { match in
                    .object([
                        "pin": .string("\(match.pin)"), "depth": .number(Double(match.depth)), "subject": .string(match.certificate.subject),
                        "daysLeft": .number(Double(Format.daysLeft(match.certificate, at: verdict.evaluationTime))),
                        "notAfter": .string(Format.timestamp(match.certificate.notAfter)),
                    ])
                })
            object["pins"] = .array(Self.activePins(verdict).map { .string("\($0)") })
            object["backupPins"] = .array(Self.backupPins(verdict).map { .string("\($0)") })
            object["noBackupPin"] = Self.backupPinWarning(verdict).map { .string($0.message) } ?? .null
            object["revocation"] = .array(
                verdict.revocationStatuses.map { status in
                    .object([
                        "depth": .number(Double(status.depth)), "outcome": .string(status.outcome.rawValue),
                        "url": status.url.map(JSONValue.string) ?? .null, "detail": .string(status.detail),
                    ])
                })
            object["leafRotation"] = .string(Self.leafRotation(verdict))
            object["rootProgramNotes"] = .array(Self.rootProgramNotes(verdict).map(JSONValue.string))
        }
        return object
    }
}
