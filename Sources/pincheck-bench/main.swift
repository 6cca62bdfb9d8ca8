// pincheck-bench: Pincheck's evaluation against OpenSSL called directly from C, in one run, on the
// same chains (scripts/bench.sh builds it in release). Every configuration is checked to give the
// expected verdict before it is timed. Ratios are what to read: absolute times vary by machine.
//
//   pincheck-bench [--certificates DIR] [--pincheck PATH] [--quick]
import Foundation
import PincheckBenchBaseline
import PincheckOpenSSL
import TrustEvaluator

// MARK: Options

struct Options {
    var certificatesDirectory = "Certificates"
    var pincheckPath: String? = nil
    var quick = false
    /// Runs one configuration of the RSA chain for 10 s and exits (for `perf record`).
    var profile: String? = nil
    /// With `--profile`: this many evaluations instead of 10 s, so two profiles compare sample for sample.
    var profileIterations: Int? = nil
    /// A DER CRL of many entries (scripts/bench.sh makes one of 100,000 with `openssl ca`).
    var bigCRL: String? = nil
    /// The third-party data (a real chain with SCTs, the CT log lists) for the CT measurement.
    var shared = ProcessInfo.processInfo.environment["PINCHECK_SHARED"] ?? "../shared"

    static func parse() -> Options {
        var options = Options()
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--certificates": options.certificatesDirectory = arguments.next() ?? options.certificatesDirectory
            case "--pincheck": options.pincheckPath = arguments.next()
            case "--quick": options.quick = true
            case "--profile": options.profile = arguments.next()
            case "--profile-iterations": options.profileIterations = arguments.next().flatMap { Int($0) }
            case "--big-crl": options.bigCRL = arguments.next()
            case "--shared": options.shared = arguments.next() ?? options.shared
            default:
                FileHandle.standardError.write(
                    Data(
                        "usage: pincheck-bench [--certificates DIR] [--pincheck PATH] [--big-crl FILE] [--shared DIR] [--quick] [--profile NAME [--profile-iterations N]]\n"
                            .utf8))
                exit(2)
            }
        }
        return options
    }
}
let options = Options.parse()
let certificatesDirectory = options.certificatesDirectory
let pincheckPath = options.pincheckPath
let quick = options.quick
/// Rounds per measurement (the best one counts) and the target duration of a round.
let rounds = quick ? 3 : 21
let roundSeconds = quick ? 0.01 : 0.05

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("pincheck-bench: \(message)\n".utf8))
    exit(1)
}

// MARK: Chains

/// 2030-06-01T00:00:00Z: inside every test certificate's validity.
let verificationTime = Date(timeIntervalSince1970: 1_906_502_400)
let host = "www.example.test"

struct Chain {
    let name: String
    let description: String
    let served: [Certificate]
    let anchor: Certificate
    var servedDER: [[UInt8]] { served.map(\.derBytes) }
    var pemFile: String
    var intermediatesFile: String
    var leafFile: String
    var anchorFile: String
}

func load(_ name: String) -> Certificate {
    let path = "\(certificatesDirectory)/\(name).pem"
    do { return try Certificate.load(contentsOf: path)[0] } catch { fail("cannot read \(path): \(error)") }
}

func chain(_ name: String, _ description: String, leaf: String, intermediates: [String], anchor: String, bundle: String) -> Chain {
    let dir = certificatesDirectory
    let intermediatesFile = NSTemporaryDirectory() + "pincheck-bench-\(name)-intermediates.pem"
    let text = intermediates.map { load($0).pemEncoded }.joined()
    _ = FileManager.default.createFile(atPath: intermediatesFile, contents: Data(text.utf8))
    return Chain(
        name: name, description: description, served: [load(leaf)] + intermediates.map(load), anchor: load(anchor),
        pemFile: "\(dir)/chains/\(bundle).pem", intermediatesFile: intermediatesFile,
        leafFile: "\(dir)/\(leaf).pem", anchorFile: "\(dir)/\(anchor).pem")
}

let chains = [
    chain(
        "rsa-3", "RSA-4096 root → RSA-2048 intermediate → RSA-2048 leaf",
        leaf: "rsa-leaf", intermediates: ["rsa-intermediate"], anchor: "rsa-root", bundle: "rsa-good"),
    chain(
        "ecdsa-3", "P-384 root → P-256 intermediate → P-256 leaf",
        leaf: "ec-leaf", intermediates: ["ec-intermediate"], anchor: "ec-root", bundle: "ec-good"),
    chain(
        "rsa-4", "RSA-4096 root → 2 RSA-2048 intermediates → RSA-2048 leaf",
        leaf: "rsa-deep-leaf", intermediates: ["rsa-deep-intermediate-2", "rsa-deep-intermediate-1"], anchor: "rsa-root", bundle: "rsa-deep"),
]

// MARK: Measurement

func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Microseconds per call of each body: the best of `rounds` rounds. Every round runs every body
/// in turn, so a noisy moment slows all of them alike instead of one configuration.
func measure(_ bodies: [() -> Void]) -> [Double] {
    let batches = bodies.map { body in
        let start = now()
        body()
        return max(1, Int(roundSeconds * 1e9 / Double(max(1, now() - start))))
    }
    var best = [Double](repeating: .infinity, count: bodies.count)
    for _ in 0..<rounds {
        for (index, body) in bodies.enumerated() {
            let begin = now()
            for _ in 0..<batches[index] { body() }
            best[index] = min(best[index], Double(now() - begin) / Double(batches[index]) / 1000)
        }
    }
    return best
}

/// Allocations (malloc, calloc, realloc, aligned) per call, over 200 calls after a warm-up.
func allocations(_ body: () -> Void) -> Double {
    for _ in 0..<20 { body() }
    let before = pcb_allocations()
    pcb_count_allocations(1)
    for _ in 0..<200 { body() }
    pcb_count_allocations(0)
    return Double(pcb_allocations() - before) / 200
}

/// Evaluations per second with `threads` threads calling `body` for the same wall time.
func throughput(threads: Int, _ body: @escaping @Sendable () -> Void) -> Double {
    let duration = quick ? 0.2 : 1.5
    let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
    counts.initialize(repeating: 0)
    defer { counts.deallocate() }
    nonisolated(unsafe) let shared = counts
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    let deadline = UInt64(duration * 1e9)
    for index in 0..<threads {
        group.enter()
        let thread = Thread {
            start.wait()
            let begin = now()
            var done = 0
            while now() - begin < deadline {
                for _ in 0..<16 { body() }
                done += 16
            }
            shared[index] = done
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    let begin = now()
    for _ in 0..<threads { start.signal() }
    group.wait()
    let elapsed = Double(now() - begin) / 1e9
    return Double(counts.reduce(0, +)) / elapsed
}

func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}

func format(_ value: Double, _ digits: Int = 2) -> String {
    let scale = pow(10, Double(digits))
    let rounded = (value * scale).rounded() / scale
    var text = "\(rounded)"
    let decimals = text.split(separator: ".").dropFirst().first?.count ?? 0
    if decimals < digits { text += (decimals == 0 ? "." : "") + String(repeating: "0", count: digits - decimals) }
    return text
}

func column(_ text: String, _ width: Int, right: Bool = false) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return right ? padding + text : text + padding
}

// MARK: The C baseline

/// OpenSSL called directly from C (Sources/PincheckBenchBaseline): one anchor store, the served
/// DER, and the same chain parsed once. Read-only after init, so threads may share it.
final class CBaseline: @unchecked Sendable {
    private let store: OpaquePointer
    private let parsed: OpaquePointer
    private let pointers: [UnsafePointer<UInt8>?]
    private let lengths: [Int]
    private let time = Int64(verificationTime.timeIntervalSince1970)

    init(_ chain: Chain) {
        guard let store = chain.anchor.derBytes.withUnsafeBufferPointer({ pcb_store_new($0.baseAddress, $0.count) }) else {
            fail("\(chain.name): the C baseline cannot load the anchor")
        }
        self.store = store
        let der = chain.servedDER
        let lengths = der.map(\.count)
        let pointers = der.map { bytes -> UnsafePointer<UInt8>? in
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
            copy.initialize(from: bytes, count: bytes.count)
            return UnsafePointer(copy)
        }
        self.lengths = lengths
        self.pointers = pointers
        guard
            let parsed = pointers.withUnsafeBufferPointer({ served in
                lengths.withUnsafeBufferPointer { pcb_chain_new(served.baseAddress, $0.baseAddress, served.count) }
            })
        else { fail("\(chain.name): the C baseline cannot parse the chain") }
        self.parsed = parsed
        guard verify() == 1 else { fail("\(chain.name): the C baseline does not verify the chain") }
        guard verifyParsed() == 1 else { fail("\(chain.name): the C baseline does not verify the parsed chain") }
    }

    deinit {
        pcb_chain_free(parsed)
        pcb_store_free(store)
        pointers.forEach { UnsafeMutablePointer(mutating: $0)?.deallocate() }
    }

    /// Parses the served DER and verifies: what a careful C client does per handshake.
    func verify() -> Int32 {
        pointers.withUnsafeBufferPointer { served in
            lengths.withUnsafeBufferPointer { pcb_verify(store, served.baseAddress, $0.baseAddress, served.count, host, time) }
        }
    }

    /// Verifies the chain parsed once.
    func verifyParsed() -> Int32 { pcb_verify_parsed(store, parsed, host, time) }
}

// MARK: The configurations

/// A pin that matches no certificate: the "backup pin" of the two-pin public-key policy.
let backupPin = try! PublicKeyPin("sha256/" + Data(repeating: 0x42, count: 32).base64EncodedString())

func policy(_ chain: Chain, _ mode: String) -> TrustPolicy {
    let anchors = try! TrustAnchors(certificates: [chain.anchor])
    let intermediate = chain.served[1]
    switch mode {
    case "none":
        return TrustPolicy(pinning: .none, anchors: anchors)
    case "public-key":
        return TrustPolicy(pinning: .publicKeys(try! PinnedPublicKeys(pins: [intermediate.publicKeyPin, backupPin])), anchors: anchors)
    case "certificate":
        return TrustPolicy(pinning: .certificates(try! PinnedCertificates([intermediate])), anchors: anchors)
    default:
        fail("unknown mode \(mode)")
    }
}

/// The roads per-host users take (the NIO verifier and the challenge adapter with a configuration):
/// a trust manager with one host policy of `sets` public-key pin sets (the first is the Evaluator
/// rows' pins; the others pin the leaf and the anchor, each with the backup pin).
func manager(_ chain: Chain, sets: Int, certificateCache: CertificateCache? = nil, verdictCache: VerdictCache? = nil) -> TrustManager {
    let anchors = try! TrustAnchors(certificates: [chain.anchor])
    let pinned = [chain.served[1], chain.served[0], chain.anchor]
    let pinSets = pinned.prefix(sets).map { certificate in
        PinSet(.publicKeys(try! PinnedPublicKeys(pins: [certificate.publicKeyPin, backupPin])))
    }
    let policy = HostPolicy(pattern: try! HostPattern(host, publicSuffixes: nil), pinSets: pinSets, validation: ValidationPolicy(anchors: anchors))
    return TrustManager(policies: [policy], certificateCache: certificateCache, verdictCache: verdictCache)
}

/// Each policy uncached, then each with a fresh verdict cache (hit after the first run): the rows a comparison reads.
func uncachedAndCached(_ policies: [(String, TrustPolicy)]) -> [(String, Evaluator)] {
    policies.map { ("\($0.0), uncached", Evaluator(policy: $0.1)) }
        + policies.map { ("\($0.0), verdict cache hit", Evaluator(policy: $0.1, certificateCache: CertificateCache(), verdictCache: VerdictCache())) }
}

func expectTrusted(_ label: String, _ verdict: () throws -> Verdict) {
    do {
        let result = try verdict()
        guard result.isTrusted else { fail("\(label): expected a trusted verdict, got \(result.failures.map(\.code))") }
    } catch {
        fail("\(label): \(error)")
    }
}

struct Row {
    let label: String
    let microseconds: Double
    let allocations: Double
}

struct ChainResult {
    var rows: [Row] = []
    var baseline: Double { rows[0].microseconds }
    func time(_ label: String) -> Double { rows.first { $0.label == label }!.microseconds }
}

print(
    "pincheck-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(rounds) rounds per measurement (best counts), verification time 2030-06-01T00:00:00Z"
)
print("")

var results: [String: ChainResult] = [:]
for chain in chains {
    let c = CBaseline(chain)
    let baseline: () -> Int32 = { c.verify() }
    let baselineParsed: () -> Int32 = { c.verifyParsed() }

    let none = Evaluator(policy: policy(chain, "none"))
    let publicKey = Evaluator(policy: policy(chain, "public-key"))
    let certificate = Evaluator(policy: policy(chain, "certificate"))
    let parsedCache = Evaluator(policy: policy(chain, "public-key"), certificateCache: CertificateCache())
    let verdictCache = Evaluator(policy: policy(chain, "public-key"), certificateCache: CertificateCache(), verdictCache: VerdictCache())
    let der = chain.servedDER
    let evaluators: [(String, () throws -> Verdict)] = [
        ("none mode, uncached", { try none.evaluate(derEncoded: der, host: host, at: verificationTime) }),
        ("public-key mode (2 pins), uncached", { try publicKey.evaluate(derEncoded: der, host: host, at: verificationTime) }),
        ("certificate mode, uncached", { try certificate.evaluate(derEncoded: der, host: host, at: verificationTime) }),
        ("parsed-certificate cache hit, full verification", { try parsedCache.evaluate(derEncoded: der, host: host, at: verificationTime) }),
        ("verdict cache hit", { try verdictCache.evaluate(derEncoded: der, host: host, at: verificationTime) }),
    ]
    let managers: [(String, TrustManager)] = [1, 3].flatMap { sets in
        [
            ("TrustManager, \(sets) pin set\(sets == 1 ? "" : "s"), uncached", manager(chain, sets: sets)),
            (
                "TrustManager, \(sets) pin set\(sets == 1 ? "" : "s"), parsed-certificate cache",
                manager(chain, sets: sets, certificateCache: CertificateCache())
            ),
            (
                "TrustManager, \(sets) pin set\(sets == 1 ? "" : "s"), verdict cache hit",
                manager(chain, sets: sets, certificateCache: CertificateCache(), verdictCache: VerdictCache())
            ),
        ]
    }
    let configurations =
        evaluators
        + managers.map { label, manager in
            (label, { () throws -> Verdict in try manager.evaluate(derEncoded: der, host: host, at: verificationTime) })
        }
    for (label, evaluate) in configurations { expectTrusted("\(chain.name), \(label)", evaluate) }
    if let profile = options.profile {
        let body: () -> Void =
            switch profile {
            case "baseline": { _ = baseline() }
            case "baseline-parsed": { _ = baselineParsed() }
            case "uncached": { _ = try? configurations[1].1() }
            case "parsed": { _ = try? configurations[3].1() }
            case "verdict": { _ = try? configurations[4].1() }
            case "manager-verdict": { _ = try? configurations[7].1() }
            default: fail("--profile takes baseline, uncached, parsed, verdict or manager-verdict")
            }
        if let iterations = options.profileIterations {
            for _ in 0..<iterations { body() }
        } else {
            let begin = now()
            while now() - begin < 10_000_000_000 { body() }
        }
        exit(0)
    }
    let labels = ["C baseline: d2i_X509 + X509_verify_cert + host", "C, X509 objects parsed once"] + configurations.map(\.0)
    let bodies: [() -> Void] = [{ _ = baseline() }, { _ = baselineParsed() }] + configurations.map { _, evaluate in { _ = try? evaluate() } }
    let times = measure(bodies)
    var result = ChainResult()
    for (index, label) in labels.enumerated() {
        result.rows.append(Row(label: label, microseconds: times[index], allocations: allocations(bodies[index])))
    }
    results[chain.name] = result

    print("chain \(chain.name): \(chain.description)")
    print(
        "  " + column("what", 58) + column("µs/eval", 10, right: true) + column("× baseline", 12, right: true)
            + column("allocs/eval", 13, right: true))
    for row in result.rows {
        print(
            "  " + column(row.label, 58) + column(format(row.microseconds, 1), 10, right: true)
                + column(format(row.microseconds / result.baseline), 12, right: true) + column(format(row.allocations, 1), 13, right: true))
    }
    print("")
}

// MARK: Threads

let rsa = chains[0]
let sharedUncached = Evaluator(policy: policy(rsa, "public-key"))
let sharedCached = Evaluator(policy: policy(rsa, "public-key"), certificateCache: CertificateCache())
let rsaDER = rsa.servedDER
let uncachedOne = throughput(threads: 1) { _ = try? sharedUncached.evaluate(derEncoded: rsaDER, host: host, at: verificationTime) }
let uncachedTwo = throughput(threads: 2) { _ = try? sharedUncached.evaluate(derEncoded: rsaDER, host: host, at: verificationTime) }
let cachedOne = throughput(threads: 1) { _ = try? sharedCached.evaluate(derEncoded: rsaDER, host: host, at: verificationTime) }
let cachedTwo = throughput(threads: 2) { _ = try? sharedCached.evaluate(derEncoded: rsaDER, host: host, at: verificationTime) }
let sharedC = CBaseline(rsa)
let cOne = throughput(threads: 1) { _ = sharedC.verify() }
let cTwo = throughput(threads: 2) { _ = sharedC.verify() }
let cParsedOne = throughput(threads: 1) { _ = sharedC.verifyParsed() }
let cParsedTwo = throughput(threads: 2) { _ = sharedC.verifyParsed() }
print("threads (chain rsa-3, one anchor store shared by all threads; Pincheck in public-key mode with one shared evaluator)")
print("  C baseline, parse + verify: 1 thread \(Int(cOne)) evals/s, 2 threads \(Int(cTwo)) evals/s: ×\(format(cTwo / cOne))")
print("  C, parsed objects:          1 thread \(Int(cParsedOne)) evals/s, 2 threads \(Int(cParsedTwo)) evals/s: ×\(format(cParsedTwo / cParsedOne))")
print(
    "  Pincheck, uncached:         1 thread \(Int(uncachedOne)) evals/s, 2 threads \(Int(uncachedTwo)) evals/s: ×\(format(uncachedTwo / uncachedOne))"
)
print("  Pincheck, parsed cache:     1 thread \(Int(cachedOne)) evals/s, 2 threads \(Int(cachedTwo)) evals/s: ×\(format(cachedTwo / cachedOne))")
print("")

// MARK: Memory

let soakIterations = quick ? 5_000 : 100_000
let soak = Evaluator(policy: policy(rsa, "public-key"), certificateCache: CertificateCache())
for _ in 0..<1_000 { _ = try? soak.evaluate(derEncoded: rsaDER, host: host, at: verificationTime) }
let residentBefore = residentBytes()
for _ in 0..<soakIterations { _ = try? soak.evaluate(derEncoded: rsaDER, host: host, at: verificationTime) }
let residentAfter = residentBytes()
print("memory")
print(
    "  \(soakIterations) evaluations (parsed-certificate cache): resident \(residentBefore / 1024) KiB before, \(residentAfter / 1024) KiB after (\(residentAfter >= residentBefore ? "+" : "")\((residentAfter - residentBefore) / 1024) KiB)"
)
print("  peak resident memory of this process: \(peakResidentBytes() / 1024) KiB")
print("")

// MARK: Root programs

/// The root programs' classification and distrust check against the same evaluation with no
/// program data and the check not applied: on the test PKI's RSA chain (a private root: the
/// lookup misses) and on the real Let's Encrypt chain (ISRG Root X1: the lookup finds it).
func rootProgramBench() {
    var cases: [(String, [[UInt8]], String, Date, TrustAnchors)] = []
    if let rsa = chains.first {
        cases.append(("test RSA chain (private root)", rsa.servedDER, host, verificationTime, try! TrustAnchors(certificates: [rsa.anchor])))
    }
    let chainPath = "\(options.shared)/realworld/chains/rpv-letsencrypt_org_valid-04e9d2d4.pem"
    if let served = try? Certificate.load(contentsOf: chainPath),
        let root = try? Certificate.load(contentsOf: "\(options.shared)/realworld/roots/ISRG-Root-X1-96bcec06.pem"),
        let anchors = try? TrustAnchors(certificates: root)
    {
        cases.append(("Let's Encrypt chain (ISRG Root X1)", served.map(\.derBytes), "lencr.org", Timestamp.parse("2024-07-15")!, anchors))
    }
    print("root programs (bundled data, Mozilla's and Chrome's distrust) against no program data and the check not applied")
    for (label, der, name, time, anchors) in cases {
        let withPrograms = TrustPolicy(anchors: anchors)
        var without = withPrograms
        without.validation.rootPrograms = RootProgramPolicy(data: .none, distrust: .notApplied(because: "the benchmark's baseline"))
        let configurations = uncachedAndCached([("no programs", without), ("root programs", withPrograms)])
        for (configuration, evaluator) in configurations {
            expectTrusted("root programs, \(label), \(configuration)") { try evaluator.evaluate(derEncoded: der, host: name, at: time) }
        }
        let times = measure(configurations.map { _, evaluator in { _ = try? evaluator.evaluate(derEncoded: der, host: name, at: time) } })
        print("  \(label)")
        for (index, (configuration, _)) in configurations.enumerated() {
            print("    " + column(configuration, 42) + column(format(times[index], 2), 10, right: true) + " µs/eval")
        }
        let key = label.hasPrefix("test") ? "private" : "public"
        print("ratio root-programs-\(key)-uncached/none: \(format(times[1] / times[0]))")
        print("ratio root-programs-\(key)-verdict-hit/none: \(format(times[3] / times[2]))")
    }
    print("")
}

// MARK: Certificate Transparency

/// A real Let's Encrypt chain of 2024 with two embedded SCTs, judged with and without Chrome's CT
/// policy (Google's and Apple's lists): the difference is one SCT list parsed, one precertificate
/// TBS re-encoded and two ECDSA P-256 signature verifications (one per SCT) per evaluation.
func certificateTransparencyBench() {
    let chainPath = "\(options.shared)/realworld/chains/rpv-letsencrypt_org_valid-04e9d2d4.pem"
    guard FileManager.default.fileExists(atPath: chainPath),
        let served = try? Certificate.load(contentsOf: chainPath),
        let root = try? Certificate.load(contentsOf: "\(options.shared)/realworld/roots/ISRG-Root-X1-96bcec06.pem"),
        let anchors = try? TrustAnchors(certificates: root, classification: .webPKI),
        let google = try? CertificateTransparency.LogList(
            contentsOf: "\(options.shared)/ct/google-all_logs_list.json", publishedAt: Timestamp.parse("2024-07-01")),
        let apple = try? CertificateTransparency.LogList(
            contentsOf: "\(options.shared)/ct/apple-current_log_list.json", publishedAt: Timestamp.parse("2024-07-01"))
    else {
        print("certificate transparency: \(options.shared)/realworld and \(options.shared)/ct not found (--shared DIR): not measured")
        print("")
        return
    }
    let time = Timestamp.parse("2024-07-15")!
    let der = served.map(\.derBytes)
    var plain = TrustPolicy(anchors: anchors)
    plain.validation.profile = .strictWebPKI
    var enforced = plain
    enforced.validation.certificateTransparency = CertificateTransparency.Requirement(
        policy: .chrome, logs: CertificateTransparency.Logs([google, apple]))
    let configurations = uncachedAndCached([("no CT", plain), ("CT enforced (chrome, 2 SCTs)", enforced)])
    for (label, evaluator) in configurations {
        expectTrusted("certificate transparency, \(label)") { try evaluator.evaluate(derEncoded: der, host: "lencr.org", at: time) }
    }
    let times = measure(configurations.map { _, evaluator in { _ = try? evaluator.evaluate(derEncoded: der, host: "lencr.org", at: time) } })
    print("certificate transparency (a real Let's Encrypt chain of 2024 with 2 embedded SCTs, Google's and Apple's log lists)")
    for (index, (label, _)) in configurations.enumerated() {
        print("  " + column(label, 44) + column(format(times[index], 2), 10, right: true) + " µs/eval")
    }
    print("ratio ct-uncached/uncached: \(format(times[1] / times[0]))")
    print("ratio ct-verdict-hit/verdict-hit: \(format(times[3] / times[2]))")
    print("")
}
certificateTransparencyBench()
rootProgramBench()

// MARK: Whole process

if let pincheckPath {
    func spawnMicroseconds(_ arguments: [String], runs: Int) -> Double {
        var samples: [Double] = []
        for _ in 0..<runs {
            let begin = now()
            var pid: pid_t = 0
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let argv = arguments.map { strdup($0) } + [nil]
            let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
            argv.forEach { free($0) }
            posix_spawn_file_actions_destroy(&actions)
            guard spawned == 0 else { fail("cannot run \(arguments[0])") }
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            guard status == 0 else { fail("\(arguments.joined(separator: " ")) exited with status \(status)") }
            samples.append(Double(now() - begin) / 1000)
        }
        samples.sort()
        return samples[samples.count / 2]
    }
    let runs = quick ? 5 : 41
    let pincheck = [
        pincheckPath, "verify", rsa.pemFile, "--host", host, "--ca-file", rsa.anchorFile,
        "--pin", rsa.served[1].publicKeyPin.description, "--pin", backupPin.description, "--at", "2030-06-01",
    ]
    let openssl = [
        "openssl", "verify", "-CAfile", rsa.anchorFile, "-untrusted", rsa.intermediatesFile,
        "-verify_hostname", host, "-attime", "1906502400", rsa.leafFile,
    ]
    _ = spawnMicroseconds(pincheck, runs: 2)
    _ = spawnMicroseconds(openssl, runs: 2)
    // Interleaved, one run of each in turn: this machine's speed drifts by a quarter over
    // seconds, and two blocks run one after the other measured the drift as much as the commands.
    var pincheckRuns: [Double] = [], opensslRuns: [Double] = []
    for _ in 0..<runs {
        pincheckRuns.append(spawnMicroseconds(pincheck, runs: 1))
        opensslRuns.append(spawnMicroseconds(openssl, runs: 1))
    }
    let pincheckProcess = pincheckRuns.sorted()[runs / 2]
    let opensslProcess = opensslRuns.sorted()[runs / 2]
    print("whole process (median of \(runs) runs, chain rsa-3)")
    print("  pincheck verify (public-key, 2 pins): \(format(pincheckProcess / 1000)) ms")
    print("  openssl verify -verify_hostname:       \(format(opensslProcess / 1000)) ms")
    print("ratio pincheck-verify/openssl-verify: \(format(pincheckProcess / opensslProcess))")
    print("")
}

// MARK: Revocation from distribution points

// The leaf of crl-fetch/good-chain names http://crl.pincheck.test/intermediate.crl; the fetcher
// is warmed once through its transport seam (no network), as a long-running client's would be.
let crlChain = try! Certificate.load(contentsOf: "\(certificatesDirectory)/crl-fetch/good-chain.pem")
let crlBytes = Array(FileManager.default.contents(atPath: "\(certificatesDirectory)/crl-fetch/intermediate.crl")!)
let crlAnchors = try! TrustAnchors(certificates: [load("rsa-root")])
let plainPolicy = TrustPolicy(anchors: crlAnchors)
var crlPolicy = plainPolicy
crlPolicy.validation.revocation.distributionPointCRLs = DistributionPointCRLs(failure: .hard)
let warmFetcher = RevocationListFetcher(limits: .init(), cacheDirectory: nil) { _ in .success(crlBytes) }
let plainEvaluator = Evaluator(policy: plainPolicy)
let crlEvaluator = Evaluator(policy: crlPolicy)
let plainCached = Evaluator(policy: plainPolicy, verdictCache: VerdictCache(capacity: 64))
let crlCached = Evaluator(policy: crlPolicy, verdictCache: VerdictCache(capacity: 64))
func crlEvaluation(_ evaluator: Evaluator) -> Verdict {
    try! evaluator.evaluate(crlChain, host: host, at: verificationTime, waitingForRevocationListsFrom: warmFetcher)
}
expectTrusted("crl-fetch good, no revocation") { try plainEvaluator.evaluate(crlChain, host: host, at: verificationTime) }
expectTrusted("crl-fetch good, warm CRL") { crlEvaluation(crlEvaluator) }
guard crlEvaluation(crlEvaluator).revocationStatuses.map(\.outcome) == [.good] else { fail("the warm CRL must give a good answer") }
let revocationTimes = measure([
    { _ = try? plainEvaluator.evaluate(crlChain, host: host, at: verificationTime) },
    { _ = crlEvaluation(crlEvaluator) },
    { _ = try? plainCached.evaluate(crlChain, host: host, at: verificationTime) },
    { _ = crlEvaluation(crlCached) },
])
print("revocation (chain crl-fetch good: leaf, intermediate, root; the leaf's distribution-point CRL, 1 entry)")
print("  no revocation, uncached:          \(format(revocationTimes[0], 1)) µs/eval")
print("  warm CRL cache, uncached verdict: \(format(revocationTimes[1], 1)) µs/eval")
print("  no revocation, verdict-cache hit: \(format(revocationTimes[2], 2)) µs/eval")
print("  warm CRL cache, verdict-cache hit: \(format(revocationTimes[3], 2)) µs/eval")
if let bigCRL = options.bigCRL {
    let bytes = Array(FileManager.default.contents(atPath: bigCRL) ?? Data())
    let leafSerial = crlChain[0].serialNumber
    let serialBytes = stride(from: 0, to: leafSerial.count, by: 2).map { index -> UInt8 in
        let start = leafSerial.index(leafSerial.startIndex, offsetBy: index)
        return UInt8(leafSerial[start..<leafSerial.index(start, offsetBy: 2)], radix: 16)!
    }
    var entries = 0
    let parseTimes = measure([
        {
            _ = bytes.withUnsafeBufferPointer { d in
                serialBytes.withUnsafeBufferPointer { pcb_crl_parse_and_lookup(d.baseAddress, d.count, $0.baseAddress, $0.count) }
            }
        },
        {
            let list = try! CertificateRevocationList(derEncoded: bytes)
            entries = list.handle.entryCount
            _ = list.handle.entry(for: crlChain[0].handle)
        },
    ])
    let before = residentBytes()
    let kept = (0..<4).map { _ in try! CertificateRevocationList(derEncoded: bytes) }
    for list in kept { _ = list.handle.entry(for: crlChain[0].handle) }
    let perList = (residentBytes() - before) / kept.count
    print("  a CRL of \(entries) entries (\(bytes.count / 1024) KiB), parsed and made searchable once:")
    print("    C baseline (d2i_X509_CRL + X509_CRL_get0_by_serial): \(format(parseTimes[0] / 1000, 1)) ms")
    print("    Pincheck (CertificateRevocationList + first lookup):  \(format(parseTimes[1] / 1000, 1)) ms")
    print("    resident memory per CRL kept: \(perList / 1024) KiB (\(format(Double(perList) / Double(max(1, entries)), 0)) bytes per entry)")
    if let openssl = ProcessInfo.processInfo.environment["OPENSSL_CRL_MS"], let milliseconds = Double(openssl) {
        print("    openssl crl -noout (whole process, measured by bench.sh): \(format(milliseconds, 1)) ms")
        print("ratio crl-parse-index/openssl-crl-process: \(format(parseTimes[1] / 1000 / milliseconds))")
    }
    print("ratio crl-parse-index/c-baseline: \(format(parseTimes[1] / parseTimes[0]))")
}
print("ratio crl-warm/no-revocation: \(format(revocationTimes[1] / revocationTimes[0]))")
print("ratio crl-verdict-hit/verdict-hit: \(format(revocationTimes[3] / revocationTimes[2]))")
print("")

// MARK: Loading configurations and bundles

// A configuration of 20,000 hosts (two pins each), read by Configuration.load, against Foundation's
// JSONSerialization reading the same bytes (the least any reader does); and a PKCS #7 bundle of
// 4,000 certificates (the test root, repeated), read by Certificate.load, against d2i_PKCS7 and a
// reference per certificate from C.
let loadHosts = quick ? 2_000 : 20_000
let loadFolder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-bench-load-\(getpid())")
try! FileManager.default.createDirectory(at: loadFolder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: loadFolder) }
let hostEntries = (0..<loadHosts).map {
    #"{"pattern":"h\#($0).example.test","pins":["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB="]}"#
}
let anchorPath = URL(fileURLWithPath: certificatesDirectory).appendingPathComponent("rsa-root.pem").path
let configText = #"{"version":1,"anchors":["\#(anchorPath)"],"hosts":[\#(hostEntries.joined(separator: ","))]}"#
let configPath = loadFolder.appendingPathComponent("hosts.json").path
try! configText.write(toFile: configPath, atomically: true, encoding: .utf8)
let rootDER = load("rsa-root").derBytes
let bundleCertificates = quick ? 400 : 4_000
let bundleDER = PKCS7Bundle.encode(certificates: Array(repeating: rootDER, count: bundleCertificates))
let bundlePath = loadFolder.appendingPathComponent("bundle.p7b").path
_ = FileManager.default.createFile(atPath: bundlePath, contents: Data(bundleDER))
let configData = FileManager.default.contents(atPath: configPath)!
guard (try? Configuration.load(contentsOf: configPath))?.hosts.count == loadHosts else { fail("the generated configuration must load") }
guard (try? Certificate.load(contentsOf: bundlePath))?.count == bundleCertificates,
    bundleDER.withUnsafeBufferPointer({ pcb_pkcs7_certificates($0.baseAddress, $0.count) }) == bundleCertificates
else {
    fail("the generated bundle must load")
}
let loadTimes = measure([
    { _ = try? Configuration.load(contentsOf: configPath) },
    { _ = try? JSONSerialization.jsonObject(with: configData) },
    { _ = try? Certificate.load(contentsOf: bundlePath) },
    { _ = bundleDER.withUnsafeBufferPointer { pcb_pkcs7_certificates($0.baseAddress, $0.count) } },
])
print("loading (a configuration of \(loadHosts) hosts, \(configData.count / 1024) KiB; a PKCS #7 bundle of \(bundleCertificates) certificates)")
print("  Configuration.load:            \(format(loadTimes[0] / 1000, 1)) ms")
print("  JSONSerialization, same bytes: \(format(loadTimes[1] / 1000, 1)) ms")
print("  Certificate.load (.p7b):       \(format(loadTimes[2] / 1000, 1)) ms")
print("  d2i_PKCS7 + references from C: \(format(loadTimes[3] / 1000, 1)) ms")
print("ratio config-load/json-parse: \(format(loadTimes[0] / loadTimes[1]))")
print("ratio p7b-load/c-baseline: \(format(loadTimes[2] / loadTimes[3]))")
print("")

// MARK: Summary

for chain in chains {
    let result = results[chain.name]!
    print("ratio \(chain.name) uncached-public-key/baseline: \(format(result.time("public-key mode (2 pins), uncached") / result.baseline))")
    print(
        "ratio \(chain.name) parsed-cache-hit/baseline: \(format(result.time("parsed-certificate cache hit, full verification") / result.baseline))")
}
let main = results["rsa-3"]!
print("ratio uncached-public-key/baseline: \(format(main.time("public-key mode (2 pins), uncached") / main.baseline))")
print("ratio parsed-cache-hit/baseline: \(format(main.time("parsed-certificate cache hit, full verification") / main.baseline))")
print("ratio cache-hit/uncached: \(format(main.time("verdict cache hit") / main.time("public-key mode (2 pins), uncached")))")
// The per-host road against the Evaluator's, same pins, same caches (issue 14: within 5 %).
for sets in [1, 3] {
    let name = "TrustManager, \(sets) pin set\(sets == 1 ? "" : "s")"
    print(
        "ratio trustmanager-\(sets)-set-uncached/evaluator-uncached: \(format(main.time("\(name), uncached") / main.time("public-key mode (2 pins), uncached")))"
    )
    print(
        "ratio trustmanager-\(sets)-set-parsed/evaluator-parsed: \(format(main.time("\(name), parsed-certificate cache") / main.time("parsed-certificate cache hit, full verification")))"
    )
    print(
        "ratio trustmanager-\(sets)-set-verdict-hit/evaluator-verdict-hit: \(format(main.time("\(name), verdict cache hit") / main.time("verdict cache hit")))"
    )
}
// Threads: the engine's hot path (parsed-certificate cache, full verification each time). Parsing
// itself scales worse on OpenSSL 3.0, whose decoders contend on locks: see the C lines above.
print("ratio 2-threads/1-thread: \(format(cachedTwo / cachedOne))")
