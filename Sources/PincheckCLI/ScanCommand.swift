import ArgumentParser
internal import CGlibcMalloc
import FoundationEssentials
import TrustEvaluator
import PincheckTLS
#if canImport(Glibc)
import Glibc
#endif

/// `pincheck scan --hosts FILE|-`: check many hosts with a bounded pool of workers.
struct Scan: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        _superCommandName: Pincheck.name,
        abstract: "Check many hosts concurrently: one HOST[:PORT] per line; # comments and blank lines are skipped.",
        discussion: """
            Results are printed as they arrive (JSON lines with --json), then a summary. A fixed pool of \
            --concurrency workers reads the list as it goes, so a long list needs neither more threads nor more memory.
            Exit code: the worst over all hosts in the order 0 trusted < 1 not trusted < 3 network failure; 2 for bad input.
            As one of many jobs (docs/command.md, "Fleet scans"): --shard K/N or --shard-from-env checks one \
            stable share of the list, --resume FILE keeps the records and skips the hosts already there, \
            --rate caps new handshakes per second.
            """)

    @Option(help: ArgumentHelp("The list of hosts, or - for standard input.", valueName: "file"))
    var hosts: String

    @Option(help: ArgumentHelp("How many hosts are checked at the same time.", valueName: "n"))
    var concurrency: Int = 8

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var policy: PolicyOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup(title: "Fleet scans") var fleet: FleetOptions

    func validate() throws {
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 256") }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let runner = HostCheck(
            judge: try policy.makeJudge(defaultRevocation: .crl, fetchTimeout: connection.timeout, advisories: .liveCheck), connection: connection,
            policy: policy)
        let run = try FleetRun(fleet, command: "scan", key: ScanSelection.recordKey, redone: "checked")
        let selection = ScanSelection(run: run, defaultPort: connection.port)
        // Opened once and read once, streaming: a pipe, a FIFO or standard input is read as it comes.
        let source = try HostList(path: hosts, writerTimeout: connection.timeout)
        let state = ScanState(
            console: console, json: output.json, total: source.countHostsAndRewind(where: { selection.decide($0) == .check }), run: run)
        // glibc gives each thread that allocates its own malloc arena, reserving 64 MiB of address
        // space apiece (up to 8 per core): 64 workers reserved about 1 GiB for 30 MiB of use and
        // crashed under an address-space limit. One arena per core is plenty for workers that
        // mostly wait on the network.
        _ = pincheck_limit_malloc_arenas(Int32(max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        let started = ContinuousClock.now
        let work: @Sendable () -> Void = {
            while let line = source.next() {
                switch selection.decide(line) {
                case .otherShard: state.listed(); continue
                case .recorded: state.listed(); state.skippedAsRecorded(); continue
                case .check: state.listed()
                }
                let item: ScanItem
                if let problem = line.problem {
                    item = .invalid(line: line.number, text: line.text, code: problem.code.description, message: problem.message)
                } else {
                    do {
                        let target = try ProbeTarget(parsing: line.text, defaultPort: connection.port)
                        run.waitForSlot()
                        let checkedAt = Date()
                        let started = ContinuousClock.now
                        let outcome = try runner.run(target)
                        item = .checked(outcome, RunJSON(checkedAt: checkedAt, elapsed: ContinuousClock.now - started))
                    } catch let error as PincheckError {
                        item = .invalid(line: line.number, text: line.text, code: error.code.description, message: error.message)
                    } catch {
                        item = .invalid(line: line.number, text: line.text, code: PincheckError.Code.invalidHost.description, message: "\(error)")
                    }
                }
                state.record(item)
            }
        }
        // Under an address-space limit (ulimit -v), as many workers as fit, said once; none
        // fitting is an error, never a crash on an allocation halfway through the list.
        let workers = try FleetRun.workersFitting(concurrency)
        if workers < concurrency {
            Console.standardError.line(
                "pincheck: note: --concurrency \(concurrency) does not fit the address-space limit; scanning with \(workers) at a time")
        }
        FleetRun.runWorkers(workers, work: work)
        if let error = source.error { throw error }
        // A list without hosts is an error; a shard or a resumed run with nothing left is not.
        guard state.listedCount > 0 else {
            throw PincheckError(.emptyInput, "the host list names no host (one HOST[:PORT] per line)", source: hosts)
        }
        if let error = run.recordError { throw error }
        return state.finish(elapsed: ContinuousClock.now - started)
    }
}

enum ScanItem: Sendable {
    case checked(CheckOutcome, RunJSON)
    case invalid(line: Int, text: String, code: String, message: String)
}

/// Which host-list lines this run checks: those of its shard not already in the resume file.
struct ScanSelection: Sendable {
    let run: FleetRun
    let defaultPort: UInt16

    /// A line's key, as its record's `target` spells it: `HOST:PORT` for a host, the line's text otherwise.
    func key(_ line: HostList.Line) -> String {
        guard line.problem == nil, let target = try? ProbeTarget(parsing: line.text, defaultPort: defaultPort) else { return line.text }
        return target.description
    }

    func decide(_ line: HostList.Line) -> FleetRun.Decision {
        run.selects ? run.decide(key(line)) : .check
    }

    /// The `target` of a record line of `scan --json` (a host's or a refused line's); nil for anything else.
    static func recordKey(_ line: [UInt8]) -> String? {
        struct Record: Decodable { let target: String }
        return try? JSONDecoder().decode(Record.self, from: Data(line)).target
    }
}

/// Counters, output and progress of a scan, shared by the workers.
final class ScanState: Sendable {
    private let console: Console
    private let json: Bool
    private let total: Int?
    private let run: FleetRun
    private let tally = Locked(Tally())
    private static let listLimit = 50

    private struct Tally {
        var done = 0
        var trusted = 0
        var notTrusted = 0
        var networkErrors = 0
        var invalid = 0
        var worst = ExitStatus.trusted
        /// Hosts whose pins failed, kept up to a limit so memory stays flat.
        var pinFailures: [(target: String, pins: String)] = []
        var pinFailureCount = 0
        var networkFailures: [(target: String, code: String)] = []
        var listed = 0
        var alreadyRecorded = 0

        mutating func count(_ outcome: CheckOutcome) {
            worst = .worst(worst, outcome.status)
            switch outcome.status {
            case .trusted: trusted += 1
            case .notTrusted: notTrusted += 1
            case .networkFailure: networkErrors += 1
            case .badInput, .reportNotWritten: invalid += 1
            }
            if case .evaluated(_, let verdict) = outcome.result,
                let pinFailure = verdict.failures.first(where: { $0.code == .pinMismatch })
            {
                pinFailureCount += 1
                if pinFailures.count < ScanState.listLimit {
                    let served = verdict.servedChain.first.map { "leaf \($0.publicKeyPin)" } ?? ""
                    let configured = pinFailure.evidence.pinsConfigured?.map(\.description).joined(separator: " ") ?? ""
                    pinFailures.append((outcome.target.description, "expected \(configured); served \(served)"))
                }
            }
            if case .networkFailure(let error) = outcome.result, networkFailures.count < ScanState.listLimit {
                networkFailures.append((outcome.target.description, error.code.description))
            }
        }
    }

    /// How many lines were recorded (hosts checked and lines refused).
    var count: Int { tally.withLock { $0.done } }
    /// How many lines the list named, in this shard or not, checked or already recorded.
    var listedCount: Int { tally.withLock { $0.listed } }

    init(console: Console, json: Bool, total: Int?, run: FleetRun) {
        self.console = console
        self.json = json
        self.total = total
        self.run = run
    }

    func listed(_ count: Int = 1) { tally.withLock { $0.listed += count } }
    func skippedAsRecorded() { tally.withLock { $0.alreadyRecorded += 1 } }

    func record(_ item: ScanItem) {
        tally.withLock { tally in
            tally.done += 1
            clearProgress()
            switch item {
            case .checked(let outcome, let checkRun):
                tally.count(outcome)
                let line = outcome.json(run: checkRun)
                run.keep(line)
                console.line(json ? line : humanLine(outcome))
            case .invalid(let line, let text, let code, let message):
                tally.invalid += 1
                tally.worst = .worst(tally.worst, .badInput)
                let record = JSONLines.line(BadInputLine(target: text, line: line, code: code, message: message))
                run.keep(record)
                if json {
                    console.line(record)
                } else {
                    console.line(
                        "\(pad(console.paint("bad input", .red), 14))  line \(line): \(Terminal.printable(text)): \(code): \(Terminal.printable(message))"
                    )
                }
            }
            drawProgress(done: tally.done)
        }
    }

    private func humanLine(_ outcome: CheckOutcome) -> String {
        let target = outcome.target.description
        switch outcome.result {
        case .evaluated(let probe, let verdict) where outcome.status == .trusted:
            let pins = verdict.matchedPins.map { "pin matched at depth \($0.depth)" }.first ?? "chain valid"
            let group = probe.keyExchangeGroup.map { " \($0)" } ?? ""
            return "\(pad(console.paint("trusted", .green), 14))  \(target)  \(outcome.host)  \(probe.protocolVersion)\(group)  \(pins)"
        case .evaluated(_, let verdict):
            let why = verdict.failures.map(\.code.description).joined(separator: ", ")
            return "\(pad(console.paint("not trusted", .red), 14))  \(target)  \(outcome.host)  \(why)"
        case .networkFailure(let error):
            return "\(pad(console.paint("network error", .yellow), 14))  \(target)  \(error.code): \(Terminal.printable(error.message))"
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - Table.visibleWidth(text)))
    }

    /// Progress only on a terminal: one line, redrawn in place, cleared before each result line.
    private func drawProgress(done: Int) {
        guard console.isTerminal else { return }
        if let total, total > 0 {
            let width = 30
            let filled = min(width, done * width / total)
            console.write("[\(String(repeating: "█", count: filled))\(String(repeating: "·", count: width - filled))] \(done)/\(total)")
        } else {
            console.write("\(done) checked…")
        }
    }

    private func clearProgress() {
        guard console.isTerminal else { return }
        console.write("\r\u{1B}[K")
    }

    /// Prints the summary and returns the exit status.
    func finish(elapsed: Duration) -> ExitStatus {
        tally.withLock { tally in
            clearProgress()
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if json {
                console.line(
                    JSONLines.line([
                        "summary": ScanSummary(
                            total: tally.done, trusted: tally.trusted, notTrusted: tally.notTrusted, networkError: tally.networkErrors,
                            badInput: tally.invalid, pinFailures: tally.pinFailureCount, exitCode: Int(tally.worst.rawValue),
                            alreadyRecorded: run.records == nil ? nil : tally.alreadyRecorded)
                    ]))
                return tally.worst
            }
            console.line()
            console.line(console.paint("Summary", .bold) + " — \(tally.done) host\(tally.done == 1 ? "" : "s") in \(Self.oneDecimal(seconds)) s")
            if let records = run.records {
                console.line("  \(tally.alreadyRecorded) already recorded in \(Terminal.printable(records.path)) (not checked again)")
            }
            var table = Table()
            table.add(["  trusted", "\(tally.trusted)"])
            table.add(["  not trusted", "\(tally.notTrusted)"])
            table.add(["  network error", "\(tally.networkErrors)"])
            if tally.invalid > 0 { table.add(["  bad input", "\(tally.invalid)"]) }
            table.render().forEach(console.line)
            Self.hostList(
                "Pins that failed (\(tally.pinFailureCount)):", tally.pinFailures.map { [$0.target, $0.pins] }, of: tally.pinFailureCount, console)
            Self.hostList("Network errors:", tally.networkFailures.map { [$0.target, $0.code] }, of: tally.networkErrors, console)
            console.line()
            console.line("Exit code \(tally.worst.rawValue).")
            return tally.worst
        }
    }

    /// `12.3`: one decimal, without Foundation's formatting.
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((max(0, value) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// The last JSON line of `scan --json`.
struct ScanSummary: Encodable {
    let total: Int
    let trusted: Int
    let notTrusted: Int
    let networkError: Int
    let badInput: Int
    let pinFailures: Int
    let exitCode: Int
    /// With --resume: the hosts of this run's share that the file already recorded.
    let alreadyRecorded: Int?
}

/// A `scan --json` line for a host-list line that is not a host.
struct BadInputLine: Encodable {
    struct Reason: Encodable {
        let code: String
        let message: String
    }
    let target: String
    let line: Int
    let status = "bad-input"
    let trusted = false
    let reasons: [Reason]

    init(target: String, line: Int, code: String, message: String) {
        self.target = target
        self.line = line
        self.reasons = [Reason(code: code, message: message)]
    }
}

extension ScanState {
    /// A titled list of hosts with what went wrong, the first ones of `total`.
    static func hostList(_ title: String, _ rows: [[String]], of total: Int, _ console: Console) {
        guard !rows.isEmpty else { return }
        console.line()
        console.line(title)
        var table = Table()
        for row in rows { table.add(["  \(row[0])"] + row.dropFirst()) }
        table.render().forEach(console.line)
        if total > rows.count { console.line("  … and \(total - rows.count) more") }
    }
}
