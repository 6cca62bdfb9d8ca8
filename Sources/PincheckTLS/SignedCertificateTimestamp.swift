import FoundationEssentials
import TrustEvaluator

/// A Signed Certificate Timestamp (RFC 6962 §3.2) that a server presented: a Certificate
/// Transparency log's promise that it will publish the certificate.
///
/// ``TLSProbe`` captures SCTs from all three places a server can put them: the
/// signed_certificate_timestamp TLS extension, the certificate's SCT list extension
/// (1.3.6.1.4.1.11129.2.4.2), and a stapled OCSP response.
///
/// - Warning: Captured, not verified. Pincheck checks neither the log's signature, nor whether the
///   log is known or trusted, nor any CT policy (how many SCTs, from which logs, how old). An SCT
///   here shows what the server sent and proves nothing on its own; never base trust on it.
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
    public init(source: Source, version: Int, logID: [UInt8], timestampMilliseconds: UInt64,
                signatureAlgorithm: String?, extensions: [UInt8] = [], signature: [UInt8] = []) {
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
}
