import Foundation
import PincheckTestSupport
import Synchronization
import Testing
@testable import PincheckCLI
@testable import PincheckTLS
import TrustEvaluator

/// Issue 16's findings, each with the regression test that failed before the fix.
@Suite("the command's inputs and outputs: pipes, FIFOs, limits, errors, escaping", .serialized)
struct CommandInputOutputTests {
    typealias F = CLIFixtures

    /// Two loopback ports that refuse connections (kept for the test's duration).
    static func refusing() throws -> [CheckRawServer] {
        [try CheckRawServer(.refuse), try CheckRawServer(.refuse)]
    }

    static func summary(_ output: String) throws -> [String: Any] {
        let last = try #require(output.split(separator: "\n").last)
        return try #require(try F.json(String(last))["summary"] as? [String: Any])
    }

    // 1. A piped host list is read once, and every host is checked.
    @Test("scan reads a host list from a pipe, a FIFO and standard input once, checking every host")
    func pipedHostList() throws {
        let servers = try Self.refusing()
        defer { servers.forEach { $0.stop() } }
        let targets = servers.map(\.target)
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data((targets.joined(separator: "\n") + "\n").utf8))
            try? handle?.close()
        }
        writer.start()
        let result = F.run(["scan", "--hosts", fifo, "--timeout", "2", "--json"])
        #expect(result.status == 3, "\(result.output)\(result.errors)")
        let summary = try Self.summary(result.output)
        #expect(summary["total"] as? Int == 2)
        #expect(summary["networkError"] as? Int == 2)
        #expect(result.output.contains("network.refused"))

        // Standard input, as the binary reads it.
        let binary = try F.runBinary(["scan", "--hosts", "-", "--timeout", "2", "--json"], input: targets.joined(separator: "\n") + "\n")
        #expect(binary.status == 3)
        #expect(try Self.summary(binary.output)["total"] as? Int == 2)
    }

    @Test("a host list saved with a byte order mark: the first host is read without it")
    func byteOrderMarkedHostList() throws {
        let servers = try Self.refusing()
        defer { servers.forEach { $0.stop() } }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-hosts-\(UUID().uuidString)").path
        try Data([0xEF, 0xBB, 0xBF] + Array((servers.map(\.target).joined(separator: "\n") + "\n").utf8)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = F.run(["scan", "--hosts", path, "--timeout", "2", "--json"])
        #expect(result.status == 3, "\(result.output)\(result.errors)")
        #expect(try Self.summary(result.output)["networkError"] as? Int == 2)
        #expect(result.output.components(separatedBy: "network.refused").count - 1 >= 2, "\(result.output)")
        #expect(!result.output.contains("dns-failure") && !result.output.contains("\u{FEFF}"), "\(result.output)")
    }

    // 1. Nothing checked is never success.
    @Test("an empty list, a comment-only list and a directory are exit 2 with their code", arguments: ["", "# only a comment\n\n", nil])
    func nothingToCheck(content: String?) throws {
        let path: String
        if let content {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-hosts-\(UUID().uuidString)").path
            try content.write(toFile: path, atomically: true, encoding: .utf8)
        } else {
            path = FileManager.default.temporaryDirectory.path
        }
        defer { if content != nil { try? FileManager.default.removeItem(atPath: path) } }
        let result = F.run(["scan", "--hosts", path, "--json"])
        #expect(result.status == 2)
        #expect(result.errors.contains(content == nil ? "error[input.unreadable-file]" : "error[input.empty]"), "\(result.errors)")
        #expect(try F.json(result.output)["error"] != nil)
    }

    // 2. A FIFO nobody writes to ends within --timeout.
    @Test("scan --hosts FIFO without a writer ends within --timeout with exit 2")
    func fifoWithoutWriter() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let started = ContinuousClock.now
        let result = F.run(["scan", "--hosts", fifo, "--timeout", "1"])
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(result.status == 2)
        #expect(result.errors.contains("error[input.unreadable-file]"))
    }

    // 3. Lines are bounded, and so is what is echoed back.
    @Test("a host-list line over the limit is input.too-large, echoed in 64 bytes; the other hosts are checked")
    func longLine() throws {
        let servers = try Self.refusing()
        defer { servers.forEach { $0.stop() } }
        let targets = servers.map(\.target)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-hosts-\(UUID().uuidString)").path
        let long = String(repeating: "a", count: 1 << 20)
        try ([targets[0], long, targets[1]].joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = F.run(["scan", "--hosts", path, "--timeout", "2", "--json"])
        #expect(result.status == 2)   // a bad line is bad input, whatever the hosts gave
        #expect(result.output.count < 8_000, "the 1 MiB line was echoed: \(result.output.count) bytes")
        let lines = try result.output.split(separator: "\n").map { try F.json(String($0)) }
        let bad = try #require(lines.first { $0["status"] as? String == "bad-input" })
        #expect((bad["reasons"] as? [[String: Any]])?.first?["code"] as? String == "input.too-large")
        #expect((bad["target"] as? String)?.count ?? .max <= 70)
        #expect(try Self.summary(result.output)["networkError"] as? Int == 2)
    }

    @Test("a list that never ends (/dev/zero) stops at the size limit with input.too-large and bounded memory")
    func endlessList() throws {
        let result = F.run(["scan", "--hosts", "/dev/zero"])
        #expect(result.status == 2)
        #expect(result.errors.contains("error[input.too-large]"))
    }

    // 6. A write that fails is a failure.
    @Test("verify with standard output on /dev/full exits 2 and says so on stderr")
    func writeFailure() throws {
        let result = try F.runBinary(["verify", F.path("chains/rsa-good.pem"), "--ca-file", F.path("rsa-root.pem")] + F.at,
                                     outputPath: "/dev/full")
        #expect(result.status == 2)
        #expect(result.errors.contains("error[output.write-failed]"))
    }

    // 7. Nothing from a peer or an input reaches the terminal raw.
    @Test("control characters from peers and inputs are escaped in human output")
    func terminalInjection() throws {
        #expect(Terminal.printable("evil\u{1B}]0;pwned\u{07}.example") == "evil\\u{1B}]0;pwned\\u{7}.example")
        #expect(Terminal.printable("line one\nline two", keepingNewlines: true) == "line one\nline two")
        #expect(Terminal.printable("a\u{9B}b") == "a\\u{9B}b")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-hosts-\(UUID().uuidString)").path
        try "bad\u{1B}[2Jhost name\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = F.run(["scan", "--hosts", path])
        #expect(result.status == 2)
        #expect(!result.output.contains("\u{1B}"), "\(result.output)")
        #expect(result.output.contains("\\u{1B}[2J"))
    }

    // 8. Every error carries its code.
    @Test("errors say pincheck: error[CODE] on stderr, and give a JSON object with --json", arguments: [
        (["verify", "/nonexistent/chain.pem"], "input.unreadable-file"),
        (["verify", "/nonexistent/chain.pem", "--json"], "input.unreadable-file"),
        (["verify"], "input.usage"),
        (["check", "127.0.0.1:1", "--pin", "sha256/tooshort", "--mode", "public-key", "--json"], "pin.malformed"),
    ])
    func errorCodes(arguments: [String], code: String) throws {
        let result = F.run(arguments)
        #expect(result.status == 2)
        #expect(result.errors.hasPrefix("pincheck: error[\(code)]: "), "\(result.errors)")
        if arguments.contains("--json") {
            let error = try #require(try F.json(result.output)["error"] as? [String: Any])
            #expect(error["code"] as? String == code)
        }
    }

    // 9. pins does not guess.
    @Test("pins of a missing file name says no such file, without a DNS lookup", arguments: ["chian.pem", "certs/leaf.crt", "bundle.der"])
    func pinsMissingFile(name: String) {
        let started = ContinuousClock.now
        let result = F.run(["pins", name])
        #expect(result.status == 2)
        #expect(result.errors.contains("no such file"))
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test("pins still reads HOST:PORT, IP literals and host names as hosts", arguments: [
        ("example.test", true), ("127.0.0.1", true), ("127.0.0.1:8443", true), ("[::1]:443", true), ("www.example.com", true),
        ("chain.pem", false), ("leaf.CRT", false), ("some/dir/x", false),
    ])
    func pinsHostShapes(argument: String, host: Bool) {
        #expect(Pins.looksLikeHost(argument) == host)
    }

    @Test("a NUL in a host name is refused, never cut at the NUL")
    func nulInHost() {
        let error = #expect(throws: PincheckError.self) { try ProbeTarget(parsing: "127.0.0.1\u{0}.evil.example") }
        #expect(error?.code == .invalidHost)
        let evaluator = Evaluator(policy: TrustPolicy())
        #expect(throws: PincheckError.self) {
            try evaluator.evaluate([try Certificate.load(contentsOf: F.path("rsa-leaf.pem"))[0]], host: "127.0.0.1\u{0}x", at: Date())
        }
    }

    // 11. Address space: 64 workers against a real TLS server under a 300 MB limit.
    @Test("scan --concurrency 64 completes under a 300 MB address-space limit")
    func addressSpaceLimit() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-hosts-\(UUID().uuidString)").path
        try (Array(repeating: server.target, count: 300).joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let command = ["scan", "--hosts", path, "--timeout", "5", "--concurrency", "64", "--json", "--host", "www.example.test",
                       "--ca-file", F.path("rsa-root.pem")] + F.at
        let result = try F.runBinary(command, addressSpaceKiB: 300_000)
        #expect(result.status == 0, "exit \(result.status): \(result.errors.suffix(300))")
        #expect(try Self.summary(result.output)["trusted"] as? Int == 300)
    }

    // 1. A scan that cannot start a thread still checks every host.
    @Test("with no thread to be had, the workers' loop runs on the calling thread")
    func noWorkerThread() {
        let done = Mutex(0)
        FleetRun.runWorkers(8, work: { done.withLock { $0 += 1 } }, startingThread: { _ in false })
        #expect(done.withLock { $0 } == 1)
        let started = Mutex(0)
        FleetRun.runWorkers(4, work: { started.withLock { $0 += 1 } })
        #expect(started.withLock { $0 } == 4)
    }

    // 3. Files are size-checked before they are read; error messages are bounded.
    @Test("a configuration over the limit is input.too-large before it is read")
    func oversizedConfiguration() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-big-\(UUID().uuidString).json").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(truncate(path, off_t(InputFile.configurationLimit + 1)) == 0)   // sparse: nothing to read first
        for arguments in [["lint", path], ["import", "okhttp", path], ["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test", "--config", path]] {
            let result = F.run(arguments)
            #expect(result.status == 2)
            #expect(result.errors.contains("error[input.too-large]"), "\(arguments): \(result.errors)")
        }
    }

    @Test("an error quoting a huge value is cut to a bounded length")
    func boundedMessage() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-long-\(UUID().uuidString).json").path
        try "{ \"version\": 1, \"hosts\": [ { \"pattern\": \"\(String(repeating: "a", count: 3 << 20))\", \"pins\": [] } ] }"
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = F.run(["lint", path, "--json"])
        #expect(result.status == 2)
        #expect(result.errors.utf8.count < 4_096, "\(result.errors.utf8.count) bytes")
        #expect(result.output.utf8.count < 4_096)
    }

    @Test("a JSON configuration that does not parse says where")
    func jsonPosition() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-bad-\(UUID().uuidString).json").path
        try "{\n  \"version\": 1,\n  \"hosts\": [ {\"pattern\": \"a.example\" \"pins\": [] } ]\n}".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = F.run(["lint", path])
        #expect(result.errors.contains("line 3, column 38: expected ',' or '}'"), "\(result.errors)")
    }

    // 7. A subjectAltName with ESC and BEL, from a certificate the openssl CLI makes here.
    @Test("a subjectAltName holding ESC and BEL is escaped in verify's human host.mismatch line")
    func escapedSubjectAltName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-esc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = folder.appendingPathComponent("esc.pem").path
        try #require(try OpenSSLCLI.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                          "-keyout", folder.appendingPathComponent("key.pem").path, "-out", certificate,
                                          "-subj", "/O=Pincheck Tests", "-days", "36500",
                                          "-addext", "subjectAltName=DNS:evil\u{1B}]0;pwned\u{07}.example"]) == 0)
        let result = F.run(["verify", certificate, "--ca-file", certificate, "--host", "www.example.test"])
        #expect(result.status == 1)
        #expect(result.output.contains("host.mismatch"))
        #expect(!result.output.contains("\u{1B}") && !result.output.contains("\u{07}"), "raw control characters reached the output")
        #expect(result.output.contains("evil\\u{1B}]0;pwned\\u{7}.example"))
    }
}

