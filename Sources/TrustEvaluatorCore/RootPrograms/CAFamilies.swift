import FoundationEssentials

/// The intermediates a CA issues TLS certificates from, as the CCADB discloses them: which
/// siblings an issuer rotates between (Let's Encrypt's E5–E9 under ISRG Root X2), when each
/// expires, and how many CRL partitions it publishes. What `plan` and `lint` say of a pin's reach.
///
/// The CCADB names certificates by fingerprint: a CA is found by the SHA-256 of its certificate,
/// so a cross-signed CA (the same key under two parents) is two entries, one per parent.
public struct CAFamilies: Sendable {
    /// One intermediate.
    public struct CA: Sendable, Hashable {
        /// The CCADB's name for it ("E7").
        public let name: String
        /// Its CA owner ("Internet Security Research Group").
        public let owner: String
        /// The SHA-256 of its certificate, and of its parent's.
        public let sha256: [UInt8]
        public let parentSHA256: [UInt8]
        /// Its validity.
        public let validFrom: Date?
        public let validTo: Date?
        /// How many partitioned CRLs it publishes (0: one full CRL, or none disclosed).
        public let crlPartitions: Int

        /// Whether it is valid at `time` (an unknown bound does not exclude it).
        public func isValid(at time: Date) -> Bool {
            (validFrom.map { $0 <= time } ?? true) && (validTo.map { time <= $0 } ?? true)
        }
    }

    /// Every TLS-capable, unrevoked intermediate the data discloses.
    public let all: [CA]
    private let bySHA256: [DigestKey: Int]
    private let byParent: [DigestKey: [Int]]

    init(_ intermediates: [RootProgramFacts.Intermediate]) {
        all = intermediates.map {
            CA(
                name: $0.name, owner: $0.owner, sha256: $0.sha256, parentSHA256: $0.parent,
                validFrom: $0.validFrom, validTo: $0.validTo, crlPartitions: $0.crlPartitions)
        }
        var bySHA256: [DigestKey: Int] = [:]
        var byParent: [DigestKey: [Int]] = [:]
        for (index, ca) in all.enumerated() {
            let key = DigestKey(ca.sha256)
            bySHA256[key] = bySHA256[key] ?? index
            byParent[DigestKey(ca.parentSHA256), default: []].append(index)
        }
        self.bySHA256 = bySHA256
        self.byParent = byParent
    }

    /// The disclosed intermediate `certificate` is, if it is one.
    public func ca(for certificate: Certificate) -> CA? {
        ca(sha256: certificate.sha256Fingerprint)
    }

    /// The disclosed intermediate with this certificate fingerprint.
    public func ca(sha256: [UInt8]) -> CA? {
        bySHA256[DigestKey(sha256)].map { all[$0] }
    }

    /// The intermediates `parent` (a root's or an intermediate's certificate fingerprint) issued
    /// that are valid at `time`, by name.
    public func issued(by parent: [UInt8], at time: Date) -> [CA] {
        (byParent[DigestKey(parent)] ?? []).map { all[$0] }.filter { $0.isValid(at: time) }.sorted { $0.name < $1.name }
    }

    /// `ca` and its siblings: what the same owner issues from under the same parent, valid at `time`.
    public func siblings(of ca: CA, at time: Date) -> [CA] {
        issued(by: ca.parentSHA256, at: time).filter { $0.owner == ca.owner }
    }
}

extension RootPrograms {
    /// The name of the root or disclosed intermediate with this fingerprint (a CA's parent).
    public func caName(sha256: [UInt8]) -> String? {
        root(sha256: sha256)?.name ?? families.ca(sha256: sha256)?.name
    }

    /// The CA families: from a CCADB file read at run time, else from the bundled data (decoded
    /// on first use, so an evaluation never pays for it).
    public var families: CAFamilies {
        if let intermediates = facts?.intermediates { return CAFamilies(intermediates) }
        return Self.bundledFamilies
    }

    /// The bundled CCADB's families.
    public static let bundledFamilies: CAFamilies = {
        do { return CAFamilies(try RootProgramFacts.decodeIntermediates(BundledRootPrograms.intermediates)) } catch {
            // Generated and checked in; RootProgramDataTests decodes it on every run.
            fatalError("the bundled intermediates do not decode: \(error)")
        }
    }()
}
