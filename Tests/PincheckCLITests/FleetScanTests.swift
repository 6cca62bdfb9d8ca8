import Foundation
import Testing
@testable import PincheckCLI
import PincheckTestSupport
import TrustEvaluator

/// `scan` and `audit` as many jobs of a batch engine: stable shards, a resume file a killed job is
/// started again with, and a cap on handshakes per second (issue 45). Scans run as the binary,
/// never in this process: ScanCommandTests counts this process's scan workers.
@Suite("fleet scans: shards, resume, rate", .serialized)
struct FleetScanTests {
    typealias F = CLIFixtures

    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-fleet-\(UUID().uuidString)-\(name)").path
    }

    /// The records of a JSON-lines file by `target`: status and reason codes (what a later reader
    /// compares; when and how long differ from run to run).
    static func records(_ path: String) throws -> [(target: String, summary: String)] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"), "a record file ends with a whole line")
        return try text.split(separator: "\n").map { line in
            let object = try F.json(String(line))
            let target = try #require(object["target"] as? String)
            let codes = (object["reasons"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            return (target, "\(object["status"] as? String ?? "?") \(codes.joined(separator: ","))")
        }
    }

    /// Starts the built `pincheck` with these variables added to the tests' own; output discarded.
    static func start(_ arguments: [String], environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pincheck")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test("K/N is read as 0 ≤ K < N; anything else is refused")
    func shardArgument() {
        #expect(Shard(argument: "0/1") == Shard(index: 0, count: 1))
        #expect(Shard(argument: "3/4") == Shard(index: 3, count: 4))
        for bad in ["4/4", "-1/4", "1/0", "1", "1/2/3", "a/b", "/4", "1/", ""] {
            #expect(Shard(argument: bad) == nil, "\(bad)")
        }
    }

    @Test("a host's shard is SHA-256 of HOST:PORT, first 8 bytes big-endian, mod N: what openssl computes, on any machine")
    func shardIsSHA256() throws {
        for key in ["example.com:443", "www.example.test:8443", "[::1]:443"] {
            let digest = try #require(try Self.opensslSHA256(key))
            let word = digest.prefix(16).reduce(UInt64(0)) { $0 << 4 | UInt64(Int(String($1), radix: 16)!) }
            for count in [2, 7, 1000, 999_983] {
                #expect(Shard.shard(of: key, count: count) == Int(word % UInt64(count)), "\(key) of \(count)")
            }
        }
        // Every key in exactly one of N shards, and the shares even enough to split work.
        let keys = (0..<2000).map { "host\($0).example.com:443" }
        let shards = (0..<7).map { Shard(index: $0, count: 7)! }
        for key in keys { #expect(shards.filter { $0.contains(key) }.count == 1) }
        for shard in shards { #expect((220...360).contains(keys.filter(shard.contains).count)) }
    }

    static func opensslSHA256(_ text: String) throws -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "dgst", "-sha256", "-r"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init)
    }

    @Test("three shards as a Job runs them (JOB_COMPLETION_INDEX, one killed and resumed) give exactly the records of one run")
    func shardedUnionIsOneRun() throws {
        let good = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { good.stop() }
        let expired = try CheckTLSServer(certificate: "rsa-expired", chain: ["rsa-intermediate"])
        defer { expired.stop() }
        let refusing = try TestRawServer(.refuse)
        defer { refusing.stop() }
        // Nothing listens on the refusing port at any 127.0.0.N: 36 quick network errors, and one
        // line that is not a host.
        let list = [good.target, expired.target, "[::1", refusing.target] + (2...36).map { "127.0.0.\($0):\(refusing.port)" }
        let hosts = Self.temporary("hosts.txt")
        try (list.joined(separator: "\n") + "\n").write(toFile: hosts, atomically: true, encoding: .utf8)
        let common = ["scan", "--hosts", hosts, "--host", "www.example.test", "--timeout", "2", "--concurrency", "4",
                      "--ca-file", F.path("rsa-root.pem")] + F.at
        let single = Self.temporary("single.jsonl")
        let shardFiles = (0..<3).map { Self.temporary("shard-\($0).jsonl") }
        defer { for file in [hosts, single] + shardFiles { try? FileManager.default.removeItem(atPath: file) } }

        let one = try F.runBinary(common + ["--resume", single])
        #expect(one.status == 2, "bad input is the worst status here: \(one.errors)")
        let expected = try Self.records(single)
        #expect(expected.count == list.count)

        // Shard 1 is slowed to 2 handshakes a second and killed once it has written a record.
        let environment = { (index: Int) in ["JOB_COMPLETION_INDEX": "\(index)", "PINCHECK_SHARD_COUNT": "3"] }
        let slow = try Self.start(common + ["--shard-from-env", "--resume", shardFiles[1], "--rate", "2", "--concurrency", "1"], environment: environment(1))
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, (try? String(contentsOfFile: shardFiles[1], encoding: .utf8))?.contains("\n") != true {
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(slow.processIdentifier, SIGKILL)
        slow.waitUntilExit()
        let beforeResume = try Self.records(shardFiles[1]).count
        #expect(beforeResume >= 1)
        #expect(beforeResume < list.count / 3, "the kill came before shard 1 was done, or the test proves nothing")
        // As if the kill had landed in the middle of a record: the first half of one of its lines.
        let firstRecord = try #require(try String(contentsOfFile: shardFiles[1], encoding: .utf8).split(separator: "\n").first)
        let handle = try #require(FileHandle(forWritingAtPath: shardFiles[1]))
        handle.seekToEndOfFile()
        handle.write(Data(firstRecord.utf8.prefix(firstRecord.utf8.count / 2)))
        try handle.close()

        for index in 0..<3 {
            let run = try F.runBinary(common + ["--shard-from-env", "--resume", shardFiles[index], "--json"], environment: environment(index))
            #expect([0, 1, 2, 3].contains(run.status), "\(run.errors)")
            let lastLine = try #require(run.output.split(separator: "\n").last.map(String.init))
            let summary = try #require(try F.json(lastLine)["summary"] as? [String: Any])
            #expect(summary["alreadyRecorded"] as? Int == (index == 1 ? beforeResume : 0))
            if index == 1 { #expect(run.errors.contains("cut a half-written last record")) }
        }
        let union = try shardFiles.flatMap { try Self.records($0) }
        #expect(union.count == expected.count, "no host twice, none missing")
        #expect(Set(union.map(\.target)).count == union.count)
        #expect(Dictionary(uniqueKeysWithValues: union.map { ($0.target, $0.summary) })
                == Dictionary(uniqueKeysWithValues: expected.map { ($0.target, $0.summary) }))
        #expect(union.contains { $0.target == good.target && $0.summary == "trusted " })
        #expect(union.contains { $0.target == expired.target && $0.summary.hasPrefix("not-trusted chain.expired") })

        // Run again with every record present: nothing is checked, and that is not an error.
        let again = try F.runBinary(common + ["--shard", "2/3", "--resume", shardFiles[2]])
        #expect(again.status == 0, "\(again.output)\(again.errors)")
        #expect(again.output.contains("Summary — 0 hosts"))
        #expect(try Self.records(shardFiles[2]).count == union.count - (try Self.records(shardFiles[0]).count + (try Self.records(shardFiles[1]).count)))
    }

    @Test("a record says when, how long and by which build and data it was judged")
    func recordFields() throws {
        let good = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { good.stop() }
        let hosts = Self.temporary("hosts.txt")
        try good.target.write(toFile: hosts, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: hosts) }
        let result = try F.runBinary(["scan", "--hosts", hosts, "--json", "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem")] + F.at)
        let record = try F.json(try #require(result.output.split(separator: "\n").first.map(String.init)))
        #expect((record["checkedAt"] as? String)?.hasSuffix("Z") == true)
        #expect((record["elapsedMilliseconds"] as? Int).map { $0 >= 0 } == true)
        let judgedBy = try #require(record["judgedBy"] as? [String: Any])
        #expect(judgedBy["pincheck"] as? String == PincheckVersion.current)
        #expect((judgedBy["rootPrograms"] as? String)?.contains("nss-certdata") == true)
        let connection = try #require(record["connection"] as? [String: Any])
        #expect(connection["protocol"] as? String == "TLSv1.3")
        #expect(connection["cipher"] != nil)
        let served = try #require(record["served"] as? [[String: Any]])
        #expect(served.count == 2)
    }

    @Test("--rate: handshakes start no faster than the cap, over all workers")
    func rateCap() throws {
        let refusing = try TestRawServer(.refuse)
        defer { refusing.stop() }
        let hosts = Self.temporary("hosts.txt")
        try (2...22).map { "127.0.0.\($0):\(refusing.port)" }.joined(separator: "\n").write(toFile: hosts, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: hosts) }
        let started = ContinuousClock.now
        let result = try F.runBinary(["scan", "--hosts", hosts, "--rate", "20", "--concurrency", "16", "--timeout", "2"])
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 3)
        #expect(result.output.contains("Summary — 21 hosts"))
        // 21 starts at 20 a second: the last no earlier than one second after the first.
        #expect(elapsed >= .milliseconds(1000), "\(elapsed)")
    }

    @Test("bad fleet input is exit 2 with a typed error: a foreign resume file, a missing shard variable, both shard options")
    func badInput() throws {
        let refusing = try TestRawServer(.refuse)
        defer { refusing.stop() }
        let hosts = Self.temporary("hosts.txt"), foreign = Self.temporary("foreign.jsonl")
        try refusing.target.write(toFile: hosts, atomically: true, encoding: .utf8)
        try "{\"target\":\"a:1\"}\nnot json\n{\"target\":\"b:1\"}\n".write(toFile: foreign, atomically: true, encoding: .utf8)
        defer { for file in [hosts, foreign] { try? FileManager.default.removeItem(atPath: file) } }
        let base = ["scan", "--hosts", hosts, "--timeout", "1"]
        let notOurs = try F.runBinary(base + ["--resume", foreign])
        #expect(notOurs.status == 2)
        #expect(notOurs.errors.contains("input.unreadable-file"))
        // A bare {"target":…} line is not a record: records carry the run that wrote them.
        #expect(notOurs.errors.contains("line 1 of the records file is not a scan record"), "\(notOurs.errors)")
        #expect(try String(contentsOfFile: foreign, encoding: .utf8).hasSuffix("{\"target\":\"b:1\"}\n"), "a refused file is left as it was")
        let noCount = try F.runBinary(base + ["--shard-from-env"], environment: ["JOB_COMPLETION_INDEX": "0", "PINCHECK_SHARD_COUNT": ""])
        #expect(noCount.status == 2)
        #expect(noCount.errors.contains("policy.invalid"), "\(noCount.errors)")
        let outOfRange = try F.runBinary(base + ["--shard-from-env"], environment: ["JOB_COMPLETION_INDEX": "3", "PINCHECK_SHARD_COUNT": "3"])
        #expect(outOfRange.status == 2)
        #expect(outOfRange.errors.contains("JOB_COMPLETION_INDEX=3"))
        let both = try F.runBinary(base + ["--shard", "0/2", "--shard-from-env"])
        #expect(both.status == 2)
        let directory = try F.runBinary(base + ["--resume", FileManager.default.temporaryDirectory.path])
        #expect(directory.status == 2)
        #expect(directory.errors.contains("input.unreadable-file") && directory.errors.contains("records file"), "\(directory.errors)")
    }

    @Test("audit: two shards with resume files hold every host's record exactly once")
    func auditShards() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let refusing = try TestRawServer(.refuse)
        defer { refusing.stop() }
        let config = try AuditCommandTests.configuration()
        let hosts = try AuditCommandTests.hosts(["www.example.test \(server.target)", "example.test \(server.target)",
                                                 "bad.example.test \(refusing.target)"] + (2...12).map { "n\($0).example.test 127.0.0.\($0):\(refusing.port)" })
        let files = (0..<2).map { Self.temporary("audit-\($0).jsonl") }
        defer { for file in [config, hosts] + files { try? FileManager.default.removeItem(atPath: file) } }
        for index in 0..<2 {
            let run = try F.runBinary(["audit", config, "--hosts", hosts, "--timeout", "2", "--json", "--shard", "\(index)/2", "--resume", files[index]] + F.at)
            #expect(run.status == 3, "\(run.errors)")
        }
        let keys = try files.flatMap { file in
            try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { line in
                let object = try F.json(String(line))
                return "\(object["host"] as? String ?? "?") \(object["address"] as? String ?? "?")"
            }
        }
        #expect(keys.count == 14)
        #expect(Set(keys).count == 14)
        #expect(keys.contains("www.example.test \(server.target)"))
        // Resumed: nothing left to audit in shard 0.
        let again = try F.runBinary(["audit", config, "--hosts", hosts, "--timeout", "2", "--shard", "0/2", "--resume", files[0]] + F.at)
        #expect(again.output.contains("already recorded"), "\(again.output)")
        #expect(try String(contentsOfFile: files[0], encoding: .utf8).split(separator: "\n").count == keys.count - (try String(contentsOfFile: files[1], encoding: .utf8).split(separator: "\n").count))
    }
}
