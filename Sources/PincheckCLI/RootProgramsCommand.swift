import ArgumentParser
import FoundationEssentials
import TrustEvaluator

/// `pincheck root-programs`: which root-program data verdicts use, and what it distrusts.
struct RootProgramsCommand: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "root-programs",
        _superCommandName: Pincheck.name,
        abstract: "Show the root-program data verdicts use: its sources, and the roots a program distrusts by date or removed.",
        discussion: """
            An anchor is public when Mozilla's or Chrome's root program has it, private otherwise, \
            whichever store or file it came from. With --root-store-data, the files are read over \
            the bundled data as verify, check and scan read them; --emit-swift writes the bundled \
            data's Swift source (scripts/generate-root-programs.sh).
            Exit codes: 0 shown · 2 a file that is not root-program data, or older than the bundled data.
            """)

    @OptionGroup var rootProgramOptions: RootProgramOptions

    @Flag(name: .customLong("emit-swift"), help: "Print the Swift source of the bundled data made from --root-store-data alone (all three kinds).")
    var emitSwift = false

    @Option(
        name: .customLong("revision"),
        help: ArgumentHelp(
            "With --emit-swift: KIND=REVISION, the revision a file was taken at (nss-certdata, ccadb, chrome-root-store); repeatable.",
            valueName: "kind=revision"))
    var revisions: [String] = []

    func validate() throws {
        if emitSwift, rootProgramOptions.dataFiles.count != 3 {
            throw ValidationError(
                "--emit-swift makes the bundled data from the three files: give --root-store-data for certdata.txt, the CCADB records and Chrome's constraints"
            )
        }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        if emitSwift {
            var named: [String: String] = [:]
            for revision in revisions {
                let parts = revision.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { throw ValidationError("--revision takes KIND=REVISION, not \(revision)") }
                named[String(parts[0])] = String(parts[1])
            }
            var files: [(bytes: [UInt8], name: String)] = []
            for path in rootProgramOptions.dataFiles {
                files.append((try InputFile.read(path, limit: RootPrograms.fileLimit, what: "root-program data file"), path))
            }
            let data = try RootPrograms(generatingFrom: files, revisions: named)
            guard let source = data.bundledSource() else { return .badInput }
            console.write(source)
            return .trusted
        }
        let data = try rootProgramOptions.data()
        console.line("Root-program data: \(data.provenance)")
        let counts = RootPrograms.Program.allCases.map { program in
            "\(program) \(data.roots.count { $0.membership(in: program)?.status == .included }) trusted, \(data.roots.count { $0.membership(in: program)?.status == .removed }) removed"
        }
        console.line("  \(counts.joined(separator: " · "))")
        let dated = data.roots.filter { root in root.memberships.contains { $0.distrustAfter != nil } }
        if !dated.isEmpty {
            console.line()
            console.line("Distrusted for certificates issued after a date:")
            for root in dated.sorted(by: { $0.name < $1.name }) { console.line("  \(root.name): \(root.programSummary)") }
        }
        return .trusted
    }
}
