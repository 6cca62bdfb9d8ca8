import Foundation
import PincheckTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tests' servers die with the test process, even when it crashes (`ServerReaper`).
@Suite("test servers do not outlive their test process")
struct ServerReaperTests {
    static func spawn(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = arguments
        try process.run()
        return process
    }

    static func waitUntilStopped(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        return !process.isRunning
    }

    @Test("while the parent lives its servers run; once it is killed, the watcher kills what it left listed")
    func orphansAreKilled() throws {
        // Stand-ins: a "test process" that will be killed, and a "server" it left behind.
        let parent = try Self.spawn(["30"])
        let server = try Self.spawn(["60"])
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-reaper-test-\(UUID().uuidString)")
        try "\(server.processIdentifier)\n".write(to: list, atomically: true, encoding: .utf8)
        let watcher = try ServerReaper.watch(parent: parent.processIdentifier, list: list)

        #expect(!Self.waitUntilStopped(server, seconds: 1.5), "the watcher killed a server while its parent lived")
        kill(parent.processIdentifier, SIGKILL)
        parent.waitUntilExit()
        #expect(Self.waitUntilStopped(server, seconds: 10), "the server outlived its parent")
        watcher.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: list.path))
    }
}
