import ArgumentParser
import FoundationEssentials
import Glibc
import TrustEvaluator

/// `pincheck watch`: runs the `pincheck-watch` program that sits beside this one, with the same
/// arguments (`--help` included), in this process (exec). Only the `pincheck` program does:
/// `Pincheck.run(["watch", …])` called in another program refuses rather than replace it.
///
/// Watching is a program of its own so that `pincheck` does not link an HTTP server, a metrics
/// registry and a service group that no other command uses: every `pincheck verify` would map
/// and relocate them at start-up.
struct WatchLauncher: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        _superCommandName: Pincheck.name,
        abstract: "Re-check a pinning configuration's hosts on an interval and serve Prometheus metrics on /metrics.",
        discussion: "Runs the pincheck-watch program installed beside pincheck; `pincheck watch --help` shows its options (docs/watch.md).",
        helpNames: [])

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The options and configuration of pincheck-watch.", valueName: "arguments"))
    var arguments: [String] = []

    /// The program `pincheck watch` runs.
    static let programName = "pincheck-watch"

    /// Whether this process is the `pincheck` program (set by `runAsMain`), which exec may replace.
    static let mayReplaceProcess = Locked(false)

    func run() throws {
        guard Self.mayReplaceProcess.withLock({ $0 }) else {
            throw ValidationError(
                "pincheck watch runs as a program of its own (\(Self.programName)); Pincheck.run does not start it inside another program")
        }
        let program = try Self.program()
        let argv = [Self.programName] + arguments
        // execv only returns when it failed.
        var pointers = argv.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        execv(program, &pointers)
        let reason = String(cString: strerror(errno))
        throw PincheckError(.unreadableFile, "cannot run \(program): \(reason)", source: program)
    }

    /// `pincheck-watch` in the folder of this executable (symbolic links followed).
    static func program() throws(PincheckError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else {
            throw PincheckError(.unreadableFile, "cannot find this program's own folder (/proc/self/exe) to run \(programName) from it")
        }
        let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let folder = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let program = folder + "/" + programName
        guard access(program, X_OK) == 0 else {
            throw PincheckError(
                .unreadableFile,
                """
                pincheck watch runs \(programName), which is not beside this pincheck (\(program)): \
                build it with `swift build -c release --product \(programName)` and install it in the same folder
                """, source: program)
        }
        return program
    }
}
