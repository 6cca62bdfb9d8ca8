// The x509-limbo harness (issue 6): runs every testcase of a limbo.json through Pincheck's public
// evaluation API and compares the outcome with the expected one.
//
//   limbo-harness PATH [--include GLOB] [--results FILE]
//
// Writes one JSON line per case to FILE ({"id","expected","actual","reason"}), prints the false
// accepts, false rejects and skipped cases, and ends with the line `N passed, M failed`.
// Exit status: 0 when the run completed (whatever the counts; scripts/limbo.sh judges them),
// 2 for bad arguments or an unreadable suite.
import Foundation
import TrustEvaluator
#if canImport(Glibc)
import Glibc
#endif

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("limbo-harness: \(message)\nusage: limbo-harness PATH [--include GLOB] [--results FILE]\n".utf8))
    exit(2)
}

var suitePath: String?
var includes: [String] = []
var resultsPath: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--include":
        guard let glob = arguments.popFirst() else { usage("--include needs a GLOB") }
        includes.append(glob)
    case "--results":
        guard let file = arguments.popFirst() else { usage("--results needs a FILE") }
        resultsPath = file
    case "-h", "--help":
        usage("help")
    default:
        guard suitePath == nil, !argument.hasPrefix("-") else { usage("unexpected argument \(argument)") }
        suitePath = argument
    }
}
guard let suitePath else { usage("missing PATH to limbo.json") }
guard let data = FileManager.default.contents(atPath: suitePath) else { usage("cannot read \(suitePath)") }

let suite: LimboSuite
do {
    suite = try JSONDecoder().decode(LimboSuite.self, from: data)
} catch {
    usage("\(suitePath) is not a limbo suite: \(error)")
}

var output: FileHandle?
if let resultsPath {
    guard FileManager.default.createFile(atPath: resultsPath, contents: nil),
        let handle = FileHandle(forWritingAtPath: resultsPath)
    else { usage("cannot write \(resultsPath)") }
    output = handle
}

let started = Date()
var tally = Tally()
var buffer = Data()
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
for testcase in suite.testcases where includes.isEmpty || includes.contains(where: { fnmatch($0, testcase.id, 0) == 0 }) {
    let outcome = LimboRunner.run(testcase)
    tally.record(testcase, outcome)
    if output != nil {
        let line = ResultLine(id: testcase.id, expected: testcase.expectedResult.rawValue, actual: outcome.actual.rawValue, reason: outcome.reason)
        buffer.append(try! encoder.encode(line))
        buffer.append(0x0A)
        if buffer.count > 1 << 16 { output?.write(buffer); buffer.removeAll(keepingCapacity: true) }
    }
}
output?.write(buffer)
try? output?.close()

print(tally.summary(seconds: Date().timeIntervalSince(started)))
