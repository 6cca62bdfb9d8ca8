import FoundationEssentials

/// What each source file says, kept apart so that one can be replaced by a newer file while the
/// others stay: Mozilla's certdata decides Mozilla's membership of the roots it lists; the CCADB
/// decides Chrome's, and Mozilla's for roots certdata does not list (removed ones); Chrome's
/// constraints give Chrome's dates.
///
/// Also the bundled data's form: one tab-separated line per fact (``encoded()``), written by
/// `pincheck root-programs --emit-swift` and read back by ``init(encoded:)``.
struct RootProgramFacts: Sendable {
    var mozilla: [MozillaCertdata.Root] = []
    var ccadb: [CCADBRoots.Root] = []
    /// The CCADB's TLS-capable intermediates, when a CCADB file was read at run time (the bundled
    /// ones are decoded apart, on first use: ``RootPrograms/families``).
    var intermediates: [CCADBRoots.Intermediate]?
    var chrome: [ChromeConstraints.Anchor] = []
    var sources: [RootPrograms.Source] = []

    /// Each root some program has, with every program's word on it.
    func combined() -> [RootPrograms.Root] {
        struct Entry {
            var name: String
            var subjectAndKey: [UInt8]?
            var publicKeySHA256: [UInt8]?
            var mozilla: RootPrograms.Membership?
            var chrome: RootPrograms.Membership?
        }
        var order: [[UInt8]] = []
        var entries: [[UInt8]: Entry] = [:]
        func update(_ sha256: [UInt8], name: String, _ change: (inout Entry) -> Void) {
            if entries[sha256] == nil {
                order.append(sha256)
                entries[sha256] = Entry(name: name)
            }
            change(&entries[sha256]!)
        }
        func date(_ kind: RootPrograms.Source.Kind) -> Date? { sources.first { $0.kind == kind }?.date }
        let (certdataDate, ccadbDate, chromeDate) = (date(.mozillaCertdata), date(.ccadb), date(.chromeConstraints))
        for root in mozilla {
            update(root.sha256, name: root.label) { entry in
                entry.subjectAndKey = root.subjectAndKey
                entry.publicKeySHA256 = root.publicKeySHA256
                // A root whose trust bit was taken away after a distrust date keeps the date: the
                // removal ends the schedule once what was issued before it has expired.
                entry.mozilla = RootPrograms.Membership(program: .mozilla, status: root.trustedForServers ? .included : .removed,
                                                        distrustAfter: root.distrustAfter, statusSince: certdataDate)
            }
        }
        let inCertdata = Set(mozilla.map(\.sha256))
        for root in ccadb {
            var mozillaStatus: RootPrograms.Membership.Status?
            if !inCertdata.contains(root.sha256) {
                if root.mozilla == "Removed" { mozillaStatus = .removed }
                else if root.mozilla == "Included", root.tlsCapable { mozillaStatus = .included }
            }
            let chromeStatus: RootPrograms.Membership.Status? = switch root.chrome {
            case "Included": .included
            case "Removed", "Blocked": .removed
            default: nil
            }
            guard mozillaStatus != nil || chromeStatus != nil else { continue }
            update(root.sha256, name: root.name) { entry in
                if let mozillaStatus { entry.mozilla = RootPrograms.Membership(program: .mozilla, status: mozillaStatus, statusSince: ccadbDate) }
                if let chromeStatus { entry.chrome = RootPrograms.Membership(program: .chrome, status: chromeStatus, statusSince: ccadbDate) }
            }
        }
        for anchor in chrome {
            update(anchor.sha256, name: anchor.name) { entry in
                // A root the CCADB says Chrome removed stays removed, with the constraint's date:
                // Chrome removes a constrained root once what it issued before the date has expired.
                let removed = entry.chrome?.status == .removed
                entry.chrome = switch anchor.distrustAfter {
                case .none: RootPrograms.Membership(program: .chrome, status: .removed, statusSince: chromeDate)
                case .some(let date): RootPrograms.Membership(program: .chrome, status: removed ? .removed : .included, distrustAfter: date,
                                                              statusSince: removed ? ccadbDate : chromeDate)
                }
            }
        }
        return order.compactMap { sha256 in
            guard let entry = entries[sha256] else { return nil }
            let memberships = [entry.mozilla, entry.chrome].compactMap { $0 }
            guard !memberships.isEmpty else { return nil }
            return RootPrograms.Root(name: entry.name, sha256: sha256, subjectAndKey: entry.subjectAndKey, publicKeySHA256: entry.publicKeySHA256,
                                     memberships: memberships)
        }
    }

    // MARK: The bundled form

    /// One line per source and per fact, fields separated by tabs:
    /// `source KIND REVISION ASOF DATE`, `m SHA256 SUBJECTKEY SPKI TRUSTED DISTRUST NOTBEFORE LABEL`,
    /// `c SHA256 CHROME MOZILLA TLSCAPABLE VALIDFROM NAME`, `k SHA256 DISTRUST NAME`
    /// (dates as Unix seconds, `-` for none, `x` for a Chrome anchor no block trusts).
    func encoded() -> String {
        func seconds(_ date: Date?) -> String { date.map { String(Int64($0.timeIntervalSince1970)) } ?? "-" }
        func clean(_ text: String) -> String { String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }) }
        var lines: [String] = []
        for source in sources {
            lines.append(["source", source.kind.rawValue, clean(source.revision), seconds(source.asOf), seconds(source.date)].joined(separator: "\t"))
        }
        for root in mozilla {
            lines.append(["m", Hex.encode(root.sha256), Hex.encode(root.subjectAndKey), Hex.encode(root.publicKeySHA256), root.trustedForServers ? "1" : "0",
                          seconds(root.distrustAfter), seconds(root.notBefore), clean(root.label)].joined(separator: "\t"))
        }
        for root in ccadb {
            lines.append(["c", Hex.encode(root.sha256), clean(root.chrome), clean(root.mozilla), root.tlsCapable ? "1" : "0",
                          seconds(root.validFrom), clean(root.name)].joined(separator: "\t"))
        }
        for anchor in chrome {
            let date = switch anchor.distrustAfter { case .none: "x"; case .some(let date): seconds(date) }
            lines.append(["k", Hex.encode(anchor.sha256), date, clean(anchor.name)].joined(separator: "\t"))
        }
        return lines.joined(separator: "\n")
    }

    /// The intermediates, one `i SHA256 PARENT VALIDFROM VALIDTO PARTITIONS OWNER NAME` line each.
    static func encode(_ intermediates: [CCADBRoots.Intermediate]) -> String {
        func seconds(_ date: Date?) -> String { date.map { String(Int64($0.timeIntervalSince1970)) } ?? "-" }
        func clean(_ text: String) -> String { String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }) }
        return intermediates.map { ca in
            ["i", Hex.encode(ca.sha256), Hex.encode(ca.parent), seconds(ca.validFrom), seconds(ca.validTo), String(ca.crlPartitions),
             clean(ca.owner), clean(ca.name)].joined(separator: "\t")
        }.joined(separator: "\n")
    }

    /// Reads ``encode(_:)``'s form.
    static func decodeIntermediates(_ text: String) throws(PincheckError) -> [CCADBRoots.Intermediate] {
        var result: [CCADBRoots.Intermediate] = []
        for (index, line) in text.split(separator: "\n").enumerated() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            func date(_ field: Substring) -> Date? { Int64(field).map { Date(timeIntervalSince1970: TimeInterval($0)) } }
            guard fields.count == 8, fields[0] == "i", let sha256 = Hex.decode(String(fields[1])), let parent = Hex.decode(String(fields[2])),
                  let partitions = Int(fields[5]) else {
                throw PincheckError(.malformedRootProgramData, "line \(index + 1) of the encoded intermediates is malformed")
            }
            result.append(CCADBRoots.Intermediate(name: String(fields[7]), owner: String(fields[6]), sha256: sha256, parent: parent,
                                                  validFrom: date(fields[3]), validTo: date(fields[4]), crlPartitions: partitions))
        }
        return result
    }

    /// Reads ``encoded()``'s form.
    init(encoded text: String) throws(PincheckError) {
        func malformed(_ line: Int) -> PincheckError {
            PincheckError(.malformedRootProgramData, "line \(line) of the encoded root-program data is malformed")
        }
        func date(_ field: Substring, _ line: Int) throws(PincheckError) -> Date? {
            if field == "-" { return nil }
            guard let seconds = Int64(field) else { throw malformed(line) }
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        func hash(_ field: Substring, _ line: Int) throws(PincheckError) -> [UInt8] {
            guard let bytes = Hex.decode(String(field)), bytes.count == 32 else { throw malformed(line) }
            return bytes
        }
        for (index, line) in text.split(separator: "\n").enumerated() {
            let number = index + 1
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            switch (fields.first, fields.count) {
            case ("source", 5):
                guard let kind = RootPrograms.Source.Kind(rawValue: String(fields[1])), let asOf = try date(fields[3], number),
                      let taken = try date(fields[4], number) else { throw malformed(number) }
                sources.append(RootPrograms.Source(kind: kind, revision: String(fields[2]), asOf: asOf, date: taken))
            case ("m", 8):
                guard let notBefore = try date(fields[6], number) else { throw malformed(number) }
                mozilla.append(MozillaCertdata.Root(label: String(fields[7]), sha256: try hash(fields[1], number), subjectAndKey: try hash(fields[2], number),
                                                    publicKeySHA256: try hash(fields[3], number),
                                                    trustedForServers: fields[4] == "1", distrustAfter: try date(fields[5], number), notBefore: notBefore))
            case ("c", 7):
                ccadb.append(CCADBRoots.Root(name: String(fields[6]), sha256: try hash(fields[1], number), chrome: String(fields[2]), mozilla: String(fields[3]),
                                             tlsCapable: fields[4] == "1", validFrom: try date(fields[5], number)))
            case ("k", 4):
                let distrust: Date?? = fields[2] == "x" ? nil : .some(try date(fields[2], number))
                chrome.append(ChromeConstraints.Anchor(name: String(fields[3]), sha256: try hash(fields[1], number), distrustAfter: distrust))
            default:
                throw malformed(number)
            }
        }
    }

    init() {}
}
