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
    @Option(
        help: ArgumentHelp(
            "Check only shard K of N (0 ≤ K < N): the hosts whose SHA-256 of HOST:PORT is K modulo N. N jobs, K = 0…N-1, check every host exactly once, on any machine.",
            valueName: "K/N"))
    var shard: Shard?

    @Flag(
        help: ArgumentHelp(
            "Take the shard from the environment: K from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or AWS_BATCH_JOB_ARRAY_INDEX, N from PINCHECK_SHARD_COUNT."
        ))
    var shardFromEnv = false

    @Option(
        help: ArgumentHelp(
            "Append each host's JSON record to this file, and skip the hosts it already records: a killed run started again with the same file and options checks only the rest. A half-written last record is cut off, never trusted; a file this command reads, another job's file (locked) or records made with other options are refused.",
            valueName: "file"))
    var resume: String?

    @Flag(help: ArgumentHelp("Wait for another job's lock on the --resume file instead of refusing it."))
    var waitLock = false

    @Option(help: ArgumentHelp("Start at most this many handshakes per second, over all workers (default: no cap).", valueName: "n"))
    var rate: Double?

    func validate() throws {
        if shard != nil && shardFromEnv { throw ValidationError("give --shard or --shard-from-env, not both") }
        if let rate, !(rate >= Self.minimumRate && rate <= 100_000) {
            throw ValidationError("--rate must be at least 0.0167 (one handshake a minute) and at most 100000 handshakes per second")
        }
        if waitLock && resume == nil { throw ValidationError("--wait-lock waits for the --resume file's lock: give --resume") }
    }

    /// The slowest --rate: one handshake a minute (a slower one would look like a hang).
    static let minimumRate = 1.0 / 60

    /// The `--resume` file, opened for `command` (its run fingerprint from the invocation).
    func resumeFile(command: String, key: ([UInt8]) -> String?) throws(PincheckError) -> ResumeFile? {
        guard let resume else { return nil }
        return try ResumeFile(
            path: resume, run: RunFingerprint(command: command, arguments: Invocation.arguments),
            waitForLock: waitLock, key: key)
    }

    /// The shard this run checks: `--shard`, or the environment's with `--shard-from-env`, or nil (every host).
    /// - Throws: ``PincheckError`` `policy.invalid` when `--shard-from-env` finds no index or count, or a bad one.
    func resolvedShard(environment: [String: String] = ProcessInfo.processInfo.environment) throws(PincheckError) -> Shard? {
        guard shardFromEnv else { return shard }
        let indexVariables = ["JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"]
        let present = indexVariables.compactMap { name in environment[name].map { (name, $0) } }
        guard present.count <= 1 else {
            throw PincheckError(
                .invalidPolicy,
                "--shard-from-env: both JOB_COMPLETION_INDEX and AWS_BATCH_JOB_ARRAY_INDEX are set (\(present.map { "\($0.0)=\($0.1)" }.joined(separator: ", "))): unset the one that is not this job's index"
            )
        }
        guard let (name, indexText) = present.first else {
            throw PincheckError(
                .invalidPolicy, "--shard-from-env: neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor AWS_BATCH_JOB_ARRAY_INDEX is set")
        }
        guard let countText = environment["PINCHECK_SHARD_COUNT"] else {
            throw PincheckError(.invalidPolicy, "--shard-from-env: PINCHECK_SHARD_COUNT is not set (the job's completions or array size)")
        }
        guard let index = Int(indexText), let count = Int(countText), let shard = Shard(index: index, count: count) else {
            throw PincheckError(
                .invalidPolicy,
                "--shard-from-env: \(name)=\(indexText) and PINCHECK_SHARD_COUNT=\(countText) are not a shard K of N with 0 ≤ K < N ≤ \(Shard.maximumCount)"
            )
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
