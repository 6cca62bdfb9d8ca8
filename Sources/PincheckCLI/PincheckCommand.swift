import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TrustEvaluator

/// The exit codes of every `pincheck` command.
public enum ExitStatus: Int32, Sendable {
    case trusted = 0
    case notTrusted = 1
    case badInput = 2
    case networkFailure = 3
}

/// A subcommand that runs against a console and returns its exit status.
protocol ConsoleCommand: ParsableCommand {
    func execute(_ console: Console) throws -> ExitStatus
}

extension ConsoleCommand {
    mutating func run() throws {
        let status = try execute(.standardOutput)
        if status != .trusted { throw ExitCode(status.rawValue) }
    }
}

/// `pincheck`: the root command.
public struct Pincheck: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "pincheck",
        abstract: "Check TLS certificate chains against trust anchors and pinning policies.",
        discussion: """
            Exit codes: 0 trusted · 1 not trusted · 2 usage or bad input · 3 network or handshake failure.
            """,
        subcommands: [Verify.self, Check.self, Scan.self, Pins.self, Lint.self, Import.self, Demo.self])

    public init() {}

    /// Parses `arguments` (without the program name), runs the command, and returns its exit code,
    /// mapping swift-argument-parser's codes to Pincheck's contract (usage errors → 2).
    public static func run(_ arguments: [String], output: Console = .standardOutput, errors: Console = .standardError) -> Int32 {
        do {
            let command = try parseAsRoot(arguments)
            if let command = command as? any ConsoleCommand {
                return try command.execute(output).rawValue
            }
            var other = command
            try other.run()
            return ExitStatus.trusted.rawValue
        } catch let error as PincheckError {
            errors.line("pincheck: error: \(error)")
            return ExitStatus.badInput.rawValue
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { output.line(message) }
                return 0
            }
            if !message.isEmpty { errors.line(message) }
            // Usage and validation errors (64), and anything else thrown, are "bad input".
            return ExitStatus.badInput.rawValue
        }
    }

    /// The `pincheck` binary's entry point.
    public static func runAsMain() -> Never {
        Glibc.exit(run(Array(CommandLine.arguments.dropFirst())))
    }
}
