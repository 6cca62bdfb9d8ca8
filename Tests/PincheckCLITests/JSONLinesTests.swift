import Foundation
import Testing
@testable import PincheckCLI

/// Every command's `--json` is one style (docs/json.md): JSON Lines — each line one object, with
/// `"schema": 1` — whether it reports a verdict, certificates, findings or an error.
@Suite("--json: one style for every command")
struct JSONLinesTests {
    typealias F = CLIFixtures

    struct Row: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let status: Int32
        /// A field every line of this command has besides "schema".
        let field: String
        var testDescription: String { arguments.prefix(2).joined(separator: " ") + " → \(status)" }
    }

    static let rows: [Row] = [
        Row(arguments: ["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem"), "--at", "2030-06-01"],
            status: 0, field: "trusted"),
        Row(arguments: ["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test", "--at", "2030-06-01",
                        "--ca-file", F.path("rsa-root.pem"), "--pin", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
            status: 1, field: "reasons"),
        Row(arguments: ["pins", F.path("chains/rsa-good.pem")], status: 0, field: "certificates"),
        Row(arguments: ["lint", F.repository.appendingPathComponent("Examples/Rotation/app.json").path, "--at", "2030-06-01"], status: 0, field: "findings"),
        Row(arguments: ["verify", "/nonexistent/chain.pem"], status: 2, field: "error"),
        Row(arguments: ["check", "a.test:0"], status: 2, field: "error"),
        Row(arguments: ["demo"], status: 0, field: "scenario"),
    ]

    @Test("each line is one object with the schema version", arguments: rows)
    func oneStyle(_ row: Row) throws {
        let result = F.run(row.arguments + ["--json"])
        #expect(result.status == row.status, "\(result.errors)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(!lines.isEmpty)
        #expect(result.output.hasSuffix("\n"))
        for line in lines {
            let object = try F.json(String(line))
            #expect(object["schema"] as? Int == JSONLines.schema, "\(line.prefix(100))")
            #expect(object[row.field] != nil, "\(line.prefix(100))")
        }
    }
}
