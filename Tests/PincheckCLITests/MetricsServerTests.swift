import Foundation
import Testing
import PincheckTestSupport
import TrustEvaluator

/// `pincheck watch`'s /metrics server under a hostile peer: a client that pipelines 50,000
/// requests and never reads, 300 slow connections (slowloris), a malformed request, a SIGHUP
/// (issue 57). The attack is scripts/watch-load.py, the same tool `BENCH=watch scripts/bench.sh`
/// runs; every connection is to 127.0.0.1 and every phase is bounded in time.
@Suite("pincheck watch's /metrics server: bounded memory and time per peer", .serialized)
struct MetricsServerTests {
    typealias Running = WatchCommandTests.Running

    /// A watch of one host that refuses connections: rounds are quick, and /metrics has series.
    static func startWatch() throws -> (Running, [String]) {
        let refusing = try TestRawServer(.refuse)
        let config = try WatchCommandTests.configuration()
        let hosts = try AuditCommandTests.hosts(["www.example.test 127.0.0.1:\(refusing.port)"])
        let watch = try Running([config, "--hosts", hosts, "--interval", "1", "--timeout", "1", "--listen", "127.0.0.1:0",
                                 "--at", WatchCommandTests.at])
        try watch.waitForEndpoint()
        _ = try watch.scrape { ($0["pincheck_watch_rounds_total"] ?? 0) >= 1 }
        refusing.stop()
        return (watch, [config, hosts])
    }

    static func script(_ name: String) -> String {
        TestCertificates.root.deletingLastPathComponent().appendingPathComponent("scripts/\(name)").path
    }

    @Test("50,000 pipelined requests never read, then 300 slow connections: under 64 MiB, a scrape beside them within a second, the slow ones closed")
    func hostilePeers() throws {
        let (watch, files) = try Self.startWatch()
        defer { watch.stop(); files.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        let load = Process()
        load.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        load.arguments = ["python3", Self.script("watch-load.py"), "--port", "\(watch.metricsPort)",
                          "--pid", "\(watch.process.processIdentifier)", "--pipelined", "50000", "--slow", "300",
                          "--budget-mib", "64", "--check"]
        let output = Pipe()
        load.standardOutput = output
        load.standardError = output
        try load.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        load.waitUntilExit()
        #expect(load.terminationStatus == 0, "\(text)")
        #expect(text.contains("watch rss MiB after 50000 pipelined requests"), "\(text)")
        #expect(text.contains("watch slow connections closed by the server within 15 s: 300 of 300"), "\(text)")
        #expect(watch.process.isRunning, "the watch survived: \(watch.standardError)")
        // And still answers as before.
        #expect(WatchCommandTests.get("/metrics", port: watch.metricsPort)?.status == 200)
    }

    @Test("a malformed request is answered 400 once and the connection closed; a few pipelined requests are answered in order")
    func malformedAndPipelined() throws {
        let (watch, files) = try Self.startWatch()
        defer { watch.stop(); files.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        let malformed = try Self.exchange(port: watch.metricsPort, send: Array("NOT HTTP AT ALL\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let answer = String(decoding: malformed, as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(200))")
        #expect(answer.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer, then closed")

        // Four pipelined requests are within the cap: every one answered, in order.
        let few = try Self.exchange(port: watch.metricsPort, send: Array((String(repeating: "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", count: 3)
                                                                         + "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").utf8))
        #expect(String(decoding: few, as: UTF8.self).components(separatedBy: "HTTP/1.1 200").count - 1 == 4)
    }

    @Test("SIGHUP is ignored and said: the watch keeps serving")
    func hangUpIgnored() throws {
        let (watch, files) = try Self.startWatch()
        defer { watch.stop(); files.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        kill(watch.process.processIdentifier, SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !watch.standardError.contains("SIGHUP ignored") { usleep(50_000) }
        #expect(watch.process.isRunning)
        #expect(watch.standardError.contains("SIGHUP ignored"), "\(watch.standardError)")
        #expect(WatchCommandTests.get("/metrics", port: watch.metricsPort)?.status == 200)
    }

    static func exchange(port: UInt16, send bytes: [UInt8]) throws -> [UInt8] {
        try #require(WatchCommandTests.exchange(port: port, send: bytes))
    }
}
