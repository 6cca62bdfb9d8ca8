import FoundationEssentials
import TrustEvaluatorCore

extension RootPrograms {
    /// Reads newer root-program files over `base`: each file replaces what `base` had from a
    /// file of its kind, and the rest stays.
    ///
    /// The kind is told from the content: a `certdata.txt` (Mozilla), CCADB records (one JSON
    /// object per line), or a Chrome Root Store constraints file (one JSON object with `anchors`).
    /// - Parameters:
    ///   - files: Each file's bytes and its name (for messages and `Source.revision`).
    ///   - base: The data the files update; `RootPrograms.bundled` by default.
    ///   - allowingOlder: Accept a file whose data ends before `base`'s of the same kind (its
    ///     newest root or date is older), or that holds far fewer roots (under
    ///     ``completenessShare`` of them): false by default, so a stale copy cannot quietly undo a
    ///     distrust and a file cut short cannot make the roots it lost private.
    /// - Throws: `PincheckError`: `input.root-program-data` for a file that is none of the three,
    ///   is malformed, or holds under ``completenessShare`` of the roots `base` has of its kind; `input.root-program-data-older` for an older one; `policy.invalid` when
    ///   `base` was not made from files, or two files are of one kind.
    public init(files: [(bytes: [UInt8], name: String)], over base: RootPrograms = .bundled, allowingOlder: Bool = false) throws(PincheckError) {
        guard var facts = base.facts else {
            throw PincheckError(.invalidPolicy, "these root programs were not made from the programs' files: load files over RootPrograms.bundled")
        }
        var seen: Set<Source.Kind> = []
        let before = facts
        for file in files {
            let (kind, source) = try Self.read(file.bytes, name: file.name, into: &facts)
            guard seen.insert(kind).inserted else {
                throw PincheckError(.invalidPolicy, "two \(kind.rawValue) files given; give one of each kind", source: file.name)
            }
            if let previous = base.sources.first(where: { $0.kind == kind }), source.asOf < previous.asOf, !allowingOlder {
                throw PincheckError(
                    .staleRootProgramData,
                    "its data ends \(Timestamp.day(source.asOf)), before the \(kind.rawValue) data in use (\(previous)): refused, so an older copy cannot undo a distrust",
                    source: file.name)
            }
            if !allowingOlder { try Self.checkComplete(kind, read: facts, replacing: before, name: file.name) }
            let taken = max(source.asOf, base.sources.first { $0.kind == kind }?.date ?? source.asOf)
            facts.sources.removeAll { $0.kind == kind }
            facts.sources.append(Source(kind: kind, revision: source.revision, asOf: source.asOf, date: taken))
        }
        facts.sources.sort { $0.kind.rawValue < $1.kind.rawValue }
        self.init(facts: facts)
    }

    /// Reads root-program files from disk over `base` (``init(files:over:allowingOlder:)``).
    public init(contentsOf paths: [String], over base: RootPrograms = .bundled, allowingOlder: Bool = false) throws(PincheckError) {
        var files: [(bytes: [UInt8], name: String)] = []
        for path in paths {
            files.append((try InputFile.read(path, limit: Self.fileLimit, what: "root-program data file"), path))
        }
        try self.init(files: files, over: base, allowingOlder: allowingOlder)
    }

    /// The largest root-program file read (the CCADB's whole export is about 7 MiB).
    public static let fileLimit = 64 << 20

    /// The same data from nothing but these files (what the generator does), each kind's
    /// revision as `revisions` names it (by `Source.Kind` raw value) or as the file says.
    package init(generatingFrom files: [(bytes: [UInt8], name: String)], revisions: [String: String]) throws(PincheckError) {
        var facts = RootProgramFacts()
        for file in files {
            var (kind, source) = try Self.read(file.bytes, name: file.name, into: &facts)
            guard !facts.sources.contains(where: { $0.kind == kind }) else {
                throw PincheckError(.invalidPolicy, "two \(kind.rawValue) files given; give one of each kind", source: file.name)
            }
            let revision = revisions[kind.rawValue] ?? source.revision
            // "… (2026-05-01)": the revision's date is when the data was taken.
            let taken = revision.split(separator: "(").last.flatMap { Timestamp.parseDay(String($0.prefix(10))) }
            source = Source(kind: kind, revision: revision, asOf: source.asOf, date: taken)
            facts.sources.append(source)
        }
        facts.sources.sort { $0.kind.rawValue < $1.kind.rawValue }
        self.init(facts: facts)
    }

    /// Parses one file into its kind's facts.
    private static func read(_ bytes: [UInt8], name: String, into facts: inout RootProgramFacts) throws(PincheckError) -> (Source.Kind, Source) {
        let start = bytes.firstIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        guard let start else { throw PincheckError(.emptyInput, "the root-program data file is empty", source: name) }
        let revision = "file " + (name.split(separator: "/").last.map(String.init) ?? name)
        if bytes[start] != UInt8(ascii: "{") {
            let certdata = try MozillaCertdata(bytes, source: name)
            facts.mozilla = certdata.roots
            let asOf = certdata.roots.flatMap { [$0.notBefore] + ($0.distrustAfter.map { [$0] } ?? []) }.max() ?? .distantPast
            return (.mozillaCertdata, Source(kind: .mozillaCertdata, revision: revision, asOf: asOf))
        }
        // One JSON object in the whole file is a constraints file; one per line is CCADB records.
        if case .object(let top)? = try? JSONSyntax.parse(bytes), top["anchors"] != nil {
            let constraints = try ChromeConstraints(bytes, source: name)
            facts.chrome = constraints.anchors
            let asOf = constraints.anchors.compactMap { $0.distrustAfter ?? nil }.max() ?? .distantPast
            return (
                .chromeConstraints, Source(kind: .chromeConstraints, revision: constraints.revision.map(Self.shortRevision) ?? revision, asOf: asOf)
            )
        }
        let records = try CCADBRoots(bytes, source: name)
        facts.ccadb = records.roots
        facts.intermediates = records.intermediates
        let asOf = records.roots.compactMap(\.validFrom).max() ?? .distantPast
        return (.ccadb, Source(kind: .ccadb, revision: revision, asOf: asOf))
    }

    /// The least share of the data in use that a file of the same kind must hold: a program adds
    /// and removes a handful of roots a year, so a file with under three quarters of them (CCADB
    /// records cut at a line boundary parse, and make every missing root private) is refused.
    public static let completenessShare = 0.75

    /// Refuses a file whose counts fall far below those of the data it replaces.
    private static func checkComplete(
        _ kind: Source.Kind, read facts: RootProgramFacts, replacing base: RootProgramFacts,
        name: String
    ) throws(PincheckError) {
        let counts: [(what: String, read: Int, inUse: Int)] =
            switch kind {
            case .mozillaCertdata: [("Mozilla roots", facts.mozilla.count, base.mozilla.count)]
            case .chromeConstraints: [("Chrome Root Store anchors", facts.chrome.count, base.chrome.count)]
            case .ccadb:
                [
                    ("Chrome roots", facts.ccadb.filter { $0.chrome == "Included" }.count, base.ccadb.filter { $0.chrome == "Included" }.count),
                    ("Mozilla roots", facts.ccadb.filter { $0.mozilla == "Included" }.count, base.ccadb.filter { $0.mozilla == "Included" }.count),
                    ("TLS intermediates", facts.intermediates?.count ?? 0, base.intermediates?.count ?? 0),
                ]
            }
        for count in counts where Double(count.read) < Double(count.inUse) * completenessShare {
            throw PincheckError(
                .malformedRootProgramData,
                "it holds \(count.read) \(count.what) where the data in use holds \(count.inUse): a file cut short is refused (under \(Int(completenessShare * 100)) % of the data it would replace), so missing roots cannot quietly become private ones",
                source: name)
        }
    }

    /// "…, version_major 17 (commit c076418d…)" → "v17 c076418d…"; anything else as it is.
    private static func shortRevision(_ text: String) -> String {
        guard let range = text.firstRange(of: "version_major ") else { return text }
        let version = text[range.upperBound...].prefix { $0.isNumber }
        guard let commit = text.firstRange(of: "commit ") else { return "v\(version)" }
        return "v\(version) \(text[commit.upperBound...].prefix { $0.isHexDigit })"
    }

    /// What the bundled data is made of, for the generator (`scripts/generate-root-programs.sh`,
    /// which writes it as `Generated/BundledRootPrograms.swift`): the provenance line, the roots'
    /// encoding and the intermediates' (nil when these programs were not made from files).
    package var bundledEncoding: (provenance: String, roots: String, intermediates: String)? {
        guard let facts else { return nil }
        return (provenance, facts.encoded(), RootProgramFacts.encode(facts.intermediates ?? []))
    }
}
