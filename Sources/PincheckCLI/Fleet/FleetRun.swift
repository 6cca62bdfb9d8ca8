import FoundationEssentials
import TrustEvaluator
import TrustEvaluatorCore
#if canImport(Glibc)
import Glibc
#endif

/// One run over a fleet of hosts: the machinery `scan`, `audit` and `pincheck-watch` share, so each
/// command only says what it checks and how it prints. It holds this job's shard of the hosts, the
/// records file (`--resume`, `watch --records`) with the first failure to append to it, the cap on
/// new handshakes (`--rate`), and the pool of worker threads the hosts are checked on.
package final class FleetRun: Sendable {
    /// What this job does with a host.
    package enum Decision: Sendable { case check, otherShard, recorded }

    /// The share of the hosts this job checks; nil: every host.
    let shard: Shard?
    /// The records file, when there is one.
    package let records: ResumeFile?
    private let pacer: HandshakePacer?
    /// The first record that could not be appended: no record is written after it.
    private let recordFailure = Locked<PincheckError?>(nil)

    init(shard: Shard?, records: ResumeFile?, rate: Double?) {
        self.shard = shard
        self.records = records
        self.pacer = rate.map(HandshakePacer.init(perSecond:))
    }

    /// A run over every host with no cap on handshakes, keeping `records` (`pincheck-watch`).
    package convenience init(records: ResumeFile?) { self.init(shard: nil, records: records, rate: nil) }

    /// The run `options` ask for, of `command` (`scan`, `audit`), whose records are keyed by `key`;
    /// says on standard error when a half-written last record was cut off (its host is `redone`).
    convenience init(_ options: FleetOptions, command: String, key: @escaping ([UInt8]) -> String?, redone: String) throws(PincheckError) {
        let records = try options.resumeFile(command: command, key: key)
        if let records, records.cutBytes > 0 {
            Console.standardError.line(
                "pincheck: note: cut a half-written last record (\(records.cutBytes) bytes) off \(records.path); its host is \(redone) again")
        }
        self.init(shard: try options.resolvedShard(), records: records, rate: options.rate)
    }

    /// Whether this job checks the host whose record key is `key`.
    func decide(_ key: String) -> Decision {
        if let shard, !shard.contains(key) { return .otherShard }
        if let records, records.recorded.contains(key) { return .recorded }
        return .check
    }

    /// Whether a host with this key might be skipped at all (no shard and no records: never).
    var selects: Bool { shard != nil || records != nil }

    /// Appends one record line to the records file, if there is one. The first failure is kept
    /// (``recordError``) and nothing is appended after it.
    package func keep(_ record: String) {
        guard let records else { return }
        recordFailure.withLock { failure in
            guard failure == nil else { return }
            do throws(PincheckError) { try records.append(record) } catch { failure = error }
        }
    }

    /// Why a record could not be appended, if one could not (the command ends with it).
    package var recordError: PincheckError? { recordFailure.withLock { $0 } }

    /// Blocks until the next handshake may start (`--rate`); at once without a cap.
    package func waitForSlot() { pacer?.waitForSlot() }

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
    package static func runWorkers(
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

/// A cap on how many handshakes start per second, over every worker: each start takes the next
/// slot, 1/rate seconds after the previous one, and waits for it.
final class HandshakePacer: Sendable {
    private let interval: Duration
    /// The next free slot.
    private let next = Locked<ContinuousClock.Instant?>(nil)

    init(perSecond rate: Double) {
        interval = .nanoseconds(Int64((1e9 / rate).rounded()))
    }

    /// Blocks until this caller's slot.
    func waitForSlot() {
        let now = ContinuousClock.now
        let slot = next.withLock { next in
            let slot = max(now, next ?? now)
            next = slot + interval
            return slot
        }
        let wait = slot - now
        guard wait > .zero else { return }
        let (seconds, attoseconds) = wait.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
