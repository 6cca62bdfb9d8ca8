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
        let selection = ScanSelection(
            shard: try fleet.resolvedShard(), defaultPort: connection.port,
            resume: try fleet.resumeFile(command: "scan", key: ScanSelection.recordKey))
        if let resume = selection.resume, resume.cutBytes > 0 {
            Console.standardError.line(
                "pincheck: note: cut a half-written last record (\(resume.cutBytes) bytes) off \(resume.path); its host is checked again")
        }
        let pacer = fleet.rate.map(HandshakePacer.init(perSecond:))
        // Opened once and read once, streaming: a pipe, a FIFO or standard input is read as it comes.
        let source = try HostList(path: hosts, writerTimeout: connection.timeout)
        let state = ScanState(
            console: console, json: output.json, total: source.countHostsAndRewind(where: { selection.decide($0) == .check }),
            resume: selection.resume)
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
                        pacer?.waitForSlot()
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
        let workers = try Self.workersFitting(concurrency)
        if workers < concurrency {
            Console.standardError.line(
                "pincheck: note: --concurrency \(concurrency) does not fit the address-space limit; scanning with \(workers) at a time")
        }
        Self.runWorkers(workers, work: work)
        if let error = source.error { throw error }
        // A list without hosts is an error; a shard or a resumed run with nothing left is not.
        guard state.listedCount > 0 else {
            throw PincheckError(.emptyInput, "the host list names no host (one HOST[:PORT] per line)", source: hosts)
        }
        if let error = state.resumeError { throw error }
        return state.finish(elapsed: ContinuousClock.now - started)
    }

    static let workerStackSize = 256 * 1024

    /// Address space one worker may take while it checks a host: its stack, a resolver thread's
    /// megabyte of stack, OpenSSL's connection and buffers, the chain and its verdict.
    static let addressSpacePerWorker = 4 << 20
    /// Address space kept free beside the workers (the output, the CRL fetcher, malloc's arenas).
    static let addressSpaceReserve = 16 << 20

    /// How many of `requested` workers fit under the process's address-space limit (RLIMIT_AS):
    /// all of them when there is no limit.
    /// - Throws: ``PincheckError`` `input.too-large` when not even one fits.
    static func workersFitting(_ requested: Int) throws(PincheckError) -> Int {
        var limit = rlimit()
        guard getrlimit(RLIMIT_AS_VALUE, &limit) == 0, limit.rlim_cur != rlim_t.max else { return requested }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let statm = (try? InputFile.read("/proc/self/statm", limit: 4096, what: "statm")).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let used = (Int(statm.split(separator: " ").first ?? "") ?? 0) * pageSize
        let free = Int(clamping: limit.rlim_cur) - used - addressSpaceReserve
        let fitting = min(requested, max(0, free / addressSpacePerWorker))
        guard fitting > 0 else {
            throw PincheckError(
                .tooLarge,
                "the address-space limit (\(Int(clamping: limit.rlim_cur) >> 20) MiB, ulimit -v) leaves no room to check a host: \(used >> 20) MiB are in use and a worker needs about \((addressSpacePerWorker + addressSpaceReserve) >> 20) MiB more"
            )
        }
        return fitting
    }

    /// `RLIMIT_AS`, whose type differs between C libraries.
    private static var RLIMIT_AS_VALUE: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_AS.rawValue) }

    /// Runs `work` on `count` threads and returns when all have finished. When no thread can be
    /// started (a process limit), `work` runs on the calling thread: the hosts are still checked.
    /// - Parameter startingThread: Starts a thread (the test seam for a process out of threads).
    /// - Parameter name: The workers' thread name (`pincheck-scan`, `pincheck-audit`).
    static func runWorkers(
        _ count: Int, name: String = "pincheck-scan", work: @escaping @Sendable () -> Void,
        startingThread: ((@escaping @Sendable () -> Void) -> Bool)? = nil
    ) {
        let startingThread = startingThread ?? { DetachedThread.start(stackSize: workerStackSize, name: name, $0) }
        let finished = Latch(count: count)
        var workers = 0
        for _ in 0..<count {
            // 256 KiB of stack: a worker runs the probe and the evaluator, never deep recursion.
            if startingThread({
                defer { finished.signal() }; work()
            }) {
                workers += 1
            } else {
                finished.signal()
            }
        }
        if workers == 0 { work() }
        finished.wait()
    }
}

enum ScanItem: Sendable {
    case checked(CheckOutcome, RunJSON)
    case invalid(line: Int, text: String, code: String, message: String)
}

/// Which host-list lines this run checks: those of its shard not already in the resume file.
struct ScanSelection: Sendable {
    enum Decision { case check, otherShard, recorded }

    let shard: Shard?
    let defaultPort: UInt16
    let resume: ResumeFile?

    /// A line's key, as its record's `target` spells it: `HOST:PORT` for a host, the line's text otherwise.
    func key(_ line: HostList.Line) -> String {
        guard line.problem == nil, let target = try? ProbeTarget(parsing: line.text, defaultPort: defaultPort) else { return line.text }
        return target.description
    }

    func decide(_ line: HostList.Line) -> Decision {
        guard shard != nil || resume != nil else { return .check }
        let key = key(line)
        if let shard, !shard.contains(key) { return .otherShard }
        if let resume, resume.recorded.contains(key) { return .recorded }
        return .check
    }

    /// The `target` of a record line of `scan --json` (a host's or a refused line's); nil for anything else.
    static func recordKey(_ line: [UInt8]) -> String? {
        struct Record: Decodable { let target: String }
        return try? JSONDecoder().decode(Record.self, from: Data(line)).target
    }
}

/// The lines of a host list, read once, one at a time under a lock, from whatever the path is:
/// a file, standard input (`-`), a pipe or a FIFO. Lines are bounded (``maximumLineLength``) and
/// so is the whole list (``maximumSize``): a line past the bound is reported, not kept.
final class HostList: @unchecked Sendable {
    // @unchecked Sendable: every stored property but the constants is only touched under `lock`.
    private let lock = Lock()
    private let descriptor: Int32
    private let isRegularFile: Bool
    private let path: String
    private var number = 0
    private var buffer: [UInt8] = []
    private var atEnd = false
    private var bytesRead = 0
    private var failure: PincheckError?

    /// The longest host-list line read (a host name is at most 253 bytes; comments fit too).
    static let maximumLineLength = 4_096
    /// The most a host list may hold (two million hosts fit).
    static let maximumSize = 64 << 20
    /// How much of a refused line is echoed back.
    static let echoLength = 64

    struct Line {
        let number: Int
        /// The host text, or a bounded, printable excerpt of a refused line.
        let text: String
        /// Why the line is refused before it is parsed (too long, not UTF-8, a NUL byte).
        let problem: PincheckError?
    }

    /// - Parameters:
    ///   - path: The list's path, or `-` for standard input.
    ///   - writerTimeout: How long a named FIFO may wait for a writer's first line, in seconds.
    /// - Throws: `PincheckError` when the path cannot be opened, is a directory, or is a FIFO no
    ///   one writes to within `writerTimeout`.
    init(path: String, writerTimeout: Double = 10) throws(PincheckError) {
        self.path = path
        // Non-blocking open: a FIFO without a writer opens at once (and then reads as empty)
        // instead of blocking the command for ever; reads are blocking again after.
        let opened = path == "-" ? dup(0) : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard opened >= 0 else {
            throw PincheckError(.unreadableFile, "cannot open the host list: \(String(cString: strerror(errno)))", source: path)
        }
        var status = stat()
        guard fstat(opened, &status) == 0 else {
            close(opened)
            throw PincheckError(.unreadableFile, "cannot read the host list: \(String(cString: strerror(errno)))", source: path)
        }
        if status.st_mode & S_IFMT == S_IFDIR {
            close(opened)
            throw PincheckError(.unreadableFile, "the host list is a directory", source: path)
        }
        // A named FIFO (not a pipe from `<(…)` or `-`, whose writer already exists) waits for its
        // writer no longer than the command's --timeout.
        var linkStatus = stat()
        if path != "-", lstat(path, &linkStatus) == 0, linkStatus.st_mode & S_IFMT == S_IFIFO {
            var poller = pollfd(fd: opened, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat { ready = poll(&poller, 1, Int32(clamping: Int(writerTimeout * 1000))) } while ready < 0 && errno == EINTR
            if ready == 0 {
                close(opened)
                throw PincheckError(.unreadableFile, "no one wrote to the FIFO within \(writerTimeout) s (--timeout)", source: path)
            }
        }
        let flags = fcntl(opened, F_GETFL)
        if flags >= 0 { _ = fcntl(opened, F_SETFL, flags & ~O_NONBLOCK) }
        descriptor = opened
        isRegularFile = status.st_mode & S_IFMT == S_IFREG
    }

    deinit { close(descriptor) }

    /// Why reading stopped early, if it did (a read error, or a list over ``maximumSize``).
    var error: PincheckError? { lock.withLock { failure } }

    /// For a regular file, how many hosts it lists (so the progress bar knows the total), read
    /// through the same descriptor and rewound; nil for anything that can be read only once.
    func countHostsAndRewind(where included: (Line) -> Bool = { _ in true }) -> Int? {
        guard isRegularFile else { return nil }
        var count = 0
        while let line = next() { if included(line) { count += 1 } }
        return lock.withLock {
            guard failure == nil, lseek(descriptor, 0, SEEK_SET) == 0 else { return nil }
            number = 0; buffer = []; atEnd = false; bytesRead = 0
            return count
        }
    }

    /// The next host line, without comments and surrounding blanks; `nil` at the end.
    func next() -> Line? {
        lock.withLock {
            while let (raw, tooLong) = readLine() {
                number += 1
                if tooLong {
                    return Line(
                        number: number, text: Self.excerpt(raw),
                        problem: PincheckError(
                            .tooLarge,
                            "line \(number) is longer than \(Self.maximumLineLength) bytes; a host list holds one HOST[:PORT] per line"))
                }
                if raw.contains(0) {
                    return Line(number: number, text: Self.excerpt(raw), problem: PincheckError(.invalidHost, "line \(number) holds a NUL byte"))
                }
                guard let decoded = String(validating: raw, as: UTF8.self) else {
                    return Line(number: number, text: Self.excerpt(raw), problem: PincheckError(.invalidHost, "line \(number) is not UTF-8"))
                }
                // A private key given by mistake: stop before any of its lines is echoed.
                if PEM.containsPrivateKey(raw) {
                    failure = PincheckError(
                        .unexpectedPEMBlock, "line \(number) begins a private key: this is not a host list (nothing of it is printed)", source: path)
                    atEnd = true
                    buffer = []
                    return nil
                }
                let text = Self.strip(number == 1 ? UnicodeText.droppingByteOrderMark(decoded) : decoded)
                // Key material without a header (a key's body, a key as one base64 line): refused
                // and summarised, never echoed.
                if PEM.looksLikeKeyMaterial(text) {
                    return Line(
                        number: number, text: "(\(raw.count) bytes not shown)",
                        problem: PincheckError(
                            .invalidHost,
                            "line \(number) looks like key material or base64, not a host name (\(raw.count) bytes; nothing of it is printed)"))
                }
                if !text.isEmpty { return Line(number: number, text: text, problem: nil) }
            }
            return nil
        }
    }

    /// One line (without its newline), or its first ``maximumLineLength`` bytes and `true` when
    /// it is longer (the rest is read and dropped). Called under `lock`.
    private func readLine() -> ([UInt8], Bool)? {
        var tooLong = false
        var kept: [UInt8] = []
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                if !tooLong { kept += buffer[..<newline] }
                buffer.removeSubrange(...newline)
                return (Array(kept.prefix(Self.maximumLineLength)), tooLong || kept.count > Self.maximumLineLength)
            }
            // No newline yet: keep at most one line's worth, and say so past it.
            if !tooLong {
                kept += buffer
                if kept.count > Self.maximumLineLength { tooLong = true; kept.removeSubrange(Self.maximumLineLength...) }
            }
            buffer.removeAll(keepingCapacity: true)
            if atEnd || failure != nil {
                return kept.isEmpty && !tooLong ? nil : (kept, tooLong)
            }
            fill()
        }
    }

    /// Reads the next chunk into `buffer`. Called under `lock`.
    private func fill() {
        guard bytesRead < Self.maximumSize else {
            failure = PincheckError(.tooLarge, "the host list is larger than \(Self.maximumSize >> 20) MiB", source: path)
            return
        }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                failure = PincheckError(.unreadableFile, "cannot read the host list: \(String(cString: strerror(errno)))", source: path)
            } else if count == 0 {
                atEnd = true
            } else {
                bytesRead += count
                buffer += chunk[..<count]
            }
            return
        }
    }

    /// A refused line as it may be shown: its first ``echoLength`` bytes, printable.
    static func excerpt(_ raw: [UInt8]) -> String {
        let head = String(decoding: raw.prefix(echoLength), as: UTF8.self)
        return Terminal.printable(head) + (raw.count > echoLength ? "…" : "")
    }

    static func strip(_ raw: String) -> String {
        let uncommented = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return uncommented.trimmingWhitespaceCharacters()
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
    private let resume: ResumeFile?
    private var listed = 0
    private var alreadyRecorded = 0
    private var resumeFailure: PincheckError?

    /// How many lines were recorded (hosts checked and lines refused).
    var count: Int { lock.withLock { done } }
    /// How many lines the list named, in this shard or not, checked or already recorded.
    var listedCount: Int { lock.withLock { listed } }
    /// Why a record could not be appended to the resume file, if one could not.
    var resumeError: PincheckError? { lock.withLock { resumeFailure } }

    init(console: Console, json: Bool, total: Int?, resume: ResumeFile? = nil) {
        self.console = console
        self.json = json
        self.total = total
        self.resume = resume
    }

    func listed(_ count: Int = 1) { lock.withLock { listed += count } }
    func skippedAsRecorded() { lock.withLock { alreadyRecorded += 1 } }

    /// Appends a record to the resume file; the first failure is kept and ends the scan's status.
    private func keep(_ line: String) {
        guard let resume, resumeFailure == nil else { return }
        do throws(PincheckError) { try resume.append(line) } catch { resumeFailure = error }
    }

    func record(_ item: ScanItem) {
        lock.withLock {
            done += 1
            clearProgress()
            switch item {
            case .checked(let outcome, let run):
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
                    if pinFailures.count < Self.listLimit {
                        let served = verdict.servedChain.first.map { "leaf \($0.publicKeyPin)" } ?? ""
                        let configured = pinFailure.evidence.pinsConfigured?.map(\.description).joined(separator: " ") ?? ""
                        pinFailures.append((outcome.target.description, "expected \(configured); served \(served)"))
                    }
                }
                if case .networkFailure(let error) = outcome.result, networkFailures.count < Self.listLimit {
                    networkFailures.append((outcome.target.description, error.code.description))
                }
                let line = outcome.json(run: run)
                keep(line)
                if json {
                    console.line(line)
                } else {
                    console.line(humanLine(outcome))
                }
            case .invalid(let line, let text, let code, let message):
                invalid += 1
                worst = .worst(worst, .badInput)
                let record = JSONLines.line(BadInputLine(target: text, line: line, code: code, message: message))
                keep(record)
                if json {
                    console.line(record)
                } else {
                    console.line(
                        "\(pad(console.paint("bad input", .red), 14))  line \(line): \(Terminal.printable(text)): \(code): \(Terminal.printable(message))"
                    )
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
                console.line(
                    JSONLines.line([
                        "summary": ScanSummary(
                            total: done, trusted: trusted, notTrusted: notTrusted, networkError: networkErrors,
                            badInput: invalid, pinFailures: pinFailureCount, exitCode: Int(worst.rawValue),
                            alreadyRecorded: resume == nil ? nil : alreadyRecorded)
                    ]))
                return worst
            }
            console.line()
            console.line(console.paint("Summary", .bold) + " — \(done) host\(done == 1 ? "" : "s") in \(Self.oneDecimal(seconds)) s")
            if let resume {
                console.line("  \(alreadyRecorded) already recorded in \(Terminal.printable(resume.path)) (not checked again)")
            }
            var table = Table()
            table.add(["  trusted", "\(trusted)"])
            table.add(["  not trusted", "\(notTrusted)"])
            table.add(["  network error", "\(networkErrors)"])
            if invalid > 0 { table.add(["  bad input", "\(invalid)"]) }
            table.render().forEach(console.line)
            Self.hostList("Pins that failed (\(pinFailureCount)):", pinFailures.map { [$0.target, $0.pins] }, of: pinFailureCount, console)
            Self.hostList("Network errors:", networkFailures.map { [$0.target, $0.code] }, of: networkErrors, console)
            console.line()
            console.line("Exit code \(worst.rawValue).")
            return worst
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

/// Scan's bounded pool of named worker threads, for the package's other program (pincheck-watch).
package enum WorkerPool {
    /// Runs `work` on `count` threads named `name` and returns when every one has returned.
    package static func run(_ count: Int, name: String, work: @escaping @Sendable () -> Void) {
        Scan.runWorkers(count, name: name, work: work)
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
