import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the committed test PKI is, from this file's path.
public enum TestCertificates {
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Certificates")

    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}

/// An `openssl s_server` child process on an ephemeral loopback port, stopped on `stop()` or deinit.
public final class TestTLSServer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the process is only killed, and files removed, under `lock`.
    private let process = Process()
    private let log: URL
    private var bundle: URL? = nil
    private let lock = NSLock()
    /// `127.0.0.1` or `::1`.
    public let address: String
    public let port: UInt16

    /// `HOST:PORT` as the command takes it (`[::1]:PORT` for IPv6).
    public var target: String { address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)" }

    /// Starts `openssl s_server -www` with a certificate (`NAME.pem` and `keys/NAME.key` in Certificates/).
    /// - Parameters:
    ///   - certificate: The leaf's name, e.g. `rsa-leaf`.
    ///   - chain: Names of certificates sent after the leaf (`-cert_chain`).
    ///   - ipv6: Listen on `[::1]` instead of 127.0.0.1.
    ///   - extra: More s_server arguments.
    ///   - port: The port to listen on; 0 (the default) lets the system pick one. A given port is
    ///     how a test replaces one server by another at the same address.
    public init(certificate: String, chain: [String] = [], ipv6: Bool = false, extra: [String] = [], port requested: UInt16 = 0) throws {
        address = ipv6 ? "::1" : "127.0.0.1"
        log = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-s_server-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        var arguments = ["s_server", "-accept", ipv6 ? "[::1]:\(requested)" : "127.0.0.1:\(requested)",
                         "-cert", TestCertificates.path("\(certificate).pem"), "-key", TestCertificates.path("keys/\(certificate).key"), "-www"]
        if !chain.isEmpty {
            let bundle = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-chain-\(UUID().uuidString).pem")
            self.bundle = bundle
            let text = try chain.map { try String(contentsOfFile: TestCertificates.path("\($0).pem"), encoding: .utf8) }.joined()
            try text.write(to: bundle, atomically: true, encoding: .utf8)
            arguments += ["-cert_chain", bundle.path]
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments + extra
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = FileHandle.nullDevice
        try process.run()
        ServerReaper.register(process.processIdentifier)
        // s_server prints "ACCEPT 127.0.0.1:PORT" (or "ACCEPT [::1]:PORT") once it listens; a
        // port given to it, "ACCEPT" alone.
        let deadline = Date().addingTimeInterval(10)
        var found: UInt16? = nil
        while found == nil, Date() < deadline, process.isRunning {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT") }) {
                if requested != 0 {
                    found = requested
                } else if let colon = line.lastIndex(of: ":") {
                    found = UInt16(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
            } else {
                usleep(20_000)
            }
        }
        guard let found else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "s_server did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")"])
        }
        port = found
    }

    public func stop() {
        lock.withLock {
            if process.isRunning {
                // SIGKILL: the child may inherit a mask that blocks SIGTERM from the spawning test thread.
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                ServerReaper.unregister(process.processIdentifier)
            }
        }
        try? FileManager.default.removeItem(at: log)
        if let bundle { try? FileManager.default.removeItem(at: bundle) }
    }

    deinit { stop() }
}

/// Raw TCP listeners on 127.0.0.1 for the failure scenarios: a port that never answers the
/// handshake, a plain-HTTP responder, a port that refuses connections, and one that accepts and
/// then says nothing (`hold`: `accepted` tells a test that a client is waiting on it).
public final class TestRawServer: @unchecked Sendable {
    // @unchecked Sendable: `fd` is immutable; `closed` is only touched under `lock`.
    public enum Behaviour: Sendable { case silent, plainHTTP, refuse, hold }

    public let port: UInt16
    private let fd: Int32
    private let lock = NSLock()
    private var closed = false
    /// Connections accepted so far (`hold` and `plainHTTP`); a box of its own, so the accept loop
    /// does not keep the server alive (its deinit stops it).
    private let acceptedCount = LockedCount()
    public var accepted: Int { acceptedCount.value }
    /// Whether a thread accepts on `fd` (and so closes it: ``LoopbackSocket/close(_:lock:closed:acceptLoopCloses:)``).
    private let hasAcceptLoop: Bool

    public var target: String { "127.0.0.1:\(port)" }

    public init(_ behaviour: Behaviour) throws {
        hasAcceptLoop = behaviour == .plainHTTP || behaviour == .hold
        (fd, port) = try LoopbackSocket.bind()
        // .refuse: bound but not listening, so the kernel answers RST and the port stays ours.
        guard behaviour != .refuse else { return }
        guard listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        if hasAcceptLoop {
            let fd = fd
            let acceptedCount = acceptedCount
            Thread.detachNewThread {
                var held: [Int32] = []
                while true {
                    let client = accept(fd, nil, nil)
                    if client < 0 {
                        if errno == EINTR { continue }
                        Glibc.close(fd)  // this loop's last use of it (LoopbackSocket.close)
                        held.forEach { _ = Glibc.close($0) }
                        return
                    }
                    acceptedCount.increment()
                    if behaviour == .hold {
                        held.append(client)
                        continue
                    }
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    _ = read(client, &buffer, buffer.count)
                    let reply = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    _ = reply.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                    close(client)
                }
            }
        }
    }

    public func stop() { LoopbackSocket.close(fd, lock: lock, closed: &closed, acceptLoopCloses: hasAcceptLoop) }

    deinit { stop() }
}

/// A count shared between threads.
final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}

/// A TCP socket bound to 127.0.0.1 on an ephemeral port, for the tests' own servers.
enum LoopbackSocket {
    /// The socket and its port; it is not listening yet.
    static func bind() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
        guard bound == 0 else {
            Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Shuts the socket down, once, under `lock`, and closes it unless an accept loop does.
    ///
    /// A socket that an accept loop reads must be closed by that loop, after its last `accept`:
    /// closed here, its descriptor number can be given to the next test's listening socket while
    /// the old loop is between two calls, and the old loop would then accept (and answer, and
    /// count) the new server's connections. `shutdown` wakes the loop's `accept` with an error.
    static func close(_ fd: Int32, lock: NSLock, closed: inout Bool, acceptLoopCloses: Bool) {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        shutdown(fd, Int32(SHUT_RDWR))
        if !acceptLoopCloses { Glibc.close(fd) }
    }
}

/// The openssl command, for tests that make a certificate or key of their own.
public enum OpenSSLCLI {
    /// Runs `openssl ARGUMENTS…` quietly and returns its exit status.
    @discardableResult
    public static func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The example programs (`Examples/`), built beside the test bundle, run as a user would run them.
public enum ExampleProgram {
    public struct Result: Sendable {
        public let status: Int32
        public let output: String
    }

    /// Runs `.build/…/NAME ARGUMENTS…` in `directory` (a fresh temporary folder when nil), killed
    /// after `timeout` seconds; standard output and error together.
    public static func run(_ name: String, _ arguments: [String], in directory: URL? = nil, timeout: Double = 60) throws -> Result {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "\(binary.path) is not built (swift build builds every example)"])
        }
        let folder = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
