internal import PincheckOpenSSL
import FoundationEssentials

/// Which roots the browsers' root programs trust for TLS servers, and until when: Mozilla's (NSS
/// `certdata.txt`) and Chrome's (the Chrome Root Store, with its constraints, and the CCADB's
/// statuses).
///
/// This is what makes an anchor *public*: a root is a Web PKI root when a program trusts it, or
/// did (a removed root is still a program's root, and refused as one), whatever file it was read
/// from. An anchor in no program is private: a company's root installed with
/// `update-ca-certificates` is private although it sits in the system store, and ISRG Root X1
/// given with `--ca-file` is public. ``TrustAnchors/Classification`` overrides this both ways.
///
/// ``bundled`` is generated from the root programs' files by `scripts/generate-root-programs.sh`;
/// a newer data set is read over it with `init(files:over:allowingOlder:)` or `init(contentsOf:over:allowingOlder:)`
/// (TrustEvaluatorFormats, which parses the programs' files; `import TrustEvaluator` has both).
public struct RootPrograms: Sendable {
    /// A browser's root program.
    public enum Program: String, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
        /// Mozilla's (Firefox, NSS; what Debian's `ca-certificates` is made from). A distrust date
        /// is compared with the leaf's notBefore.
        case mozilla
        /// Chrome's. A distrust date (`sct_not_after`) is compared with the leaf's earliest
        /// verified SCT, and with its notBefore when it has none that verifies.
        case chrome

        public var description: String { self == .mozilla ? "Mozilla" : "Chrome" }

        public static func < (lhs: Program, rhs: Program) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One program's word on one root.
    public struct Membership: Sendable, Hashable {
        /// Whether the program trusts the root for TLS servers.
        public enum Status: String, Sendable, Hashable {
            /// Trusted for TLS servers (up to ``Membership/distrustAfter``, when there is one).
            case included
            /// Once trusted, no longer: removed, blocked, or kept for other uses than TLS servers.
            /// With a ``Membership/distrustAfter`` date, the removal ended a distrust schedule and
            /// certificates issued up to the date are judged by it; without one, every TLS server
            /// certificate under the root is refused by that program.
            case removed
        }

        /// The program.
        public let program: Program
        /// Its status for the root.
        public let status: Status
        /// Certificates issued after this instant are not trusted (Mozilla:
        /// `CKA_NSS_SERVER_DISTRUST_AFTER`; Chrome: `sct_not_after_sec`); nil when there is no date.
        /// The date decides for an included root and for a removed one alike.
        public let distrustAfter: Date?
        /// The date of the data that gave the status: a removal without a date is known from then
        /// on, and applies to verification times from then on (the data cannot say when the
        /// program removed the root, only that it had by that date). Nil: at every time.
        public let statusSince: Date?

        public init(program: Program, status: Status, distrustAfter: Date? = nil, statusSince: Date? = nil) {
            self.program = program
            self.status = status
            self.distrustAfter = distrustAfter
            self.statusSince = statusSince
        }
    }

    /// A root some program has (or had).
    public struct Root: Sendable, Hashable {
        /// The program's name for it (NSS's label, the CCADB's name).
        public let name: String
        /// The SHA-256 of its certificate.
        public let sha256: [UInt8]
        /// The SHA-256 of its subject name's DER followed by its SubjectPublicKeyInfo's DER: the
        /// same root re-issued (a new validity, a new signature) matches it too. Nil when the data
        /// named the root by fingerprint only (the CCADB's records carry no certificate).
        public let subjectAndKey: [UInt8]?
        /// The SHA-256 of its SubjectPublicKeyInfo, when the certificate is known.
        public let publicKeySHA256: [UInt8]?
        /// What each program says of it, in ``Program`` order.
        public let memberships: [Membership]

        public init(name: String, sha256: [UInt8], subjectAndKey: [UInt8]?, publicKeySHA256: [UInt8]? = nil, memberships: [Membership]) {
            self.name = name
            self.sha256 = sha256
            self.subjectAndKey = subjectAndKey
            self.publicKeySHA256 = publicKeySHA256
            self.memberships = memberships.sorted { $0.program < $1.program }
        }

        /// What `program` says of this root, if it knows it.
        public func membership(in program: Program) -> Membership? {
            memberships.first { $0.program == program }
        }

        /// The programs that trust it for TLS servers now (whatever their dates).
        public var includedIn: [Program] { memberships.filter { $0.status == .included }.map(\.program) }

        /// Whether some program has removed it or set a date after which it distrusts what it issues.
        public var isDistrustedOrScheduled: Bool { memberships.contains { $0.status == .removed || $0.distrustAfter != nil } }

        /// "Mozilla (distrusts after 2024-11-30), Chrome (removed)".
        public var programSummary: String {
            memberships.map { membership in
                let removed = membership.status == .removed ? "removed" : nil
                let date = membership.distrustAfter.map { "distrusts certificates issued after \(Timestamp.day($0))" }
                let notes = [removed, date].compactMap { $0 }
                return notes.isEmpty ? "\(membership.program)" : "\(membership.program) (\(notes.joined(separator: "; ")))"
            }.joined(separator: ", ")
        }
    }

    /// Where one part of the data came from.
    public struct Source: Sendable, Hashable, CustomStringConvertible {
        /// What kind of file.
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// Mozilla's NSS `certdata.txt`.
            case mozillaCertdata = "nss-certdata"
            /// CCADB records (`ccadb-records.jsonl`): Chrome's statuses, Mozilla's removals.
            case ccadb
            /// Chrome Root Store constraints (`chrome-root-store-*-constraints.json`).
            case chromeConstraints = "chrome-root-store"
        }

        /// What kind of file.
        public let kind: Kind
        /// The revision it was taken at (a commit, a version), as the data says; "file" for data
        /// read at run time that names none.
        public let revision: String
        /// The newest date the file carries (its newest root's notBefore, or a distrust date):
        /// how a newer data set is told from an older one.
        public let asOf: Date
        /// When the data was taken: the revision's date, or for a file read at run time the later
        /// of ``asOf`` and the date of the data it replaces. Its removals hold from then on.
        public let date: Date

        public init(kind: Kind, revision: String, asOf: Date, date: Date? = nil) {
            self.kind = kind
            self.revision = revision
            self.asOf = asOf
            self.date = date ?? asOf
        }

        public var description: String { "\(kind.rawValue) \(revision), taken \(Timestamp.day(date))" }
    }

    /// Every root of the data.
    public var roots: [Root] { storage.index.roots }
    /// Where the data came from, one entry per kind of file.
    public var sources: [Source] { storage.sources }
    /// The facts the roots were combined from, when they came from the programs' files: a newer
    /// file replaces its own kind's facts (`init(files:over:allowingOlder:)`, in TrustEvaluatorFormats).
    package var facts: RootProgramFacts? { storage.index.facts }

    private let storage: Storage

    /// The roots and their indexes: built when made from roots or files, and on first use from the
    /// bundled text (``bundled``), which a lookup that misses does not decode at all.
    private final class Storage: Sendable {
        struct Index: Sendable {
            let roots: [Root]
            let sources: [Source]
            let byFingerprint: [DigestKey: Int]
            /// By the SHA-256 of the SubjectPublicKeyInfo (a ``PublicKeyPin``'s bytes, which a
            /// ``Certificate`` holds already), for roots whose ``Root/subjectAndKey`` is known: a
            /// lookup that misses costs no hashing.
            let byKey: [DigestKey: [Int]]
            let facts: RootProgramFacts?

            init(roots: [Root], sources: [Source], facts: RootProgramFacts?) {
                self.roots = roots
                self.sources = sources
                self.facts = facts
                var byFingerprint: [DigestKey: Int] = [:]
                var byKey: [DigestKey: [Int]] = [:]
                byFingerprint.reserveCapacity(roots.count)
                for (index, root) in roots.enumerated() {
                    let fingerprint = DigestKey(root.sha256)
                    byFingerprint[fingerprint] = byFingerprint[fingerprint] ?? index
                    if root.subjectAndKey != nil, let key = root.publicKeySHA256 { byKey[DigestKey(key), default: []].append(index) }
                }
                self.byFingerprint = byFingerprint
                self.byKey = byKey
            }
        }

        /// The encoded facts (``RootProgramFacts/encoded()``) not decoded yet; nil once built.
        private let encoded: String?
        private let built: Locked<Index?>
        private let sourcesRead: Locked<[Source]?>

        init(_ index: Index) {
            encoded = nil
            built = Locked(index)
            sourcesRead = Locked(index.sources)
        }

        init(encoded: String) {
            self.encoded = encoded
            built = Locked(nil)
            sourcesRead = Locked(nil)
        }

        /// Whether the roots have been decoded (always, unless made from the encoded text).
        var isDecoded: Bool { built.withLock { $0 != nil } }

        var index: Index {
            built.withLock { built in
                if let built { return built }
                let facts = Self.decode(encoded ?? "")
                let index = Index(roots: facts.combined(), sources: facts.sources, facts: facts)
                built = index
                return index
            }
        }

        /// The sources, from the text's leading `source` lines when nothing else was decoded.
        var sources: [Source] {
            sourcesRead.withLock { read in
                if let read { return read }
                // Only the leading lines are read: the text is hundreds of kilobytes.
                let text = (encoded ?? "").utf8
                var end = text.startIndex
                while text[end...].starts(with: "source\t".utf8), let newline = text[end...].firstIndex(of: UInt8(ascii: "\n")) {
                    end = text.index(after: newline)
                }
                let sources = Self.decode(String(decoding: text[..<end], as: UTF8.self)).sources
                read = sources
                return sources
            }
        }

        /// Certificates found not named by the text (at most ``missLimit``): a process looking up
        /// its one private anchor at every evaluation searches the text once.
        private let misses = Locked(Set<DigestKey>())
        private static let missLimit = 256

        /// True when the text, not decoded yet, cannot name `certificate`: neither its fingerprint
        /// nor its key's SHA-256 occurs in it (as lowercase hex, the text's form).
        func cannotName(_ certificate: Certificate) -> Bool {
            guard let encoded, built.withLock({ $0 == nil }) else { return false }
            let key = DigestKey(certificate.sha256Fingerprint)
            if misses.withLock({ $0.contains(key) }) { return true }
            var text = encoded
            let absent = text.withUTF8 { text in
                let bytes = UnsafeRawBufferPointer(text)
                return !ByteSearch.contains(bytes, Hex.lowercase(certificate.sha256Fingerprint))
                    && !ByteSearch.contains(bytes, Hex.lowercase(certificate.publicKeyPin.digest))
            }
            if absent { misses.withLock { if $0.count < Self.missLimit { $0.insert(key) } } }
            return absent
        }

        private static func decode(_ text: String) -> RootProgramFacts {
            do { return try RootProgramFacts(encoded: text) } catch {
                // The text is generated and checked in; RootProgramsTests decodes it on every run.
                fatalError("the bundled root-program data does not decode: \(error)")
            }
        }
    }

    /// Data made of these roots (a test's own root program, say). Files cannot be loaded over it.
    public init(roots: [Root], sources: [Source]) {
        storage = Storage(Storage.Index(roots: roots, sources: sources, facts: nil))
    }

    package init(facts: RootProgramFacts) {
        storage = Storage(Storage.Index(roots: facts.combined(), sources: facts.sources, facts: facts))
    }

    /// Data decoded from ``RootProgramFacts/encoded()``'s form when first needed.
    init(lazilyDecoding encoded: String) {
        storage = Storage(encoded: encoded)
    }

    /// Whether the roots have been decoded: data made from the encoded text (``bundled``) is
    /// decoded by the first lookup that may find a root, and by ``roots``.
    var isDecoded: Bool { storage.isDecoded }

    /// No program at all: every anchor is private, nothing is distrusted by date.
    public static let none = RootPrograms(roots: [], sources: [])

    /// The root `certificate` is, if a program has it: by its fingerprint, else by its subject and key.
    public func root(for certificate: Certificate) -> Root? {
        if storage.cannotName(certificate) { return nil }
        let index = storage.index
        if let position = index.byFingerprint[DigestKey(certificate.sha256Fingerprint)] { return index.roots[position] }
        guard let candidates = index.byKey[DigestKey(certificate.publicKeyPin.digest)] else { return nil }
        let subjectAndKey = Self.subjectAndKey(of: certificate)
        return candidates.lazy.map { index.roots[$0] }.first { $0.subjectAndKey == subjectAndKey }
    }

    /// The root with this certificate fingerprint, if a program has it.
    public func root(sha256: [UInt8]) -> Root? {
        let index = storage.index
        return index.byFingerprint[DigestKey(sha256)].map { index.roots[$0] }
    }

    /// The roots whose key is `pin` (known for the roots of Mozilla's file, which carries certificates).
    public func roots(withKey pin: PublicKeyPin) -> [Root] {
        guard pin.algorithm == .sha256 else { return [] }
        let index = storage.index
        return (index.byKey[DigestKey(pin.digest)] ?? []).map { index.roots[$0] }
    }

    /// What ``Root/subjectAndKey`` is for a certificate.
    public static func subjectAndKey(of certificate: Certificate) -> [UInt8] {
        Digest.sha256(certificate.handle.subjectDER + certificate.subjectPublicKeyInfoDER)
    }

    /// One line naming the data: "nss-certdata 9d75dfde… (data to 2026-05-01); ccadb …".
    public var provenance: String {
        sources.isEmpty ? "none" : sources.map(\.description).joined(separator: "; ")
    }
}

/// A SHA-256 digest as a dictionary key: four words hashed at once (an `[UInt8]` key is hashed
/// byte by byte, which made building the bundled data's indexes a visible part of a command's start).
struct DigestKey: Hashable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    init(_ bytes: [UInt8]) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        bytes.withUnsafeBytes { raw in
            func word(_ offset: Int) -> UInt64 {
                guard raw.count >= offset + 8 else { return 0 }
                return raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            }
            words = (word(0), word(8), word(16), word(24))
        }
        // Shorter digests (never 32 bytes here) still differ from each other: mix in the length.
        self.words = bytes.count == 32 ? words : (words.0 ^ UInt64(bytes.count), words.1, words.2, words.3 ^ UInt64(bytes.count))
    }

    static func == (lhs: DigestKey, rhs: DigestKey) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
