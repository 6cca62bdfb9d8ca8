import ArgumentParser
import FoundationEssentials
import PincheckOpenSSL
import TrustEvaluator
#if canImport(Glibc)
import Glibc
#endif

/// What lets `scan` and `audit` run as many independent jobs of a batch engine (Kubernetes
/// Indexed Jobs, AWS Batch array jobs, GNU parallel): a stable shard of the host list, a resume
/// file that a killed job is started again with, and a cap on new handshakes per second.
struct FleetOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Check only shard K of N (0 ≤ K < N): the hosts whose SHA-256 of HOST:PORT is K modulo N. N jobs, K = 0…N-1, check every host exactly once, on any machine.",
        valueName: "K/N"))
    var shard: Shard?

    @Flag(help: ArgumentHelp(
        "Take the shard from the environment: K from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or AWS_BATCH_JOB_ARRAY_INDEX, N from PINCHECK_SHARD_COUNT."))
    var shardFromEnv = false

    @Option(help: ArgumentHelp(
        "Append each host's JSON record to this file, and skip the hosts it already records: a killed run started again with the same file checks only the rest. A half-written last line is cut off, never trusted.",
        valueName: "file"))
    var resume: String?

    @Option(help: ArgumentHelp("Start at most this many handshakes per second, over all workers (default: no cap).", valueName: "n"))
    var rate: Double?

    func validate() throws {
        if shard != nil && shardFromEnv { throw ValidationError("give --shard or --shard-from-env, not both") }
        if let rate, !(rate > 0 && rate <= 100_000) { throw ValidationError("--rate must be more than 0 and at most 100000 handshakes per second") }
    }

    /// The shard this run checks: `--shard`, or the environment's with `--shard-from-env`, or nil (every host).
    /// - Throws: ``PincheckError`` `policy.invalid` when `--shard-from-env` finds no index or count, or a bad one.
    func resolvedShard(environment: [String: String] = ProcessInfo.processInfo.environment) throws(PincheckError) -> Shard? {
        guard shardFromEnv else { return shard }
        let indexVariables = ["JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"]
        guard let (name, indexText) = indexVariables.lazy.compactMap({ name in environment[name].map { (name, $0) } }).first else {
            throw PincheckError(.invalidPolicy, "--shard-from-env: neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor AWS_BATCH_JOB_ARRAY_INDEX is set")
        }
        guard let countText = environment["PINCHECK_SHARD_COUNT"] else {
            throw PincheckError(.invalidPolicy, "--shard-from-env: PINCHECK_SHARD_COUNT is not set (the job's completions or array size)")
        }
        guard let index = Int(indexText), let count = Int(countText), let shard = Shard(index: index, count: count) else {
            throw PincheckError(.invalidPolicy, "--shard-from-env: \(name)=\(indexText) and PINCHECK_SHARD_COUNT=\(countText) are not a shard K of N with 0 ≤ K < N ≤ \(Shard.maximumCount)")
        }
        return shard
    }
}

/// Shard K of N: the hosts whose key hashes to K modulo N. The hash is SHA-256, so the split is
/// the same on every machine, run and build (Swift's own `Hasher` is seeded per process).
struct Shard: ExpressibleByArgument, Equatable, Sendable {
    let index: Int
    let count: Int

    static let maximumCount = 1_000_000

    init?(index: Int, count: Int) {
        guard count >= 1, count <= Self.maximumCount, index >= 0, index < count else { return nil }
        self.index = index
        self.count = count
    }

    init?(argument: String) {
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    /// Whether the host with this key (`HOST:PORT`, or a refused line's text) belongs to this shard.
    func contains(_ key: String) -> Bool {
        Self.shard(of: key, count: count) == index
    }

    /// The shard of `key` among `count`: the first 8 bytes of its SHA-256, big-endian, modulo `count`.
    static func shard(of key: String, count: Int) -> Int {
        let digest = Digest.sha256(Array(key.utf8))
        let word = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(word % UInt64(count))
    }
}

/// The JSON-lines file of `--resume`: the keys of the records already in it, and the records this
/// run appends. A last line without its newline (a job killed while writing it) is cut off before
/// anything is appended; any other line that is not a record refuses the file.
package final class ResumeFile: @unchecked Sendable {
    // @unchecked Sendable: `descriptor` is written once; appends are single write(2) calls under `lock`.
    private let lock = Lock()
    private let descriptor: Int32
    let path: String
    /// The keys of the records the file held when it was opened.
    let recorded: Set<String>
    /// Bytes of a half-written last line that were cut off.
    let cutBytes: Int

    /// The longest record line read back (a chain of many large certificates fits).
    static let maximumLineLength = 16 << 20

    /// Opens (or creates) `path`.
    /// - Parameter key: A record line's key (`HOST:PORT` for scan), or nil when the line is not a record.
    /// - Throws: ``PincheckError`` `input.unreadable-file` when the file cannot be opened or holds a
    ///   line that is not a record, `input.too-large` for a line over ``maximumLineLength``.
    package init(path: String, key: ([UInt8]) -> String?) throws(PincheckError) {
        self.path = path
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw PincheckError(.unreadableFile, "cannot open the resume file: \(String(cString: strerror(errno)))", source: path)
        }
        var status = stat()
        guard fstat(opened, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(opened)
            throw PincheckError(.unreadableFile, "the resume file is not a regular file", source: path)
        }
        var keys = Set<String>()
        var pending: [UInt8] = []
        var completeBytes = 0
        var lineNumber = 0
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(opened, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                close(opened)
                throw PincheckError(.unreadableFile, "cannot read the resume file: \(String(cString: strerror(errno)))", source: path)
            }
            if count == 0 { break }
            var start = 0
            while let newline = chunk[start..<count].firstIndex(of: 0x0A) {
                pending += chunk[start..<newline]
                lineNumber += 1
                if !pending.isEmpty {
                    guard let recordKey = key(pending) else {
                        close(opened)
                        throw PincheckError(.unreadableFile, "line \(lineNumber) of the resume file is not a record of this command: give a file that only this command writes", source: path)
                    }
                    keys.insert(recordKey)
                }
                completeBytes += pending.count + 1
                pending.removeAll(keepingCapacity: true)
                start = newline + 1
            }
            pending += chunk[start..<count]
            guard pending.count <= Self.maximumLineLength else {
                close(opened)
                throw PincheckError(.tooLarge, "line \(lineNumber + 1) of the resume file is longer than \(Self.maximumLineLength >> 20) MiB", source: path)
            }
        }
        // Whatever follows the last newline was being written when the job stopped: cut off.
        if !pending.isEmpty {
            guard ftruncate(opened, off_t(completeBytes)) == 0 else {
                close(opened)
                throw PincheckError(.unreadableFile, "cannot cut the half-written last line off the resume file: \(String(cString: strerror(errno)))", source: path)
            }
        }
        guard lseek(opened, 0, SEEK_END) >= 0 else {
            close(opened)
            throw PincheckError(.unreadableFile, "cannot append to the resume file: \(String(cString: strerror(errno)))", source: path)
        }
        descriptor = opened
        recorded = keys
        cutBytes = pending.count
    }

    deinit { close(descriptor) }

    /// Appends one record line (a newline is added) in one write: a job killed mid-record leaves at
    /// most that line half-written, which the next run cuts off.
    /// - Throws: ``PincheckError`` `input.unreadable-file` when the write fails (a full disk).
    package func append(_ line: String) throws(PincheckError) {
        let bytes = Array((line + "\n").utf8)
        let failure: Int32? = lock.withLock {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return errno }
                offset += written
            }
            return nil
        }
        if let failure {
            throw PincheckError(.unreadableFile, "cannot write to the resume file: \(String(cString: strerror(failure)))", source: path)
        }
    }
}

/// A cap on how many handshakes start per second, over every worker: each start takes the next
/// slot, 1/rate seconds after the previous one, and waits for it.
final class HandshakePacer: @unchecked Sendable {
    // @unchecked Sendable: `next` is only touched under `lock`.
    private let lock = Lock()
    private let interval: Duration
    private var next: ContinuousClock.Instant?

    init(perSecond rate: Double) {
        interval = .nanoseconds(Int64((1e9 / rate).rounded()))
    }

    /// Blocks until this caller's slot.
    func waitForSlot() {
        let now = ContinuousClock.now
        let slot: ContinuousClock.Instant = lock.withLock {
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
