import Foundation
import Synchronization
import Testing
@testable import PincheckCLI

/// `pincheck scan` over a mixed list of loopback servers.
@Suite("pincheck scan", .serialized)
struct ScanCommandTests {
    typealias F = CLIFixtures

    static func hostsFile(_ lines: [String]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-hosts-\(UUID().uuidString).txt")
        try lines.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("a mixed list gives one JSON line per host, a summary line, and exit 3 (the worst)")
    func mixedJSON() throws {
        let good = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { good.stop() }
        let expired = try CheckTLSServer(certificate: "rsa-expired", chain: ["rsa-intermediate"])
        defer { expired.stop() }
        let refused = try CheckRawServer(.refuse)
        defer { refused.stop() }
        let silent = try CheckRawServer(.silent)
        defer { silent.stop() }
        let file = try Self.hostsFile(["# loopback test servers", "", good.target, "  \(expired.target)   # expired leaf",
                                       refused.target, silent.target])
        defer { try? FileManager.default.removeItem(atPath: file) }
        let started = ContinuousClock.now
        let result = F.run(["scan", "--hosts", file, "--json", "--host", "www.example.test", "--timeout", "1",
                            "--concurrency", "3", "--ca-file", F.path("rsa-root.pem")] + F.at)
        #expect(ContinuousClock.now - started < .seconds(6))
        #expect(result.status == 3)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        let objects = try lines.map { try F.json($0) }
        var statusByTarget: [String: String] = [:]
        for object in objects.dropLast() {
            statusByTarget[object["target"] as? String ?? "?"] = object["status"] as? String
        }
        #expect(statusByTarget == [good.target: "trusted", expired.target: "not-trusted",
                                   refused.target: "network-error", silent.target: "network-error"])
        let expiredObject = try #require(objects.first { $0["target"] as? String == expired.target })
        #expect((expiredObject["reasons"] as? [[String: Any]])?.first?["code"] as? String == "chain.expired")
        let summary = try #require(objects.last?["summary"] as? [String: Any])
        #expect(summary["total"] as? Int == 4)
        #expect(summary["trusted"] as? Int == 1)
        #expect(summary["notTrusted"] as? Int == 1)
        #expect(summary["networkError"] as? Int == 2)
        #expect(summary["exitCode"] as? Int == 3)
    }

    @Test("the human summary counts results and lists the hosts whose pins failed; exit 1 without network errors")
    func summaryAndPins() throws {
        let good = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { good.stop() }
        let rotated = try CheckTLSServer(certificate: "rsa-leaf-rotated", chain: ["rsa-intermediate"])
        defer { rotated.stop() }
        let leafPin = try #require(try PinsCommandTests.referencePins()["rsa-leaf"])
        let file = try Self.hostsFile([good.target, rotated.target])
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = F.run(["scan", "--hosts", file, "--host", "www.example.test", "--pin", leafPin,
                            "--ca-file", F.path("rsa-root.pem")] + F.at)
        #expect(result.status == 1)
        // The protocol and the negotiated key-exchange group (issue 31), then how it was trusted.
        #expect(result.output.contains("trusted         \(good.target)  www.example.test  TLSv1.3 \(CheckCommandTests.defaultGroup)  pin matched at depth 0"),
                "\(result.output)")
        #expect(result.output.contains("not trusted     \(rotated.target)  www.example.test  pin.mismatch"))
        #expect(result.output.contains("Summary — 2 hosts"))
        #expect(result.output.contains("  trusted        1\n  not trusted    1\n  network error  0"))
        #expect(result.output.contains("Pins that failed (1):\n  \(rotated.target)  expected \(leafPin)"))
        #expect(!result.output.contains("\u{1B}["), "no progress bar or colour when not on a terminal")
    }

    @Test("an invalid line is bad input (exit 2) and the other hosts are still checked")
    func invalidLine() throws {
        let good = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { good.stop() }
        let file = try Self.hostsFile(["[::1", good.target])
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = F.run(["scan", "--hosts", file, "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem")] + F.at)
        #expect(result.status == 2)
        #expect(result.output.contains("line 1: [::1"))
        #expect(result.output.contains("trusted         \(good.target)  www.example.test  TLSv1.3 \(CheckCommandTests.defaultGroup)  chain valid"),
                "\(result.output)")
    }

    @Test("a missing hosts file and a bad --concurrency are bad input")
    func badInput() {
        #expect(F.run(["scan", "--hosts", "/nonexistent/hosts.txt"]).status == 2)
        #expect(F.run(["scan", "--hosts", "-", "--concurrency", "0"]).status == 2)
    }

    @Test("200 refused hosts finish with 4 workers")
    func boundedPool() throws {
        let refused = try CheckRawServer(.refuse)
        defer { refused.stop() }
        let file = try Self.hostsFile(Array(repeating: refused.target, count: 200))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = F.run(["scan", "--hosts", file, "--json", "--concurrency", "4", "--timeout", "1", "--ca-file", F.path("rsa-root.pem")])
        #expect(result.status == 3)
        #expect(result.output.split(separator: "\n").count == 201)
    }

    // Exact, where counting threads by name was not: other suites scan in this process at the
    // same time, and their workers carry the same name.
    @Test("the pool starts exactly its workers, named (what top -H shows), and none outlives the scan")
    func workersNamedAndGone() {
        let workers = Mutex<[(name: String, task: Int32)]>([])
        FleetRun.runWorkers(3) {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            // /proc/thread-self links to PID/task/TID.
            let task = Int32((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?
                .split(separator: "/").last ?? "") ?? -1
            workers.withLock { $0.append((comm.trimmingCharacters(in: .newlines), task)) }
        }
        let seen = workers.withLock { $0 }
        #expect(seen.map(\.name) == ["pincheck-scan", "pincheck-scan", "pincheck-scan"])
        #expect(Set(seen.map(\.task)).count == 3, "three threads, not one reused")
        // The workers are detached: each signals the pool, then exits. Its task leaves
        // /proc/self/task when it has; allow it a moment to get there.
        let alive = { seen.filter { FileManager.default.fileExists(atPath: "/proc/self/task/\($0.task)") }.count }
        for _ in 0..<200 where alive() > 0 { usleep(10_000) }
        #expect(alive() == 0, "every worker has exited")
    }

    @Test("the binary reads the host list from standard input with --hosts -")
    func standardInput() throws {
        let good = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { good.stop() }
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let process = Process()
        process.executableURL = directory.appendingPathComponent("pincheck")
        process.arguments = ["scan", "--hosts", "-", "--json", "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem")] + F.at
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("# one host\n\(good.target)\n".utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(try F.json(String(lines[0]))["status"] as? String == "trusted")
    }
}
