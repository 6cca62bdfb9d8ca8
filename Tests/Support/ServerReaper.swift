import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Kills the servers a test process started when it dies without stopping them (a crash, a
/// failed precondition, SIGKILL): the servers are child processes (`openssl s_server`, example
/// servers), which would otherwise outlive the run and hold their ports.
///
/// One watcher per test process, started with the first server: a shell that checks every half
/// second that the test process is alive and, once it is gone, SIGKILLs every process still
/// listed in its file. A server that is stopped normally is taken off the list first.
public enum ServerReaper {
    private static let lock = NSLock()
    private static let list = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-servers-\(getpid())")
    nonisolated(unsafe) private static var pids: Set<pid_t> = []
    nonisolated(unsafe) private static var watcher: Process? = nil

    /// The watcher's script: `sh -c SCRIPT sh PARENT LIST`.
    static let script = """
        while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
        if [ -f "$2" ]; then while read -r pid; do kill -9 "$pid" 2>/dev/null; done < "$2"; fi
        rm -f "$2"
        """

    /// Starts a watcher of `parent` that kills the processes listed in `list` once `parent` is gone.
    public static func watch(parent: pid_t, list: URL) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh", String(parent), list.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Lists a server this process started; the watcher kills it if the process dies first.
    public static func register(_ pid: pid_t) {
        lock.withLock {
            pids.insert(pid)
            write()
            if watcher == nil { watcher = try? watch(parent: getpid(), list: list) }
        }
    }

    /// Takes a stopped server off the list (its pid may be reused).
    public static func unregister(_ pid: pid_t) {
        lock.withLock {
            pids.remove(pid)
            write()
        }
    }

    private static func write() {
        try? pids.map { "\($0)\n" }.joined().write(to: list, atomically: true, encoding: .utf8)
    }
}
