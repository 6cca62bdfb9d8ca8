import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import ServerTrust
import TrustEvaluator
import PincheckOpenSSL

/// The exit codes of every `pincheck` command.
public enum ExitStatus: Int32, Sendable {
    case trusted = 0
    case notTrusted = 1
    case badInput = 2
    case networkFailure = 3
    /// Every host was checked and its verdict printed, but a failure report could not be written.
    case reportNotWritten = 4
}

extension ExitStatus {
    /// The status of one evaluated chain, the same on every command: what `Disposition(serverTrust:)`
    /// decides (the function the challenge adapter and the NIO verifier call), never the verdict's
    /// `isTrusted` alone.
    init(_ verdict: Verdict) {
        self = Disposition(serverTrust: verdict).allowsConnection ? .trusted : .notTrusted
    }

    /// The worse of two results, in the order 0 < 4 < 1 < 3 < 2: a report that was not written
    /// never hides a refusal (reports are due exactly when pins fail, so a CI that tolerates 4
    /// must not pass a host whose enforced pins failed; the unwritten report is still said on
    /// standard error), and bad input or no connection outranks everything.
    package static func worst(_ a: ExitStatus, _ b: ExitStatus) -> ExitStatus {
        func rank(_ s: ExitStatus) -> Int {
            switch s {
            case .trusted: 0
            case .reportNotWritten: 1
            case .notTrusted: 2
            case .networkFailure: 3
            case .badInput: 4
            }
        }
        return rank(a) >= rank(b) ? a : b
    }
}

/// A subcommand that runs against a console and returns its exit status.
package protocol ConsoleCommand: ParsableCommand {
    func execute(_ console: Console) throws -> ExitStatus
}

extension ConsoleCommand {
    package mutating func run() throws {
        let status = try execute(.standardOutput)
        if status != .trusted { throw ExitCode(status.rawValue) }
    }
}

/// `pincheck`: the root command.
public struct Pincheck: ParsableCommand {
    /// The command's name. Each subcommand names it as its super-command: a subcommand parsed by
    /// itself (``run(_:output:errors:)``) then says `pincheck verify` in its usage, and
    /// argument-parser skips its look for a completion-script request, which only the root answers
    /// (about a tenth of `pincheck verify`'s time when it ran for the subcommand too).
    static let name = "pincheck"

    public static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "Check TLS certificate chains against trust anchors and pinning policies.",
        discussion: """
            Exit codes: 0 trusted · 1 not trusted · 2 usage or bad input · 3 network or handshake failure · 4 every host trusted, but a failure report could not be written (check --report-to; report-only pins failed). A refusal (1) is never hidden by an unwritten report.
            """,
        version: "\(PincheckVersion.current)\nroot programs: \(RootPrograms.bundledProvenance)",
        subcommands: [
            Verify.self, Check.self, Scan.self, Pins.self, Lint.self, Audit.self, WatchLauncher.self, Plan.self, Import.self, Keygen.self, Sign.self,
            RootProgramsCommand.self, Demo.self,
        ])

    public init() {}

    /// Parses `arguments` (without the program name), runs the command, and returns its exit code,
    /// mapping swift-argument-parser's codes to Pincheck's contract (usage errors → 2).
    ///
    /// Every error is one line on `errors`, `pincheck: error[CODE]: message`, and with `--json` also
    /// a JSON object `{"error":{"code":…,"message":…}}` on `output`. When `output` cannot be
    /// written (a full disk, a closed descriptor), the command fails with exit 2 and says so on
    /// `errors`: a result nobody received is not a success.
    public static func run(_ arguments: [String], output: Console = .standardOutput, errors: Console = .standardError) -> Int32 {
        run(Pincheck.self, arguments, output: output, errors: errors)
    }

    /// `run(_:output:errors:)` for another root command (`pincheck-watch`'s), with the same
    /// error lines and exit codes.
    package static func run(
        _ root: any ParsableCommand.Type, _ arguments: [String], output: Console = .standardOutput,
        errors: Console = .standardError
    ) -> Int32 {
        let json = arguments.contains("--json")
        var status: Int32
        do {
            let command = try parseSubcommandAlone(root, arguments) ?? root.parseAsRoot(arguments)
            if let command = command as? any ConsoleCommand {
                status = try Invocation.$arguments.withValue(arguments) { try command.execute(output).rawValue }
            } else {
                var other = command
                try other.run()
                status = ExitStatus.trusted.rawValue
            }
        } catch let error as PincheckError {
            status = fail(code: error.code.description, message: error.description, json: json, output: output, errors: errors)
        } catch {
            let code = root.exitCode(for: error)
            let message = root.fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { output.line(message) }
                status = 0
            } else if error is ExitCode {
                // A status a command chose itself, after printing its own report.
                status = code.rawValue
            } else {
                // Usage and validation errors (64), and anything else thrown, are "bad input".
                let first = message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? message
                let text = first.hasPrefix("Error: ") ? String(first.dropFirst("Error: ".count)) : first
                status = fail(code: usageCode, message: text, json: json, output: output, errors: errors, detail: message)
            }
        }
        if let failure = output.writeFailure {
            errors.line("pincheck: error[\(outputWriteFailedCode)]: cannot write the result to standard output: \(failure)")
            return ExitStatus.badInput.rawValue
        }
        return status
    }

    /// The subcommand the arguments start with, parsed by itself: swift-argument-parser then
    /// builds the option sets of that one command instead of every command's (its completion-script
    /// and pass-through checks walk the whole tree), which was a third of `pincheck verify`'s run.
    /// Anything it does not parse to one of Pincheck's commands (a usage error, `--help`, a root
    /// option) returns nil, and the whole tree parses the arguments as before, with the same
    /// messages and exit codes.
    private static func parseSubcommandAlone(_ root: any ParsableCommand.Type, _ arguments: [String]) -> (any ParsableCommand)? {
        guard let name = arguments.first, !name.hasPrefix("-"),
            let subcommand = root.configuration.subcommands.first(where: { $0.configuration.commandName == name })
        else { return nil }
        guard let command = try? subcommand.parseAsRoot(Array(arguments.dropFirst())),
            // A request for help parses into argument-parser's own help command, whose usage
            // line would name the subcommand without "pincheck": the whole tree answers it.
            // Compared by identity: describing the type costs the runtime a conformance scan
            // of the whole binary per protocol it asks about (8 of `verify`'s 83).
            isCommand(type(of: command), in: subcommand)
        else { return nil }
        return command
    }

    /// Whether `type` is `command` or one of its subcommands, at any depth.
    private static func isCommand(_ type: any ParsableCommand.Type, in command: any ParsableCommand.Type) -> Bool {
        ObjectIdentifier(type) == ObjectIdentifier(command)
            || command.configuration.subcommands.contains { isCommand(type, in: $0) }
    }

    /// The code of command-line usage errors (unknown options, missing arguments, invalid values).
    static let usageCode = "input.usage"
    /// The code of an output that could not be written.
    static let outputWriteFailedCode = "output.write-failed"

    /// The most of an error message that is printed: messages may quote inputs, which can be huge.
    static let messageLimit = 2_048

    private static func fail(code: String, message full: String, json: Bool, output: Console, errors: Console, detail: String? = nil) -> Int32 {
        let message =
            full.utf8.count <= messageLimit
            ? full
            : String(decoding: full.utf8.prefix(messageLimit), as: UTF8.self) + "… (\(full.utf8.count) bytes in all)"
        errors.line("pincheck: error[\(code)]: \(Terminal.printable(message))")
        if let detail, detail.contains("\n") {
            // swift-argument-parser's usage lines, after the one-line error.
            for line in detail.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() { errors.line(Terminal.printable(String(line))) }
        }
        if json {
            struct Body: Encodable { let code: String; let message: String }
            struct Line: Encodable { let error: Body }
            output.line(JSONLines.line(Line(error: Body(code: code, message: message))))
        }
        return ExitStatus.badInput.rawValue
    }

    /// The `pincheck` binary's entry point.
    public static func runAsMain() -> Never {
        runAsMain(Pincheck.self)
    }

    /// The entry point of a program whose root command is `root`.
    package static func runAsMain(_ root: any ParsableCommand.Type) -> Never {
        OpenSSLLibrary.keepTablesAtExit()
        WatchLauncher.mayReplaceProcess.withLock { $0 = true }
        // Swift reads a program's arguments from /proc/self/cmdline on Linux: where /proc is not
        // mounted (a bare chroot) there are none, not even the program's name, and the command
        // would answer a `verify` with the root's help and exit 0. Refused instead.
        guard !CommandLine.arguments.isEmpty else {
            Console.standardError.line(
                "pincheck: error[\(usageCode)]: the command line cannot be read (is /proc mounted? Swift reads the arguments from /proc/self/cmdline)"
            )
            Glibc.exit(ExitStatus.badInput.rawValue)
        }
        Glibc.exit(run(root, Array(CommandLine.arguments.dropFirst())))
    }
}
