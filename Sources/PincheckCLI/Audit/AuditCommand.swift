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
