package import PincheckOpenSSL

/// A certificate revocation list: supplied by the caller, or fetched from a distribution point
/// (``RevocationListFetcher``).
public struct CertificateRevocationList: Sendable, Hashable {
    package let handle: CRLHandle
    /// The SHA-256 of the DER, computed once: what equality, hashing and the verdict cache use.
    let fingerprint: SHA256Digest

    /// Parses one CRL in DER.
    /// - Throws: ``PincheckError`` (`input.empty`, `input.malformed-der`).
    public init(derEncoded: [UInt8], source: String? = nil) throws(PincheckError) {
        guard !derEncoded.isEmpty else { throw PincheckError(.emptyInput, "no bytes where a DER CRL was expected", source: source) }
        do { handle = try CRLHandle(der: derEncoded) } catch { throw PincheckError(error, source: source) }
        fingerprint = SHA256Digest(hashing: derEncoded)
    }

    /// Parses the single `X509 CRL` block of a PEM text.
    /// - Throws: ``PincheckError`` when the text holds no CRL, more than one block, or a broken one.
    public init(pemEncoded text: String, source: String? = nil) throws(PincheckError) {
        let blocks = try PEM.blocks(in: text, source: source)
        guard blocks.count == 1, blocks[0].label == "X509 CRL" else {
            throw PincheckError(.malformedPEM, "expected one X509 CRL block, found \(blocks.map(\.label))", source: source)
        }
        try self.init(derEncoded: try blocks[0].bytes(source: source), source: source)
    }

    /// Reads the CRLs in a file: PEM (one or more `X509 CRL` blocks) or one DER CRL.
    /// - Throws: ``PincheckError`` naming the file: unreadable, empty, or not CRLs.
    public static func load(contentsOf path: String) throws(PincheckError) -> [CertificateRevocationList] {
        try parse(try InputFile.read(path, limit: InputFile.certificateLimit, what: "CRL file"), source: path)
    }

    /// The CRLs in a file's bytes: PEM (one or more `X509 CRL` blocks) or one DER CRL.
    package static func parse(_ bytes: [UInt8], source path: String) throws(PincheckError) -> [CertificateRevocationList] {
        guard PEM.looksLikePEM(bytes) else { return [try CertificateRevocationList(derEncoded: bytes, source: path)] }
        var lists: [CertificateRevocationList] = []
        for (index, block) in try PEM.blocks(in: bytes, source: path).enumerated() {
            guard block.label == "X509 CRL" else {
                throw PincheckError(
                    .unexpectedPEMBlock, "PEM block #\(index + 1) (line \(block.line)) is labelled \(block.label), not X509 CRL", source: path)
            }
            lists.append(try CertificateRevocationList(derEncoded: try block.bytes(source: path), source: path))
        }
        guard !lists.isEmpty else { throw PincheckError(.emptyInput, "no CRL found", source: path) }
        return lists
    }

    /// True when the CRL carries the cRLNumber extension RFC 5280 §5.2.3 requires.
    public var hasNumber: Bool { handle.hasNumber }

    /// What the parsed CRL is estimated to hold in memory: its DER (kept) and OpenSSL's decoded
    /// entries, about 260 bytes each. What ``RevocationListFetcher`` counts
    /// against ``RevocationListFetcher/Limits/maximumCachedBytes``.
    public var estimatedResidentBytes: Int { handle.der.count + handle.entryCount * Self.residentBytesPerEntry }

    /// Resident bytes per CRL entry beside the DER, once OpenSSL has decoded and sorted them
    /// (serial, date, extensions and the stack that holds them). `pincheck-bench --big-crl` on a
    /// CRL of 300,000 entries with a reason code each (14 MiB of DER) measured 307 bytes per entry
    /// resident in all, DER included (49 of them): 2026-11-27, docs/performance.md.
    package static let residentBytesPerEntry = 260

    /// The CRL's DER encoding, byte for byte as parsed.
    public var derBytes: [UInt8] { handle.der }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.handle === rhs.handle || lhs.fingerprint == rhs.fingerprint && lhs.handle.der == rhs.handle.der
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }
}
