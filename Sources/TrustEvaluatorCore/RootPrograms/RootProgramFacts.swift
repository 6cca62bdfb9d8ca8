import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What each source file says, kept apart so that one can be replaced by a newer file while the
/// others stay: Mozilla's certdata decides Mozilla's membership of the roots it lists; the CCADB
/// decides Chrome's, and Mozilla's for roots certdata does not list (removed ones); Chrome's
/// constraints give Chrome's dates.
///
/// Also the bundled data's form: one tab-separated line per fact (``encoded()``), written by
/// `scripts/generate-root-programs.sh` and read back by ``init(encoded:)``. The programs' own
/// files are parsed into these facts by TrustEvaluatorFormats (`RootPrograms(files:over:allowingOlder:)`).
package struct RootProgramFacts: Sendable {
    package var mozilla: [MozillaRoot] = []
    package var ccadb: [CCADBRoot] = []
    /// The CCADB's TLS-capable intermediates, when a CCADB file was read at run time (the bundled
    /// ones are decoded apart, on first use: ``RootPrograms/families``).
    package var intermediates: [Intermediate]?
    package var chrome: [ChromeAnchor] = []
    package var sources: [RootPrograms.Source] = []

    /// Each root some program has, with every program's word on it.
    func combined() -> [RootPrograms.Root] {
        var order: [[UInt8]] = []
        var entries: [DigestKey: Entry] = [:]
        func update(_ sha256: [UInt8], name: String, _ change: (inout Entry) -> Void) {
            let key = DigestKey(sha256)
            if entries[key] == nil {
                order.append(sha256)
                entries[key] = Entry(name: name)
            }
            change(&entries[key]!)
        }
        func date(_ kind: RootPrograms.Source.Kind) -> Date? { sources.first { $0.kind == kind }?.date }
        let (certdataDate, ccadbDate, chromeDate) = (date(.mozillaCertdata), date(.ccadb), date(.chromeConstraints))
        for root in mozilla {
            update(root.sha256, name: root.label) { entry in
                entry.subjectAndKey = root.subjectAndKey
                entry.publicKeySHA256 = root.publicKeySHA256
                // A root whose trust bit was taken away after a distrust date keeps the date: the
                // removal ends the schedule once what was issued before it has expired.
                entry.mozilla = RootPrograms.Membership(
                    program: .mozilla, status: root.trustedForServers ? .included : .removed,
                    distrustAfter: root.distrustAfter, statusSince: certdataDate)
            }
        }
        let inCertdata = Set(mozilla.map { DigestKey($0.sha256) })
        for root in ccadb {
            let (mozillaStatus, chromeStatus) = Self.statuses(root, inCertdata: inCertdata.contains(DigestKey(root.sha256)))
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
                entry.chrome =
                    switch anchor.distrustAfter {
                    case .none: RootPrograms.Membership(program: .chrome, status: .removed, statusSince: chromeDate)
                    case .some(let date):
                        RootPrograms.Membership(
                            program: .chrome, status: removed ? .removed : .included, distrustAfter: date,
                            statusSince: removed ? ccadbDate : chromeDate)
                    }
            }
        }
        return Self.roots(order, entries)
    }

    /// One root as the programs' facts are combined into it.
    private struct Entry {
        var name: String
        var subjectAndKey: [UInt8]?
        var publicKeySHA256: [UInt8]?
        var mozilla: RootPrograms.Membership?
        var chrome: RootPrograms.Membership?
    }

    /// The combined roots in the order first met, each with at least one program's membership.
    private static func roots(_ order: [[UInt8]], _ entries: [DigestKey: Entry]) -> [RootPrograms.Root] {
        order.compactMap { sha256 in
            guard let entry = entries[DigestKey(sha256)] else { return nil }
            let memberships = [entry.mozilla, entry.chrome].compactMap { $0 }
            guard !memberships.isEmpty else { return nil }
            return RootPrograms.Root(
                name: entry.name, sha256: sha256, subjectAndKey: entry.subjectAndKey, publicKeySHA256: entry.publicKeySHA256,
                memberships: memberships)
        }
    }

    /// What the CCADB says of a root in each program; Mozilla's only for a root certdata.txt does not hold (certdata is newer).
    private static func statuses(_ root: CCADBRoot, inCertdata: Bool) -> (
        mozilla: RootPrograms.Membership.Status?, chrome: RootPrograms.Membership.Status?
    ) {
        var mozilla: RootPrograms.Membership.Status?
        if !inCertdata {
            if root.mozilla == "Removed" { mozilla = .removed } else if root.mozilla == "Included", root.tlsCapable { mozilla = .included }
        }
        let chrome: RootPrograms.Membership.Status? =
            switch root.chrome {
            case "Included": .included
            case "Removed", "Blocked": .removed
            default: nil
            }
        return (mozilla, chrome)
    }

    // MARK: The bundled form

    /// One line per source and per fact, fields separated by tabs:
    /// `source KIND REVISION ASOF DATE`, `m SHA256 SUBJECTKEY SPKI TRUSTED DISTRUST NOTBEFORE LABEL`,
    /// `c SHA256 CHROME MOZILLA TLSCAPABLE VALIDFROM NAME`, `k SHA256 DISTRUST NAME`
    /// (dates as Unix seconds, `-` for none, `x` for a Chrome anchor no block trusts).
    package func encoded() -> String {
        func seconds(_ date: Date?) -> String { date.map { String(Int64($0.timeIntervalSince1970)) } ?? "-" }
        func clean(_ text: String) -> String { String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }) }
        var lines: [String] = []
        for source in sources {
            lines.append(
                ["source", source.kind.rawValue, clean(source.revision), seconds(source.asOf), seconds(source.date)].joined(separator: "\t"))
        }
        for root in mozilla {
            lines.append(
                [
                    "m", Hex.encode(root.sha256), Hex.encode(root.subjectAndKey), Hex.encode(root.publicKeySHA256),
                    root.trustedForServers ? "1" : "0",
                    seconds(root.distrustAfter), seconds(root.notBefore), clean(root.label),
                ].joined(separator: "\t"))
        }
        for root in ccadb {
            lines.append(
                [
                    "c", Hex.encode(root.sha256), clean(root.chrome), clean(root.mozilla), root.tlsCapable ? "1" : "0",
                    seconds(root.validFrom), clean(root.name),
                ].joined(separator: "\t"))
        }
        for anchor in chrome {
            let date =
                switch anchor.distrustAfter {
                case .none: "x";
                case .some(let date): seconds(date)
                }
            lines.append(["k", Hex.encode(anchor.sha256), date, clean(anchor.name)].joined(separator: "\t"))
        }
        return lines.joined(separator: "\n")
    }

    /// The intermediates, one `i SHA256 PARENT VALIDFROM VALIDTO PARTITIONS OWNER NAME` line each.
    package static func encode(_ intermediates: [Intermediate]) -> String {
        func seconds(_ date: Date?) -> String { date.map { String(Int64($0.timeIntervalSince1970)) } ?? "-" }
        func clean(_ text: String) -> String { String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }) }
        return intermediates.map { ca in
            [
                "i", Hex.encode(ca.sha256), Hex.encode(ca.parent), seconds(ca.validFrom), seconds(ca.validTo), String(ca.crlPartitions),
                clean(ca.owner), clean(ca.name),
            ].joined(separator: "\t")
        }.joined(separator: "\n")
    }

    /// Reads ``encode(_:)``'s form.
    static func decodeIntermediates(_ encoded: String) throws(PincheckError) -> [Intermediate] {
        var result: [Intermediate] = []
        var bytes = Array(encoded.utf8)
        try bytes.withUnsafeMutableBufferPointer { (buffer: inout UnsafeMutableBufferPointer<UInt8>) throws(PincheckError) in
            try eachLine(UnsafeBufferPointer(buffer)) { (number: Int, fields: [Field]) throws(PincheckError) in
                guard fields.count == 8, fields[0].elementsEqual("i".utf8), let sha256 = hash(fields[1]), let parent = hash(fields[2]),
                    case .some(let validFrom) = date(fields[3]), case .some(let validTo) = date(fields[4]), let partitions = Int(Self.text(fields[5]))
                else {
                    throw PincheckError(.malformedRootProgramData, "line \(number) of the encoded intermediates is malformed")
                }
                result.append(
                    Intermediate(
                        name: Self.text(fields[7]), owner: Self.text(fields[6]), sha256: sha256, parent: parent,
                        validFrom: validFrom, validTo: validTo, crlPartitions: partitions))
            }
        }
        return result
    }

    /// Reads ``encoded()``'s form. Byte by byte: every process that evaluates decodes the bundled
    /// data once, and reading it as `Character`s cost a `pincheck verify` about 5 ms.
    init(encoded text: String) throws(PincheckError) {
        var bytes = Array(text.utf8)
        try bytes.withUnsafeMutableBufferPointer { (buffer: inout UnsafeMutableBufferPointer<UInt8>) throws(PincheckError) in
            try Self.eachLine(UnsafeBufferPointer(buffer)) { (number: Int, fields: [Slice<UnsafeBufferPointer<UInt8>>]) throws(PincheckError) in
                try self.read(line: number, fields)
            }
        }
    }

    private typealias Field = Slice<UnsafeBufferPointer<UInt8>>

    /// Calls `body` with each non-empty line's tab-separated fields. Lines and fields are found
    /// with `memchr`: the bundled text is read by every process that evaluates.
    private static func eachLine(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Int, [Field]) throws(PincheckError) -> Void) throws(PincheckError) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        /// The offset of the first `byte` in `start..<end`, or `end`.
        func find(_ byte: UInt8, from start: Int, to end: Int) -> Int {
            guard start < end, let found = memchr(base + start, Int32(byte), end - start) else { return end }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
        }
        var number = 0
        var start = 0
        var fields: [Field] = []
        fields.reserveCapacity(8)
        while start < count {
            number += 1
            let end = find(0x0A, from: start, to: count)
            if end > start {
                fields.removeAll(keepingCapacity: true)
                var fieldStart = start
                while true {
                    let tab = find(0x09, from: fieldStart, to: end)
                    fields.append(bytes[fieldStart..<tab])
                    guard tab < end else { break }
                    fieldStart = tab + 1
                }
                try body(number, fields)
            }
            start = end + 1
        }
    }

    private static func text(_ field: Field) -> String { String(decoding: field, as: UTF8.self) }

    private static func hash(_ field: Field) -> [UInt8]? {
        guard field.count == 64 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        var index = field.startIndex
        for position in 0..<32 {
            guard let high = nibble(field[index]), let low = nibble(field[index + 1]) else { return nil }
            bytes[position] = high << 4 | low
            index += 2
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }

    /// Unix seconds, or `-` for none; `.none` when the field is neither.
    private static func date(_ field: Field) -> Date?? {
        if field.count == 1, field.first == UInt8(ascii: "-") { return .some(nil) }
        guard !field.isEmpty, field.count <= 18 else { return .none }
        var value: Int64 = 0
        var negative = false
        for (offset, byte) in field.enumerated() {
            if offset == 0, byte == UInt8(ascii: "-") { negative = true; continue }
            guard (0x30...0x39).contains(byte) else { return .none }
            value = value * 10 + Int64(byte - 0x30)
        }
        return .some(Date(timeIntervalSince1970: TimeInterval(negative ? -value : value)))
    }

    private mutating func read(line number: Int, _ fields: [Field]) throws(PincheckError) {
        func malformed() -> PincheckError {
            PincheckError(.malformedRootProgramData, "line \(number) of the encoded root-program data is malformed")
        }
        func hash(_ field: Field) throws(PincheckError) -> [UInt8] {
            guard let bytes = Self.hash(field) else { throw malformed() }
            return bytes
        }
        func date(_ field: Field) throws(PincheckError) -> Date? {
            guard case .some(let date) = Self.date(field) else { throw malformed() }
            return date
        }
        switch (Self.text(fields[0]), fields.count) {
        case ("source", 5):
            guard let kind = RootPrograms.Source.Kind(rawValue: Self.text(fields[1])), let asOf = try date(fields[3]),
                let taken = try date(fields[4])
            else { throw malformed() }
            sources.append(RootPrograms.Source(kind: kind, revision: Self.text(fields[2]), asOf: asOf, date: taken))
        case ("m", 8):
            guard let notBefore = try date(fields[6]) else { throw malformed() }
            mozilla.append(
                MozillaRoot(
                    label: Self.text(fields[7]), sha256: try hash(fields[1]), subjectAndKey: try hash(fields[2]),
                    publicKeySHA256: try hash(fields[3]), trustedForServers: fields[4].elementsEqual("1".utf8),
                    distrustAfter: try date(fields[5]), notBefore: notBefore))
        case ("c", 7):
            ccadb.append(
                CCADBRoot(
                    name: Self.text(fields[6]), sha256: try hash(fields[1]), chrome: Self.text(fields[2]), mozilla: Self.text(fields[3]),
                    tlsCapable: fields[4].elementsEqual("1".utf8), validFrom: try date(fields[5])))
        case ("k", 4):
            let distrust: Date?? = fields[2].elementsEqual("x".utf8) ? nil : .some(try date(fields[2]))
            chrome.append(ChromeAnchor(name: Self.text(fields[3]), sha256: try hash(fields[1]), distrustAfter: distrust))
        default:
            throw malformed()
        }
    }

    package init() {}
}
