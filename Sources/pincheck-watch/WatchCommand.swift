import ArgumentParser
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import Logging
import PincheckCLI
import ServiceLifecycle
import TrustEvaluator

/// `pincheck watch CONFIG` (this program, `pincheck-watch`, which `pincheck watch` runs): the
/// audit, again every interval, with Prometheus metrics on /metrics.
struct Watch: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "pincheck watch",
        abstract: "Re-check a pinning configuration's hosts on an interval and serve Prometheus metrics on /metrics.",
        discussion: """
            The hosts are those audit checks (the configuration's exact names and --hosts). Each round \
            checks every host, --concurrency at a time, then waits --interval. Per host, /metrics says \
            the days until the leaf expires, the days until the last certificate a pin matches expires, \
            whether the pins match, CT compliance, revocation status, and the last check's time and \
            outcome (docs/watch.md, with alerting rules). --records FILE appends each check's audit \
            record (JSON Lines, with checkedAt).
            SIGTERM or SIGINT: no new host is started, the hosts in flight finish and are recorded, \
            /metrics closes, exit 0. SIGHUP is ignored (logged): restart to read a changed configuration. With --rounds N it stops by itself after N rounds; the exit code \
            is then the last round's worst, as audit's: 0 allowed · 1 refused · 3 network or handshake \
            failure · 2 bad input (also a --listen address that cannot be bound).
            """)

    @OptionGroup var app: AppConfigurationOptions
    @OptionGroup var revocation: RevocationOptions

    @OptionGroup var audited: AuditedHostsOptions

    @Option(help: ArgumentHelp("Seconds from the end of one round to the start of the next.", valueName: "seconds"))
    var interval: Double = 300

    @Option(
        help: ArgumentHelp(
            "Where /metrics is served, HOST:PORT ([IPV6]:PORT); port 0 picks a free one (printed on standard error).",
            valueName: "address"))
    var listen: String = "127.0.0.1:9464"

    @Option(help: ArgumentHelp("Append each check's record (audit's JSON, with checkedAt) to FILE.", valueName: "file"))
    var records: String?

    @Option(help: ArgumentHelp("Stop after N rounds (default: run until SIGTERM or SIGINT).", valueName: "n"))
    var rounds: Int?

    @Flag(
        help: ArgumentHelp(
            "Also serve 0.9's day gauges (pincheck_watch_leaf_expiry_days, pincheck_watch_pin_expiry_days) beside the seconds, for dashboards not yet moved; deprecated."
        ))
    var daysGauges = false

    func validate() throws {
        guard interval >= 1, interval <= 7 * 86_400 else { throw ValidationError("--interval must be between 1 second and 7 days") }
        if let rounds { guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") } }
        _ = try Self.listenAddress(listen)
    }

    /// `--listen`'s host and port.
    static func listenAddress(_ text: String) throws -> (host: String, port: Int) {
        var host = Substring(text)
        var port: Substring = ""
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            port = host[close...].dropFirst().drop(while: { $0 == ":" })
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty, let number = Int(port), (0...65_535).contains(number) else {
            throw ValidationError("--listen must be HOST:PORT or [IPV6]:PORT (port 0–65535), not \(text)")
        }
        return (String(host), number)
    }

    /// SIGHUP ignored, with a log line each time it comes.
    static func ignoreHangUp(logger: Logger) -> any DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler {
            logger.notice("SIGHUP ignored: the configuration is read at start; restart pincheck-watch to read a changed one")
        }
        source.resume()
        return source
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let configuration = try app.load()
        let plan = try audited.plan(configuration)
        guard !plan.entries.isEmpty else {
            throw PincheckError(
                .emptyInput, "nothing to watch: the configuration pins no exact host name, and --hosts names none", source: app.config)
        }
        var logger = Logger(label: "pincheck.watch") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .notice
        for pattern in plan.unaudited {
            logger.notice("not watched: no host name given for this pattern (--hosts)", metadata: ["pattern": "\(pattern)"])
        }
        // A log of every check, not a resume file: records of an earlier configuration stay.
        let records = try records.map { path throws(PincheckError) in
            try ResumeFile(
                path: path, run: RunFingerprint(command: "watch", arguments: Invocation.arguments), sameRunOnly: false,
                key: AuditPlan.Entry.recordKey)
        }
        let metrics = WatchMetrics(daysGauges: daysGauges)
        let (host, port) = try Self.listenAddress(listen)
        let server: MetricsServer
        do {
            server = try MetricsServer.bind(host: host, port: port, respond: MetricsServer.routes(metrics: metrics))
        } catch {
            throw PincheckError(.addressUnavailable, "cannot serve /metrics on \(listen): \(error)")
        }
        // SIGHUP (a terminal closed, or a reload asked for) would end the process by default: the
        // configuration is read once, so it is ignored and said.
        let hangUp = Self.ignoreHangUp(logger: logger)
        defer { hangUp.cancel() }
        let checker = WatchChecker(
            settings: .init(
                entries: plan.entries, concurrency: audited.concurrency, interval: .milliseconds(Int64(interval * 1000)),
                rounds: rounds, fixedTime: app.fixedTime, json: app.json),
            manager: revocation.apply(to: configuration.trustManager, default: .crl),
            fetcher: try revocation.fetcher(timeout: app.timeout), probe: app.probe, metrics: metrics,
            records: records, console: console, logger: logger)
        // Standard error, so that standard output is the records alone with --json.
        Console.standardError.line(
            "pincheck watch: \(plan.entries.count) host\(plan.entries.count == 1 ? "" : "s") every \(interval == interval.rounded() ? "\(Int(interval))" : "\(interval)") s; metrics at \(server.url)"
        )
        try Self.run(server: server, checker: checker, logger: logger)
        Console.standardError.line("pincheck watch: stopped after \(checker.checks) check\(checker.checks == 1 ? "" : "s")")
        return rounds == nil ? .trusted : checker.lastRoundStatus
    }

    /// Serves /metrics and runs the checks until the checker ends (its rounds done) or SIGTERM or
    /// SIGINT asks the group to stop; a service's failure is thrown.
    private static func run(server: MetricsServer, checker: WatchChecker, logger: Logger) throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: server),
                    // The checker ending (its rounds done, or shut down) ends the group.
                    .init(service: checker, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        let failure = Locked<(any Error)?>(nil)
        let finished = Latch()
        Task.detached {
            do { try await group.run() } catch { failure.withLock { $0 = error } }
            finished.signal()
        }
        finished.wait()
        if let error = failure.withLock({ $0 }) {
            if let error = error as? PincheckError { throw error }
            if let error = checker.recordError { throw error }
            throw PincheckError(.network, "the watch stopped: \(error)")
        }
    }
}
