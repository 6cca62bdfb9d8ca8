import FoundationEssentials
internal import PincheckOpenSSL

/// A Signed Certificate Timestamp (RFC 6962 §3.2) that a server presented: a Certificate
/// Transparency log's promise that it will publish the certificate.
///
/// A server can put SCTs in three places: the signed_certificate_timestamp TLS extension, the
/// certificate's SCT list extension (1.3.6.1.4.1.11129.2.4.2), and a stapled OCSP response.
///
/// An SCT on its own proves nothing: ``CertificateTransparency`` verifies it against a log list
/// and judges the set against a browser's policy.
public struct SignedCertificateTimestamp: Sendable, Hashable {
    /// Where the server put the SCT.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        /// The signed_certificate_timestamp TLS extension (ServerHello in TLS 1.2, the leaf's
        /// CertificateEntry in TLS 1.3).
        case tlsExtension = "tls-extension"
        /// The leaf certificate's SCT list extension, embedded by the CA at issuance.
        case certificate = "certificate"
        /// The SCT list extension of a stapled OCSP response.
        case ocspResponse = "ocsp-response"
    }

    /// Where the server put the SCT.
    public let source: Source
    /// The version as on the wire: 0 is v1, the only version RFC 6962 defines. For any other
    /// version the SCT's body is not read, so ``logID``, ``extensions`` and ``signature`` are empty,
    /// ``timestampMilliseconds`` is 0 and ``signatureAlgorithm`` is `nil`.
    public let version: Int
    /// The log's ID: the SHA-256 of the log's public key (32 bytes for v1).
    public let logID: [UInt8]
    /// When the log saw the certificate, in milliseconds since 1970-01-01T00:00:00Z, as sent.
    public let timestampMilliseconds: UInt64
    /// The signature's algorithm by OpenSSL's long name (`ecdsa-with-SHA256`,
    /// `sha256WithRSAEncryption`), or `nil` when the hash and signature pair is not one OpenSSL knows.
    public let signatureAlgorithm: String?
    /// The SCT's extensions field, as sent (empty in practice).
    public let extensions: [UInt8]
    /// The log's signature, as sent. Not verified.
    public let signature: [UInt8]

    /// - Parameters:
    ///   - source: Where the server put the SCT.
    ///   - version: The wire version (0 is v1).
    ///   - logID: The log's ID.
    ///   - timestampMilliseconds: Milliseconds since 1970.
    ///   - signatureAlgorithm: The signature's algorithm, if known.
    ///   - extensions: The extensions field.
    ///   - signature: The signature bytes.
    public init(
        source: Source, version: Int, logID: [UInt8], timestampMilliseconds: UInt64,
        signatureAlgorithm: String?, extensions: [UInt8] = [], signature: [UInt8] = []
    ) {
        self.source = source
        self.version = version
        self.logID = logID
        self.timestampMilliseconds = timestampMilliseconds
        self.signatureAlgorithm = signatureAlgorithm
        self.extensions = extensions
        self.signature = signature
    }

    /// True for a v1 SCT, whose fields were read.
    public var isVersion1: Bool { version == 0 }

    /// The log ID in standard base64, as CT log lists write it.
    public var logIDBase64: String { Data(logID).base64EncodedString() }

    /// The log ID in lowercase hex.
    public var logIDHex: String { Hex.encode(logID) }

    /// ``timestampMilliseconds`` as a date.
    public var timestamp: Date { Date(timeIntervalSince1970: Double(timestampMilliseconds) / 1000) }

    /// What a log's SCT signs the timestamp together with (RFC 6962 §3.2's `signed_entry`).
    package enum Entry: Sendable {
        /// The certificate itself (SCTs from the TLS extension or an OCSP response).
        case certificate([UInt8])
        /// A precertificate: the SHA-256 of the issuer's SubjectPublicKeyInfo and the
        /// TBSCertificate without the SCT list extension (embedded SCTs).
        case precertificate(issuerKeyHash: [UInt8], tbsCertificate: [UInt8])
    }

    /// The bytes a log signs for a v1 SCT (RFC 6962 §3.2, `digitally-signed struct`).
    package static func signedData(timestampMilliseconds: UInt64, entry: Entry, extensions: [UInt8]) -> [UInt8] {
        var signed: [UInt8] = [0, 0]  // v1, certificate_timestamp
        signed.appendBigEndian(timestampMilliseconds, bytes: 8)
        switch entry {
        case .certificate(let der):
            signed += [0, 0]
            signed.appendBigEndian(UInt64(der.count), bytes: 3)
            signed += der
        case .precertificate(let issuerKeyHash, let tbs):
            signed += [0, 1] + issuerKeyHash
            signed.appendBigEndian(UInt64(tbs.count), bytes: 3)
            signed += tbs
        }
        signed.appendBigEndian(UInt64(extensions.count), bytes: 2)
        return signed + extensions
    }

    /// The TLS encoding of v1 SCTs as a SignedCertificateTimestampList (RFC 6962 §3.3): what
    /// ``parseList(_:source:)`` reads. The signature algorithm must be one RFC 6962 allows.
    package static func encodeList(_ timestamps: [SignedCertificateTimestamp]) -> [UInt8] {
        var items: [UInt8] = []
        for sct in timestamps {
            var body: [UInt8] = [0] + sct.logID
            body.appendBigEndian(sct.timestampMilliseconds, bytes: 8)
            body.appendBigEndian(UInt64(sct.extensions.count), bytes: 2)
            body += sct.extensions
            body += [4, sct.signatureAlgorithm == "sha256WithRSAEncryption" ? 1 : 3]
            body.appendBigEndian(UInt64(sct.signature.count), bytes: 2)
            body += sct.signature
            items.appendBigEndian(UInt64(body.count), bytes: 2)
            items += body
        }
        var list: [UInt8] = []
        list.appendBigEndian(UInt64(items.count), bytes: 2)
        return list + items
    }

    /// The SCTs a stapled OCSP response carries about `leaf`. A malformed list is skipped: the
    /// staple is the server's, and the certificate's own SCTs still count.
    package static func stapled(in response: [UInt8], for leaf: Certificate) -> [SignedCertificateTimestamp] {
        OCSPResponse.signedCertificateTimestampLists(response, for: leaf.handle).flatMap { list in
            (try? parseList(list, source: .ocspResponse)) ?? []
        }
    }

    /// Reads a TLS-encoded SignedCertificateTimestampList (RFC 6962 §3.3): the content of the
    /// certificate's SCT list extension, of the TLS extension, or of an OCSP response's extension.
    /// An SCT whose version is not v1 is kept with its version only, as RFC 6962 asks clients to
    /// skip it rather than fail the list.
    /// - Throws: ``CertificateTransparency/ListError`` naming where the encoding breaks.
    package static func parseList(_ bytes: [UInt8], source: Source) throws(CertificateTransparency.ListError) -> [SignedCertificateTimestamp] {
        var reader = TLSReader(bytes)
        let list = try reader.vector(lengthBytes: 2, what: "the SCT list")
        guard reader.isAtEnd else { throw .init("\(reader.remaining) bytes after the SCT list") }
        guard !list.isEmpty else { throw .init("the SCT list is empty (RFC 6962 requires at least one SCT)") }
        var items = TLSReader(list)
        var timestamps: [SignedCertificateTimestamp] = []
        while !items.isAtEnd {
            let position = timestamps.count + 1
            let serialized = try items.vector(lengthBytes: 2, what: "SCT #\(position)")
            guard !serialized.isEmpty else { throw .init("SCT #\(position) is empty") }
            var sct = TLSReader(serialized)
            let version = Int(try sct.integer(bytes: 1, what: "SCT #\(position)'s version"))
            guard version == 0 else {
                timestamps.append(
                    SignedCertificateTimestamp(source: source, version: version, logID: [], timestampMilliseconds: 0, signatureAlgorithm: nil))
                continue
            }
            let logID = try sct.bytes(32, what: "SCT #\(position)'s log ID")
            let timestamp = try sct.integer(bytes: 8, what: "SCT #\(position)'s timestamp")
            let extensions = try sct.vector(lengthBytes: 2, what: "SCT #\(position)'s extensions")
            let hash = try sct.integer(bytes: 1, what: "SCT #\(position)'s hash algorithm")
            let signatureKind = try sct.integer(bytes: 1, what: "SCT #\(position)'s signature algorithm")
            let signature = try sct.vector(lengthBytes: 2, what: "SCT #\(position)'s signature")
            guard sct.isAtEnd else { throw .init("SCT #\(position) has \(sct.remaining) bytes after its signature") }
            let algorithm: String? =
                switch (hash, signatureKind) {
                case (4, 3): "ecdsa-with-SHA256"
                case (4, 1): "sha256WithRSAEncryption"
                default: nil
                }
            timestamps.append(
                SignedCertificateTimestamp(
                    source: source, version: version, logID: logID, timestampMilliseconds: timestamp,
                    signatureAlgorithm: algorithm, extensions: extensions, signature: signature))
        }
        return timestamps
    }
}

/// Reads TLS presentation-language encodings (RFC 8446 §3): big-endian integers and vectors with
/// a length prefix. Every read is bounds-checked and throws instead of trapping.
struct TLSReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func bytes(_ count: Int, what: String) throws(CertificateTransparency.ListError) -> [UInt8] {
        guard count <= remaining else { throw .init("\(what) is cut short: \(count) bytes needed, \(remaining) left") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func integer(bytes count: Int, what: String) throws(CertificateTransparency.ListError) -> UInt64 {
        try bytes(count, what: what).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func vector(lengthBytes: Int, what: String) throws(CertificateTransparency.ListError) -> [UInt8] {
        let length = try integer(bytes: lengthBytes, what: "\(what)'s length")
        return try bytes(Int(length), what: what)
    }
}
