import Foundation
import Testing
@testable import PincheckCLI
import PincheckTestSupport
import TrustEvaluator

/// The files `scan --resume`, `audit --resume` and `watch --records` write: never one the command
/// reads, never a line cut that is not the command's own, never shared by two jobs, never resumed
/// under other options (issue 57). Commands run as the binary.
@Suite("records files: inputs kept whole, one job at a time, records tied to their run", .serialized)
struct RecordsFileTests {
    typealias F = CLIFixtures

    static func temporary(_ name: String) -> String { FleetScanTests.temporary(name) }

    /// `scan` of one host that refuses connections, resumed from a records file of its own.
    struct OneHostScan {
        let refusing: TestRawServer
        let hosts = RecordsFileTests.temporary("hosts.txt"), records = RecordsFileTests.temporary("records.jsonl")
        var arguments: [String] { ["scan", "--hosts", hosts, "--timeout", "1", "--resume", records] }

        init() throws {
            refusing = try TestRawServer(.refuse)
            try refusing.target.write(toFile: hosts, atomically: true, encoding: .utf8)
        }

        func remove() {
            refusing.stop()
            for file in [hosts, records] { try? FileManager.default.removeItem(atPath: file) }
        }
    }

    static func contents(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<unreadable>" }

    /// A configuration as `jq -c` writes it: one line, no final newline.
    static func oneLineConfiguration() throws -> String {
        let config = try AuditCommandTests.configuration()
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config)))
        let line = try JSONSerialization.data(withJSONObject: object)
        try line.write(to: URL(fileURLWithPath: config))
        #expect(line.last != UInt8(ascii: "\n"))
        return config
    }

    @Test("a records file that is also an input is refused before anything is read or cut, by any spelling")
    func inputNeverDestroyed() throws {
        let refusing = try TestRawServer(.refuse)
        defer { refusing.stop() }
        let hosts = Self.temporary("hosts.txt"), link = Self.temporary("hosts-link.txt")
        try refusing.target.write(toFile: hosts, atomically: true, encoding: .utf8)  // no final newline
        try FileManager.default.linkItem(atPath: hosts, toPath: link)
        // audit's host list: NAME ADDRESS, again without a final newline.
        let auditHosts = Self.temporary("audit-hosts.txt"), auditLink = Self.temporary("audit-hosts-link.txt")
        try "www.example.test \(refusing.target)".write(toFile: auditHosts, atomically: true, encoding: .utf8)
        try FileManager.default.linkItem(atPath: auditHosts, toPath: auditLink)
        let config = try Self.oneLineConfiguration()
        defer { for file in [hosts, link, auditHosts, auditLink, config] { try? FileManager.default.removeItem(atPath: file) } }
        let before = (hosts: Self.contents(hosts), auditHosts: Self.contents(auditHosts), config: Self.contents(config))

        for arguments in [["scan", "--hosts", hosts, "--timeout", "1", "--resume", hosts],
                          ["scan", "--hosts", hosts, "--timeout", "1", "--resume=\(hosts)"],
                          ["scan", "--hosts", hosts, "--timeout", "1", "--resume", link],
                          ["audit", config, "--timeout", "1", "--resume", config],
                          ["audit", config, "--hosts", auditHosts, "--timeout", "1", "--resume", auditLink],
                          ["watch", config, "--rounds", "1", "--listen", "127.0.0.1:0", "--records", config]] {
            let run = try F.runBinary(arguments + F.at)
            #expect(run.status == 2, "\(arguments): \(run.errors)")
            #expect(run.errors.contains("input.unreadable-file") && run.errors.contains("also an input"), "\(arguments): \(run.errors)")
            #expect(Self.contents(hosts) == before.hosts, "\(arguments)")
            #expect(Self.contents(auditHosts) == before.auditHosts, "\(arguments)")
            #expect(Self.contents(config) == before.config, "\(arguments)")
        }
    }

    @Test("a last line without its newline is cut only when it is the start of this command's record")
    func foreignLastLineKept() throws {
        let scan = try OneHostScan()
        defer { scan.remove() }
        let (records, arguments) = (scan.records, scan.arguments)
        for foreign in [#"{"version":1,"hosts":[]}"#, #"{"run":"audit/0123"#, "plain text"] {
            try foreign.write(toFile: records, atomically: true, encoding: .utf8)
            let run = try F.runBinary(arguments)
            #expect(run.status == 2, "\(foreign): \(run.errors)")
            #expect(run.errors.contains("is not the start of a scan record"), "\(run.errors)")
            #expect(Self.contents(records) == foreign, "a refused file is left as it was")
        }
        // The start of a scan record is cut, and the host checked again.
        try #"{"run":"scan/"#.write(toFile: records, atomically: true, encoding: .utf8)
        let run = try F.runBinary(arguments)
        #expect(run.status == 3, "\(run.errors)")
        #expect(run.errors.contains("cut a half-written last record"))
        let lines = Self.contents(records).split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix(#"{"run":"scan/"#) == true)
    }

    @Test("another job's lock refuses the file, naming its process; --wait-lock waits for it")
    func lockedByAnotherJob() throws {
        let scan = try OneHostScan()
        defer { scan.remove() }
        let (records, arguments) = (scan.records, scan.arguments)
        var holder: ResumeFile? = try ResumeFile(path: records, run: RunFingerprint(command: "scan", arguments: arguments), inputs: [],
                                                 key: ScanSelection.recordKey)
        #expect(holder != nil)
        let refused = try F.runBinary(arguments)
        #expect(refused.status == 2)
        #expect(refused.errors.contains("locked by process \(getpid())"), "\(refused.errors)")
        #expect(Self.contents(records).isEmpty)

        let waiting = try FleetScanTests.start(arguments + ["--wait-lock"], environment: [:])
        Thread.sleep(forTimeInterval: 1)
        #expect(waiting.isRunning, "it waits while the lock is held")
        #expect(Self.contents(records).isEmpty)
        holder = nil  // closes the file: the lock is released
        waiting.waitUntilExit()
        #expect(waiting.terminationStatus == 3)
        #expect(Self.contents(records).split(separator: "\n").count == 1)
    }

    @Test("four shards started at once on one file with --wait-lock keep every record, whole, once")
    func sharedByFourShards() throws {
        let refusing = try TestRawServer(.refuse)
        defer { refusing.stop() }
        let hosts = Self.temporary("hosts.txt"), records = Self.temporary("records.jsonl")
        let list = (2...61).map { "127.0.0.\($0):\(refusing.port)" }
        try list.joined(separator: "\n").write(toFile: hosts, atomically: true, encoding: .utf8)
        defer { for file in [hosts, records] { try? FileManager.default.removeItem(atPath: file) } }
        let jobs = try (0..<4).map { index in
            try FleetScanTests.start(["scan", "--hosts", hosts, "--timeout", "1", "--shard", "\(index)/4", "--resume", records, "--wait-lock"],
                                     environment: [:])
        }
        for job in jobs {
            job.waitUntilExit()
            #expect(job.terminationStatus == 3)
        }
        let lines = Self.contents(records).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(Self.contents(records).hasSuffix("\n"))
        let targets = try lines.map { try #require(try F.json(String($0))["target"] as? String) }
        #expect(targets.count == list.count, "no record lost, none twice")
        #expect(Set(targets) == Set(list))
        // Run again: every host is recorded; nothing is checked, and the lines are the same.
        let again = try F.runBinary(["scan", "--hosts", hosts, "--timeout", "1", "--resume", records])
        #expect(again.status == 0, "\(again.errors)")
        #expect(Self.contents(records).split(separator: "\n").count == list.count)
    }

    @Test("records are tied to their run: other options or a changed anchor file say so instead of skipping hosts")
    func otherRunRefused() throws {
        let refusing = try TestRawServer(.refuse)
        defer { refusing.stop() }
        let hosts = Self.temporary("hosts.txt"), records = Self.temporary("records.jsonl"), anchors = Self.temporary("anchors.pem")
        try refusing.target.write(toFile: hosts, atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: F.path("rsa-root.pem"), toPath: anchors)
        defer { for file in [hosts, records, anchors] { try? FileManager.default.removeItem(atPath: file) } }
        let base = ["scan", "--hosts", hosts, "--timeout", "1", "--resume", records, "--ca-file", anchors]
        let first = try F.runBinary(base + ["--host", "www.example.test"])
        #expect(first.status == 3, "\(first.errors)")
        let record = try F.json(String(try #require(Self.contents(records).split(separator: "\n").first)))
        let run = try #require(record["run"] as? String)
        #expect(run.hasPrefix("scan/") && run.count == "scan/".count + 16)

        // Only how much, how fast and where: the same run (nothing left to check).
        let resumed = try F.runBinary(base + ["--host", "www.example.test", "--concurrency", "2", "--json", "--rate", "5"])
        #expect(resumed.status == 0, "\(resumed.errors)")

        let otherHost = try F.runBinary(base + ["--host", "other.example.test"])
        #expect(otherHost.status == 2)
        #expect(otherHost.errors.contains("policy.invalid") && otherHost.errors.contains("written by another run (\(run)"), "\(otherHost.errors)")

        try FileManager.default.removeItem(atPath: anchors)
        try FileManager.default.copyItem(atPath: F.path("ec-root.pem"), toPath: anchors)
        let otherAnchors = try F.runBinary(base + ["--host", "www.example.test"])
        #expect(otherAnchors.status == 2)
        #expect(otherAnchors.errors.contains("written by another run"), "\(otherAnchors.errors)")
        #expect(Self.contents(records).split(separator: "\n").count == 1, "nothing appended by a refused run")
    }

    @Test("fleet options out of bounds are refused: a --rate slower than one a minute, two shard index variables")
    func fleetOptionBounds() throws {
        let hosts = Self.temporary("hosts.txt")
        try "127.0.0.1:9".write(toFile: hosts, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: hosts) }
        let slow = F.run(["scan", "--hosts", hosts, "--rate", "1e-9"])
        #expect(slow.status == 2)
        #expect(slow.errors.contains("--rate must be at least"), "\(slow.errors)")
        let both = try F.runBinary(["scan", "--hosts", hosts, "--shard-from-env"],
                                   environment: ["JOB_COMPLETION_INDEX": "0", "AWS_BATCH_JOB_ARRAY_INDEX": "1", "PINCHECK_SHARD_COUNT": "2"])
        #expect(both.status == 2)
        #expect(both.errors.contains("policy.invalid") && both.errors.contains("both JOB_COMPLETION_INDEX and AWS_BATCH_JOB_ARRAY_INDEX"), "\(both.errors)")
        let waitWithoutFile = F.run(["scan", "--hosts", hosts, "--wait-lock"])
        #expect(waitWithoutFile.status == 2)
    }
}
