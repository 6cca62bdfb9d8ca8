import Foundation
import Testing
import PincheckTestSupport
import TrustEvaluator

/// `pincheck watch` as operators run it: the binary, a real TLS server on loopback, `/metrics`
/// scraped over HTTP and read as Prometheus reads it (issue 45).
@Suite("pincheck watch: /metrics, a swapped certificate, SIGTERM mid-check", .serialized)
struct WatchCommandTests {
    typealias F = CLIFixtures

    /// A running `pincheck watch`: its process, standard error's file, and the /metrics port.
    final class Running {
        let process = Process()
        let errors: URL
        private(set) var metricsPort: UInt16 = 0

        init(_ arguments: [String]) throws {
            errors = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-watch-\(UUID().uuidString).err")
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pincheck")
            process.arguments = ["watch"] + arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: errors)
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        var standardError: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

        /// Waits for the "metrics at http://127.0.0.1:PORT/metrics" line.
        func waitForEndpoint() throws {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, process.isRunning {
                if let range = standardError.range(of: #"http://127\.0\.0\.1:([0-9]+)/metrics"#, options: .regularExpression) {
                    let url = standardError[range]
                    metricsPort = UInt16(url.split(separator: ":").last!.split(separator: "/").first!)!
                    return
                }
                usleep(50_000)
            }
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "watch did not start: \(standardError)"])
        }

        /// Polls /metrics until `condition` holds (60 s at most: a guard against a hang).
        func scrape(until condition: ([String: Double]) -> Bool) throws -> [String: Double] {
            let deadline = Date().addingTimeInterval(60)
            var last: [String: Double] = [:]
            while Date() < deadline {
                if let text = WatchCommandTests.get("/metrics", port: metricsPort).flatMap({ $0.status == 200 ? $0.body : nil }) {
                    last = try Exposition.parse(text)
                    if condition(last) { return last }
                }
                usleep(100_000)
            }
            Issue.record("the condition never held; last scrape: \(last)")
            return last
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: errors)
        }
    }

    /// One HTTP/1.1 GET over a plain socket, `Connection: close`; nil when nothing answers.
    static func get(_ path: String, port: UInt16, method: String = "GET") -> (status: Int, body: String)? {
        let request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        guard let response = exchange(port: port, send: Array(request.utf8)) else { return nil }
        let text = String(decoding: response, as: UTF8.self)
        guard let headerEnd = text.range(of: "\r\n\r\n"),
              let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return (status, String(text[headerEnd.upperBound...]))
    }

    /// Sends `bytes` on a new connection to 127.0.0.1:`port` and reads until the server closes it
    /// (10 s without a byte ends the read); nil when nothing accepts the connection.
    static func exchange(port: UInt16, send bytes: [UInt8]) -> [UInt8]? {
        guard let fd = connectLoopback(port: port) else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        return response
    }

    /// A TCP connection to 127.0.0.1:`port`; nil when nothing accepts it.
    static func connectLoopback(port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// The Prometheus text exposition format (0.0.4), read strictly: every line a `# TYPE`/`# HELP`
    /// comment or a sample `name{label="value",…} value` whose metric was typed before it.
    enum Exposition {
        struct Malformed: Error, CustomStringConvertible { let line: String; var description: String { "not exposition format: \(line)" } }

        /// A sample value as the format spells it: a number, `NaN`, `+Inf` or `-Inf` (not Swift's `nan`).
        static func value(_ text: String) -> Double? {
            switch text {
            case "NaN": return .nan
            case "+Inf": return .infinity
            case "-Inf": return -.infinity
            default: return text.contains(where: { $0.isLetter && $0 != "e" && $0 != "E" }) ? nil : Double(text)
            }
        }

        /// Samples by series (`name{labels}` as written).
        static func parse(_ text: String) throws -> [String: Double] {
            var typed = Set<String>()
            var samples: [String: Double] = [:]
            let name = #"[a-zA-Z_:][a-zA-Z0-9_:]*"#
            let sample = try Regex(#"^(\#(name))(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)$"#)
            let type = try Regex(#"^# TYPE (\#(name)) (counter|gauge|histogram|summary|untyped)$"#)
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
                if let match = try type.wholeMatch(in: line) {
                    typed.insert(String(match.output[1].substring!))
                } else if line.hasPrefix("# HELP ") || (line.hasPrefix("#") && !line.hasPrefix("# TYPE")) {
                    continue
                } else if let match = try sample.wholeMatch(in: line) {
                    let metric = String(match.output[1].substring!)
                    let valueText = String(match.output[match.output.count - 1].substring!)
                    guard typed.contains(metric), let value = Self.value(valueText) else {
                        throw Malformed(line: String(line))
                    }
                    samples[String(line[..<line.lastIndex(of: " ")!])] = value
                } else {
                    throw Malformed(line: String(line))
                }
            }
            return samples
        }
    }

    /// A configuration pinning www.example.test at rsa-leaf's key, with a backup pin.
    static func configuration() throws -> String {
        try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["CERTS/rsa-root.pem"], "hosts": [
              { "pattern": "www.example.test", "pins": ["\(try CheckCommandTests.pin("rsa-leaf"))", "\(try CheckCommandTests.pin("attacker-root"))"] } ] }
            """)
    }

    static func series(_ metric: String, port: UInt16) -> String {
        "\(metric){host=\"www.example.test\",address=\"127.0.0.1:\(port)\"}"
    }

    static let at = "2030-06-01T00:00:00Z"
    static let atDate = ISO8601DateFormatter().date(from: at)!

    static func certificate(_ name: String) throws -> Certificate {
        try Certificate(pemEncoded: try String(contentsOfFile: TestCertificates.path("\(name).pem"), encoding: .utf8))
    }

    static func seconds(until certificate: String) throws -> Double {
        try Self.certificate(certificate).notAfter.timeIntervalSince(atDate)
    }

    @Test("a scrape parses; the certificate swapped under a running watch changes the expiry and pin gauges by the next whole round")
    func swappedCertificate() throws {
        let first = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        let port = first.port
        let config = try Self.configuration()
        let hosts = try AuditCommandTests.hosts(["www.example.test 127.0.0.1:\(port)"])
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: hosts) }
        let watch = try Running([config, "--hosts", hosts, "--interval", "1", "--listen", "127.0.0.1:0", "--at", Self.at])
        defer { watch.stop() }
        try watch.waitForEndpoint()
        func value(_ samples: [String: Double], _ metric: String) -> Double? { samples[Self.series(metric, port: port)] }

        let before = try watch.scrape { ($0["pincheck_watch_rounds_total"] ?? 0) >= 1 }
        let leafSeconds = try Self.seconds(until: "rsa-leaf")
        let leaf = try Self.certificate("rsa-leaf")
        #expect(abs((value(before, "pincheck_watch_leaf_expiry_seconds") ?? .nan) - leafSeconds) < 1)
        #expect(abs((value(before, "pincheck_watch_pin_expiry_seconds") ?? .nan) - leafSeconds) < 1)
        #expect(value(before, "pincheck_watch_leaf_not_before_timestamp_seconds") == leaf.notBefore.timeIntervalSince1970)
        #expect(value(before, "pincheck_watch_leaf_not_after_timestamp_seconds") == leaf.notAfter.timeIntervalSince1970)
        #expect(value(before, "pincheck_watch_leaf_lifetime_seconds") == leaf.notAfter.timeIntervalSince(leaf.notBefore))
        #expect(!before.keys.contains { $0.hasPrefix("pincheck_watch_leaf_expiry_days") }, "the day gauges only with --days-gauges")
        #expect(value(before, "pincheck_watch_pinned") == 1)
        #expect(value(before, "pincheck_watch_pins_match") == 1)
        #expect(value(before, "pincheck_watch_allowed") == 1)
        #expect(value(before, "pincheck_watch_reachable") == 1)
        #expect(value(before, "pincheck_watch_ct_compliant")?.isNaN == true, "no CT policy: no value, not 0")
        #expect((value(before, "pincheck_watch_last_check_timestamp_seconds") ?? 0) > Date().timeIntervalSince1970 - 600)
        #expect(before.keys.contains { $0.hasPrefix("pincheck_watch_checks_total{") && $0.contains("outcome=\"allowed\"") })
        // The docs name every metric served, and the example alerting rules only metrics served.
        let served = Set(before.keys.map { String($0.prefix { $0 != "{" }) })
        let repository = TestCertificates.root.deletingLastPathComponent()
        let guide = try String(contentsOf: repository.appendingPathComponent("docs/watch.md"), encoding: .utf8)
        let rules = try String(contentsOf: repository.appendingPathComponent("docs/examples/pincheck-watch-alerts.yml"), encoding: .utf8)
        for metric in served { #expect(guide.contains("`\(metric)`"), "docs/watch.md does not name \(metric)") }
        let named = Set(rules.matches(of: /pincheck_watch_[a-z_]+/).map { String($0.output) })
        #expect(named.count >= 5 && named.isSubset(of: served), "rules name metrics not served: \(named.subtracting(served))")

        // The same address now serves another key, expired at the judging time.
        first.stop()
        let second = try CheckTLSServer(certificate: "rsa-expired", chain: ["rsa-intermediate"], port: port)
        defer { second.stop() }
        let swapRound = try #require(try watch.scrape { _ in true }["pincheck_watch_rounds_total"])
        // A round that started after the swap has finished: its check saw the new certificate.
        let after = try watch.scrape { ($0["pincheck_watch_rounds_total"] ?? 0) >= swapRound + 2 }
        let expiredSeconds = try Self.seconds(until: "rsa-expired")
        #expect(expiredSeconds < 0)
        #expect(abs((value(after, "pincheck_watch_leaf_expiry_seconds") ?? .nan) - expiredSeconds) < 1)
        #expect(value(after, "pincheck_watch_pin_expiry_seconds")?.isNaN == true, "no pin matches: no expiry")
        #expect(value(after, "pincheck_watch_pins_match") == 0)
        #expect(value(after, "pincheck_watch_pinned") == 1)
        #expect(value(after, "pincheck_watch_allowed") == 0)

        // The log says the change once, however many rounds saw the refusal.
        let refusals = watch.standardError.components(separatedBy: " refused (").count - 1
        #expect(refusals == 1, "\(watch.standardError)")

        // Only /metrics is served.
        #expect(Self.get("/", port: watch.metricsPort)?.status == 404)
        #expect(Self.get("/metrics", port: watch.metricsPort, method: "POST")?.status == 405)
    }

    @Test("--days-gauges also serves 0.9's day gauges, the seconds divided by a day")
    func daysGauges() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let config = try Self.configuration()
        let hosts = try AuditCommandTests.hosts(["www.example.test 127.0.0.1:\(server.port)"])
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: hosts) }
        let watch = try Running([config, "--hosts", hosts, "--interval", "60", "--listen", "127.0.0.1:0", "--at", Self.at, "--days-gauges"])
        defer { watch.stop() }
        try watch.waitForEndpoint()
        let samples = try watch.scrape { ($0["pincheck_watch_rounds_total"] ?? 0) >= 1 }
        let seconds = try #require(samples[Self.series("pincheck_watch_leaf_expiry_seconds", port: server.port)])
        let days = try #require(samples[Self.series("pincheck_watch_leaf_expiry_days", port: server.port)])
        #expect(abs(days - seconds / 86_400) < 1e-6)
        #expect(samples[Self.series("pincheck_watch_pin_expiry_days", port: server.port)] != nil)
    }

    @Test("SIGTERM while a host hangs: no new host is started, the one in flight finishes and is recorded whole, exit 0")
    func sigtermMidCheck() throws {
        let hanging = try TestRawServer(.hold)
        defer { hanging.stop() }
        let answering = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { answering.stop() }
        let config = try Self.configuration()
        // One at a time: the hanging host first, the answering one only after it.
        let hosts = try AuditCommandTests.hosts(["www.example.test 127.0.0.1:\(hanging.port)", "www.example.test 127.0.0.1:\(answering.port)"])
        let records = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-watch-\(UUID().uuidString).jsonl").path
        defer { [config, hosts, records].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        let watch = try Running([config, "--hosts", hosts, "--concurrency", "1", "--timeout", "3", "--interval", "60",
                                 "--listen", "127.0.0.1:0", "--at", Self.at, "--records", records])
        defer { watch.stop() }
        try watch.waitForEndpoint()
        let deadline = Date().addingTimeInterval(60)
        while hanging.accepted == 0, Date() < deadline { usleep(20_000) }
        #expect(hanging.accepted == 1, "the check of the hanging host is in flight")
        kill(watch.process.processIdentifier, SIGTERM)
        watch.process.waitUntilExit()
        #expect(watch.process.terminationReason == .exit)
        #expect(watch.process.terminationStatus == 0, "\(watch.standardError)")
        #expect(watch.standardError.contains("stopped after 1 check"))
        let text = try String(contentsOfFile: records, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n")
        try #require(lines.count == 1, "the host in flight, and not the one after it")
        let record = try F.json(String(lines[0]))
        #expect(record["address"] as? String == "127.0.0.1:\(hanging.port)")
        #expect(record["outcome"] as? String == "network-failure")
        #expect(record["checkedAt"] is String)
    }

    @Test("bad input: a --listen address that is taken or malformed, an interval of 0, exit 2")
    func badInput() throws {
        let config = try Self.configuration()
        let taken = try TestRawServer(.silent)
        defer { taken.stop(); try? FileManager.default.removeItem(atPath: config) }
        let busy = try F.runBinary(["watch", config, "--listen", "127.0.0.1:\(taken.port)"])
        #expect(busy.status == 2)
        #expect(busy.errors.contains("cannot serve /metrics on 127.0.0.1:\(taken.port)"))
        #expect(busy.errors.contains("error[input.address-unavailable]"), "an address error, not a network failure: \(busy.errors)")
        for arguments in [["--listen", "localhost"], ["--listen", "127.0.0.1:70000"], ["--interval", "0"], ["--rounds", "0"]] {
            #expect(try F.runBinary(["watch", config] + arguments).status == 2, "\(arguments)")
        }
    }

    @Test("pincheck watch is the pincheck-watch program: found beside pincheck, refused in-process, named when missing")
    func separateProgram() throws {
        let config = try Self.configuration()
        defer { try? FileManager.default.removeItem(atPath: config) }
        // Through pincheck, --help is pincheck-watch's own.
        let help = try F.runBinary(["watch", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("USAGE: pincheck watch") && help.output.contains("--listen"), "\(help.output.prefix(300))")
        // Called as a library, it would replace the calling program: refused, exit 2.
        let inProcess = F.run(["watch", config])
        #expect(inProcess.status == 2)
        #expect(inProcess.errors.contains("runs as a program of its own"))
        // A pincheck copied alone: exit 2, saying what is missing and how to build it.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-alone-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let built = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pincheck")
        try FileManager.default.copyItem(at: built, to: folder.appendingPathComponent("pincheck"))
        let alone = Process()
        alone.executableURL = folder.appendingPathComponent("pincheck")
        alone.arguments = ["watch", config]
        let errors = Pipe()
        alone.standardError = errors
        alone.standardOutput = FileHandle.nullDevice
        try alone.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        alone.waitUntilExit()
        #expect(alone.terminationStatus == 2)
        #expect(text.contains("pincheck-watch, which is not beside this pincheck") && text.contains("--product pincheck-watch"), "\(text)")
    }
}
