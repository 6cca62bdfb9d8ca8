import ArgumentParser
import FoundationEssentials
@_spi(PincheckInternal) import TrustEvaluator
#if canImport(Glibc)
import Glibc
#endif

/// `pincheck scan --hosts FILE|-`: check many hosts with a bounded pool of workers.
struct Scan: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Check many hosts concurrently: one HOST[:PORT] per line; # comments and blank lines are skipped.",
        discussion: """
            Results are printed as they arrive (JSON lines with --json), then a summary. A fixed pool of
            --concurrency workers reads the list as it goes, so a long list needs neither more threads nor more memory.
            Exit code: the worst over all hosts in the order 0 trusted < 1 not trusted < 3 network failure; 2 for bad input.
            """)

    @Option(help: ArgumentHelp("The list of hosts, or - for standard input.", valueName: "file"))
    var hosts: String

    @Option(help: ArgumentHelp("How many hosts are checked at the same time.", valueName: "n"))
    var concurrency: Int = 8

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var policy: PolicyOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 256") }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let runner = HostCheck(judge: try policy.makeJudge(), connection: connection, policy: policy)
        let source = try HostList(path: hosts)
        let state = ScanState(console: console, json: output.json, total: hosts == "-" ? nil : try HostList.count(path: hosts))
        let started = ContinuousClock.now
        let finished = Latch(count: concurrency)
        for _ in 0..<concurrency {
            let started = DetachedThread.start(stackSize: 1 << 20) {
                defer { finished.signal() }
                while let line = source.next() {
                    let item: ScanItem
                    do {
                        let target = try ProbeTarget(parsing: line.text, defaultPort: connection.port)
                        item = .checked(try runner.run(target))
                    } catch {
                        item = .invalid(line: line.number, text: line.text, message: "\(error)")
                    }
                    state.record(item)
                }
            }
            // No thread: the hosts are still checked, by the workers that did start.
            if !started { finished.signal() }
        }
        finished.wait()
        return state.finish(elapsed: ContinuousClock.now - started)
    }
}

enum ScanItem: Sendable {
    case checked(CheckOutcome)
    case invalid(line: Int, text: String, message: String)
}

/// The lines of a host list, read one at a time under a lock (a file or standard input).
final class HostList: @unchecked Sendable {
    // @unchecked Sendable: `file` and `number` are only touched under `lock`.
    private let lock = Lock()
    private let file: UnsafeMutablePointer<FILE>
    private var number = 0

    struct Line { let number: Int; let text: String }

    /// - Throws: `PincheckError` when the file cannot be opened.
    init(path: String) throws(PincheckError) {
        // Standard input through its own FILE over a duplicate of descriptor 0.
        let opened = path == "-" ? fdopen(dup(0), "r") : fopen(path, "r")
        guard let opened else {
            throw PincheckError(.unreadableFile, "cannot open the host list: \(String(cString: strerror(errno)))", source: path)
        }
        file = opened
    }

    deinit { fclose(file) }

    /// The next host line, without comments and surrounding blanks; `nil` at the end.
    func next() -> Line? {
        lock.withLock {
            while let raw = Self.readLine(file) {
                number += 1
                let text = Self.strip(raw)
                if !text.isEmpty { return Line(number: number, text: text) }
            }
            return nil
        }
    }

    /// How many hosts a file lists (a first pass, so the progress bar knows the total).
    static func count(path: String) throws(PincheckError) -> Int {
        let list = try HostList(path: path)
        var count = 0
        while list.next() != nil { count += 1 }
        return count
    }

    static func strip(_ raw: String) -> String {
        let uncommented = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return uncommented.trimmingWhitespaceCharacters()
    }

    private static func readLine(_ file: UnsafeMutablePointer<FILE>) -> String? {
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        defer { free(buffer) }
        let length = getline(&buffer, &capacity, file)
        guard length >= 0, let buffer else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: buffer, count: length), as: UTF8.self)
    }
}

/// Counters, output and progress of a scan, shared by the workers.
final class ScanState: @unchecked Sendable {
    // @unchecked Sendable: every stored property is only touched under `lock`.
    private let lock = Lock()
    private let console: Console
    private let json: Bool
    private let total: Int?
    private var done = 0
    private var trusted = 0
    private var notTrusted = 0
    private var networkErrors = 0
    private var invalid = 0
    private var worst = ExitStatus.trusted
    /// Hosts whose pins failed, kept up to a limit so memory stays flat.
    private var pinFailures: [(target: String, pins: String)] = []
    private var pinFailureCount = 0
    private var networkFailures: [(target: String, code: String)] = []
    private static let listLimit = 50

    init(console: Console, json: Bool, total: Int?) {
        self.console = console
        self.json = json
        self.total = total
    }

    func record(_ item: ScanItem) {
        lock.withLock {
            done += 1
            clearProgress()
            switch item {
            case .checked(let outcome):
                worst = .worst(worst, outcome.status)
                switch outcome.status {
                case .trusted: trusted += 1
                case .notTrusted: notTrusted += 1
                case .networkFailure: networkErrors += 1
                case .badInput: invalid += 1
                }
                if case .evaluated(_, let verdict) = outcome.result,
                   let pinFailure = verdict.failures.first(where: { $0.code == .pinMismatch }) {
                    pinFailureCount += 1
                    if pinFailures.count < Self.listLimit {
                        let served = verdict.servedChain.first.map { "leaf \($0.publicKeyPin)" } ?? ""
                        let configured = pinFailure.evidence.pinsConfigured?.map(\.description).joined(separator: " ") ?? ""
                        pinFailures.append((outcome.target.description, "expected \(configured); served \(served)"))
                    }
                }
                if case .networkFailure(let error) = outcome.result, networkFailures.count < Self.listLimit {
                    networkFailures.append((outcome.target.description, error.code.description))
                }
                if json {
                    console.line(outcome.json(pretty: false))
                } else {
                    console.line(humanLine(outcome))
                }
            case .invalid(let line, let text, let message):
                invalid += 1
                worst = .worst(worst, .badInput)
                if json {
                    console.line(Self.compactJSON(BadInputLine(target: text, line: line, message: message)))
                } else {
                    console.line("\(pad(console.paint("bad input", .red), 14))  line \(line): \(text): \(message)")
                }
            }
            drawProgress()
        }
    }

    private func humanLine(_ outcome: CheckOutcome) -> String {
        let target = outcome.target.description
        switch outcome.result {
        case .evaluated(let probe, let verdict) where outcome.status == .trusted:
            let pins = verdict.matchedPins.map { "pin matched at depth \($0.depth)" }.first ?? "chain valid"
            return "\(pad(console.paint("trusted", .green), 14))  \(target)  \(outcome.host)  \(probe.protocolVersion)  \(pins)"
        case .evaluated(_, let verdict):
            let why = verdict.failures.map(\.code.description).joined(separator: ", ")
            return "\(pad(console.paint("not trusted", .red), 14))  \(target)  \(outcome.host)  \(why)"
        case .networkFailure(let error):
            return "\(pad(console.paint("network error", .yellow), 14))  \(target)  \(error.code): \(error.message)"
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - Table.visibleWidth(text)))
    }

    /// Progress only on a terminal: one line, redrawn in place, cleared before each result line.
    private func drawProgress() {
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
        lock.withLock {
            clearProgress()
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if json {
                console.line(Self.compactJSON(["summary": ScanSummary(
                    total: done, trusted: trusted, notTrusted: notTrusted, networkError: networkErrors,
                    badInput: invalid, pinFailures: pinFailureCount, exitCode: Int(worst.rawValue))]))
                return worst
            }
            console.line()
            console.line(console.paint("Summary", .bold) + " — \(done) host\(done == 1 ? "" : "s") in \(Self.oneDecimal(seconds)) s")
            var table = Table()
            table.add(["  trusted", "\(trusted)"])
            table.add(["  not trusted", "\(notTrusted)"])
            table.add(["  network error", "\(networkErrors)"])
            if invalid > 0 { table.add(["  bad input", "\(invalid)"]) }
            table.render().forEach(console.line)
            if !pinFailures.isEmpty {
                console.line()
                console.line("Pins that failed (\(pinFailureCount)):")
                var pins = Table()
                for failure in pinFailures { pins.add(["  \(failure.target)", failure.pins]) }
                pins.render().forEach(console.line)
                if pinFailureCount > pinFailures.count { console.line("  … and \(pinFailureCount - pinFailures.count) more") }
            }
            if !networkFailures.isEmpty {
                console.line()
                console.line("Network errors:")
                var errors = Table()
                for failure in networkFailures { errors.add(["  \(failure.target)", failure.code]) }
                errors.render().forEach(console.line)
                if networkErrors > networkFailures.count { console.line("  … and \(networkErrors - networkFailures.count) more") }
            }
            console.line()
            console.line("Exit code \(worst.rawValue).")
            return worst
        }
    }

    private static func compactJSON(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
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
}

/// A `scan --json` line for a host-list line that is not a host.
struct BadInputLine: Encodable {
    struct Reason: Encodable {
        let code = "input.invalid-host"
        let message: String
    }
    let target: String
    let line: Int
    let status = "bad-input"
    let trusted = false
    let reasons: [Reason]

    init(target: String, line: Int, message: String) {
        self.target = target
        self.line = line
        self.reasons = [Reason(message: message)]
    }
}
