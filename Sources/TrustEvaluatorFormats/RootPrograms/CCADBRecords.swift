import FoundationEssentials
import TrustEvaluatorCore

/// The CCADB's records, one JSON object per line (`ccadb-records.jsonl`): each root's status in
/// the Chrome and Mozilla programs, and the intermediates that can issue TLS certificates (their
/// parents, validity and CRL partitions: the CA families `CAFamilies` answers with).
struct CCADBRoots {
    typealias Intermediate = RootProgramFacts.Intermediate
    typealias Root = RootProgramFacts.CCADBRoot

    let roots: [Root]
    /// The TLS-capable intermediates that are not revoked.
    let intermediates: [Intermediate]

    /// The statuses that make a record a program's root.
    static let programStatuses: Set<String> = ["Included", "Removed", "Blocked"]

    /// Reads the records: the roots that the Chrome or Mozilla program includes, removed or blocked.
    /// - Throws: `PincheckError` (`input.root-program-data`) naming the line that is not a record.
    init(_ bytes: [UInt8], source: String) throws(PincheckError) {
        var roots: [Root] = []
        var intermediates: [Intermediate] = []
        var lineNumber = 0
        var records = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
            func malformed(_ message: String) -> PincheckError {
                PincheckError(.malformedRootProgramData, "line \(lineNumber): \(message)", source: source)
            }
            let value: JSONValue
            do { value = try JSONSyntax.parse(Array(line)) } catch { throw malformed("not JSON: \(error.message)") }
            guard case .object(let record) = value, case .string(let type)? = record["type"], case .string(let hash)? = record["sha256"],
                case .string(let name)? = record["name"]
            else {
                throw malformed("not a CCADB record (an object with \"type\", \"sha256\" and \"name\")")
            }
            records += 1
            func text(_ key: String) -> String { if case .string(let value)? = record[key] { value } else { "" } }
            func day(_ key: String) -> Date? { Timestamp.parseDay(text(key).replacing(".", with: "-")) }
            guard type == "Root Certificate" else {
                // A family is what can issue TLS certificates now: TLS-capable, not revoked.
                guard type == "Intermediate Certificate", text("tlsCapable").lowercased() == "true", text("revocation") == "Not Revoked" else {
                    continue
                }
                guard let sha256 = Hex.decode(hash), sha256.count == 32, let parent = Hex.decode(text("parentSha256")), parent.count == 32 else {
                    throw malformed("an intermediate's \"sha256\" or \"parentSha256\" is not 64 hex digits")
                }
                intermediates.append(
                    Intermediate(
                        name: name, owner: text("owner"), sha256: sha256, parent: parent,
                        validFrom: day("validFrom"), validTo: day("validTo"), crlPartitions: Self.partitions(record["partitionedCRLs"])))
                continue
            }
            guard let sha256 = Hex.decode(hash), sha256.count == 32 else {
                // The CCADB holds placeholder records ("Example Root Certificate", a 66-digit hash)
                // that no program includes: skipped. One a program includes or removed must be read.
                if Self.programStatuses.contains(text("chrome")) || Self.programStatuses.contains(text("mozilla")) {
                    throw malformed("\"sha256\" is not 64 hex digits")
                }
                continue
            }
            // A root in neither program says nothing a verdict uses.
            guard Self.programStatuses.contains(text("chrome")) || Self.programStatuses.contains(text("mozilla")) else { continue }
            let validFrom = Timestamp.parseDay(text("validFrom").replacing(".", with: "-"))
            roots.append(
                Root(
                    name: name, sha256: sha256, chrome: text("chrome"), mozilla: text("mozilla"),
                    tlsCapable: text("tlsCapable").lowercased() == "true", validFrom: validFrom))
        }
        guard records > 0, !roots.isEmpty else {
            throw PincheckError(.malformedRootProgramData, "no root record: not a CCADB export", source: source)
        }
        self.roots = roots
        self.intermediates = intermediates
    }

    /// How many partitioned CRLs a record's `partitionedCRLs` names: a JSON array of URLs, or
    /// the CSV export's comma-separated text.
    private static func partitions(_ value: JSONValue?) -> Int {
        switch value {
        case .array(let urls)?: urls.count { if case .string(let url) = $0 { !url.isEmpty } else { false } }
        case .string(let urls)?: urls.split(separator: ",").count { $0.contains("://") }
        default: 0
        }
    }
}

/// The anchors of Chrome's root store that carry constraints (`chrome-root-store-*-constraints.json`,
/// transcribed from `root_store.textproto`). Constraint blocks of one anchor are ORed; the fields
/// of one block are ANDed.
///
/// Pincheck takes the newest Chrome's behaviour: a block limited to older versions
/// (`max_version_exclusive`) never applies, `min_version` always holds. The one date field,
/// `sct_not_after_sec`, becomes the anchor's distrust date (the latest of the blocks that apply);
/// a block without one leaves the anchor undated. A field Pincheck does not know refuses the
/// file: a constraint read as absent would trust what Chrome refuses.
struct ChromeConstraints {
    typealias Anchor = RootProgramFacts.ChromeAnchor

    let anchors: [Anchor]
    /// The `source` field, when the file has one.
    let revision: String?

    /// Reads the constraints file.
    /// - Throws: `PincheckError` (`input.root-program-data`) for anything not of that shape.
    init(_ bytes: [UInt8], source: String) throws(PincheckError) {
        func malformed(_ message: String) -> PincheckError { PincheckError(.malformedRootProgramData, message, source: source) }
        let document: JSONValue
        do { document = try JSONSyntax.parse(bytes) } catch {
            throw malformed("line \(error.line), column \(error.column): \(error.message)")
        }
        guard case .object(let top) = document, case .array(let list)? = top["anchors"] else {
            throw malformed("not a Chrome Root Store constraints file (an object with an \"anchors\" array)")
        }
        if case .string(let revision)? = top["source"] { self.revision = revision } else { self.revision = nil }
        var anchors: [Anchor] = []
        for (index, entry) in list.enumerated() {
            let position = "anchor #\(index + 1)"
            guard case .object(let anchor) = entry, case .string(let hash)? = anchor["sha256"], let sha256 = Hex.decode(hash), sha256.count == 32,
                case .array(let blocks)? = anchor["constraints"], !blocks.isEmpty
            else {
                throw malformed("\(position): expected \"sha256\" (64 hex digits) and a non-empty \"constraints\" array")
            }
            let name: String = if case .string(let name)? = anchor["name"] { name } else { hash }
            var applying: [Date?] = []
            for (blockIndex, block) in blocks.enumerated() {
                guard case .object(let fields) = block else { throw malformed("\(position), constraints #\(blockIndex + 1): not an object") }
                var applies = true
                var date: Date?
                for (key, value) in fields {
                    switch (key, value) {
                    case ("sct_not_after_sec", .number(let seconds)) where seconds >= 0 && seconds == seconds.rounded():
                        date = Date(timeIntervalSince1970: seconds)
                    case ("min_version", .string):
                        break
                    case ("max_version_exclusive", .string):
                        applies = false
                    default:
                        throw malformed("\(position) (\(name)), constraints #\(blockIndex + 1): \"\(key)\" is not a constraint Pincheck applies")
                    }
                }
                if applies { applying.append(date) }
            }
            let distrustAfter: Date?? =
                if applying.isEmpty { nil } else if applying.contains(where: { $0 == nil }) { .some(nil) } else {
                    .some(applying.compactMap { $0 }.max())
                }
            anchors.append(Anchor(name: name, sha256: sha256, distrustAfter: distrustAfter))
        }
        guard !anchors.isEmpty else { throw malformed("no anchor listed") }
        self.anchors = anchors
    }
}
