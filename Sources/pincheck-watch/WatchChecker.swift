import FoundationEssentials
import PincheckCLI
import Logging
import PincheckTLS
import ServiceLifecycle
import ServerTrust
import TrustEvaluator

/// The service that re-checks the hosts: one round (every host, `concurrency` at a time, on
/// worker threads, as `audit` does), then a pause of one interval, until the group shuts down or
/// the rounds asked for are done.
///
/// Graceful shutdown (SIGTERM, SIGINT) starts no new host; the hosts in flight finish (each is
/// bounded by `--timeout` and the CRL fetches' own limits), their records and metrics are kept,
/// then the service returns. Nothing half done is written.
final class WatchChecker: Service, Sendable {
    struct Settings {
        var entries: [AuditPlan.Entry]
        var concurrency: Int
        var interval: Duration
        var rounds: Int?
        /// The evaluation time; nil: the time of each check.
        var fixedTime: Date?
        var json: Bool
    }

    private let settings: Settings
    private let manager: TrustManager
    private let fetcher: RevocationListFetcher
    private let probe: TLSProbe
    private let metrics: WatchMetrics
    /// The hosts' records (`--records`), and the pool they are checked on.
    private let run: FleetRun
    private let console: Console
    private let logger: Logger
    private let state = Locked(State())

    private struct State {
        var stopping = false
        var next = 0
        var worst = ExitStatus.trusted
        var checks = 0
        /// Each host's last outcome (by audit's record key), so the log says changes only.
        var outcomes: [String: String] = [:]
    }

    init(
        settings: Settings, manager: TrustManager, fetcher: RevocationListFetcher, probe: TLSProbe, metrics: WatchMetrics,
        records: ResumeFile?, console: Console, logger: Logger
    ) {
        self.settings = settings
        self.manager = manager
        self.fetcher = fetcher
        self.probe = probe
        self.metrics = metrics
        self.run = FleetRun(records: records)
        self.console = console
        self.logger = logger
    }

    /// The worst status of the last round (0 when every host was allowed).
    var lastRoundStatus: ExitStatus { state.withLock { $0.worst } }
    /// Why a record could not be appended (the watch then stops).
    var recordError: PincheckError? { run.recordError }
    /// Hosts checked since the start.
    var checks: Int { state.withLock { $0.checks } }

    func run() async throws {
        var round = 0
        await withGracefulShutdownHandler {
            // Cancellation (the group cancelled rather than shut down) ends it too.
            while !state.withLock({ $0.stopping }), !Task.isCancelled {
                await runRound()
                round += 1
                if state.withLock({ $0.stopping }) || run.recordError != nil { break }
                if let rounds = settings.rounds, round >= rounds { break }
                // The pause ends early when the group shuts down.
                try? await cancelWhenGracefulShutdown { [interval = settings.interval] in try await Task.sleep(for: interval) }
            }
        } onGracefulShutdown: { [state] in
            state.withLock { $0.stopping = true }
        }
        if let error = recordError { throw error }
    }

    /// One round on worker threads; the task waits without holding a thread of the pool.
    private func runRound() async {
        state.withLock {
            $0.next = 0; $0.worst = .trusted
        }
        let count = min(settings.concurrency, settings.entries.count)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let started = DetachedThread.start(name: "pincheck-watch") { [self] in
                FleetRun.runWorkers(count, name: "pincheck-watch") { [self] in
                    while let entry = nextEntry() { check(entry) }
                }
                done.resume()
            }
            if !started {
                logger.error("no thread could be started for a round; it is skipped")
                done.resume()
            }
        }
        metrics.roundFinished()
    }

    private func nextEntry() -> AuditPlan.Entry? {
        guard run.recordError == nil else { return nil }
        return state.withLock { state in
            guard !state.stopping, state.next < settings.entries.count else { return nil }
            defer { state.next += 1 }
            return settings.entries[state.next]
        }
    }

    private func check(_ entry: AuditPlan.Entry) {
        let checkedAt = Date()
        let clock = ContinuousClock()
        let started = clock.now
        let result: AuditResult
        do throws(PincheckError) {
            result = try AuditResult.run(entry, manager: manager, fetcher: fetcher, probe: probe, at: settings.fixedTime ?? checkedAt)
        } catch {
            // The chain cannot be judged at all: counted as refused, said once per check.
            logger.warning("cannot judge the chain", metadata: ["host": "\(entry.name)", "code": "\(error.code)", "error": "\(error.description)"])
            state.withLock {
                $0.worst = ExitStatus.worst($0.worst, .badInput); $0.checks += 1
            }
            return
        }
        let elapsed = clock.now - started
        metrics.record(result, checkedAt: checkedAt, duration: elapsed)
        // audit's record, with the time of the check for a reader of the records later.
        var object = result.jsonObject
        object["checkedAt"] = .string(Format.timestamp(checkedAt))
        let line = JSONLines.line(object)
        state.withLock { state in
            state.worst = ExitStatus.worst(state.worst, result.status)
            state.checks += 1
            run.keep(line)
            if settings.json { console.line(line) }
        }
        // One log line when a host's outcome changes (a refusal every round would bury the news).
        let outcome: String =
            switch result.outcome {
            case .networkFailure(let error): "not reached (\(error.code))"
            case .evaluated(let verdict) where Disposition(serverTrust: verdict).allowsConnection: "allowed"
            case .evaluated(let verdict): "refused (\(verdict.failures.map { "\($0.code)" }.joined(separator: ",")))"
            }
        let previous = state.withLock { state in
            defer { state.outcomes[entry.key] = outcome }
            return state.outcomes[entry.key]
        }
        if outcome != previous, previous != nil || outcome != "allowed" {
            logger.notice(
                "\(outcome)", metadata: ["host": "\(entry.name)", "address": "\(entry.address)", "was": "\(previous ?? "not checked yet")"])
        }
    }
}
