import Foundation
import PincheckCLI
import PincheckTestSupport

/// Paths into the repository and a way to run commands with captured output.
enum CLIFixtures {
    static let repository = TestCertificates.root.deletingLastPathComponent()

    static func path(_ relative: String) -> String { TestPKI.path(relative) }

    /// The test roots, as `--ca-file` arguments.
    static let anchors = ["--ca-file", path("rsa-root.pem"), "--ca-file", path("ec-root.pem")]
    static let at = ["--at", "2030-06-01T00:00:00Z"]

    struct Result {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Runs a command in process, as the binary would.
    static func run(_ arguments: [String]) -> Result {
        let output = Console()
        let errors = Console()
        let status = Pincheck.run(arguments, output: output, errors: errors)
        return Result(status: status, output: output.captured, errors: errors.captured)
    }

    /// Runs the built `pincheck` binary (next to the test bundle).
    /// - Parameters:
    ///   - input: Written to its standard input (closed at once when nil).
    ///   - outputPath: A file its standard output goes to (`/dev/full`, say) instead of a pipe.
    ///   - addressSpaceKiB: An address-space limit (`ulimit -v`) to run it under.
    /// - Parameter environment: Variables set (or, with "", emptied) for the binary, over the tests' own.
    static func runBinary(_ arguments: [String], input: String? = nil, outputPath: String? = nil,
                          addressSpaceKiB: Int? = nil, environment: [String: String] = [:]) throws -> Result {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let binary = directory.appendingPathComponent("pincheck")
        let process = Process()
        if let addressSpaceKiB {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -v \(addressSpaceKiB) && exec \"$0\" \"$@\"", binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe()
        let err = Pipe()
        let stdin = Pipe()
        if let outputPath {
            process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        } else {
            process.standardOutput = out
        }
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let outData = outputPath == nil ? out.fileHandleForReading.readDataToEndOfFile() : Data()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      output: String(decoding: outData, as: UTF8.self),
                      errors: String(decoding: errData, as: UTF8.self))
    }

    static func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        guard let dictionary = object as? [String: Any] else { throw CocoaError(.coderReadCorrupt) }
        return dictionary
    }
}
