internal import PincheckOpenSSL
/// Certificates parsed before, found again by the SHA-256 of their DER.
///
/// Parsing is most of the cost of judging a chain seen for the first time: OpenSSL 3.0 spends
/// about 100 µs decoding one certificate and its key, as long as it then spends verifying a whole
/// chain. A busy client sees the same few intermediates and leaves on every handshake, so it
/// should parse each once. Hand the cache the DER the TLS stack received; it returns the
/// ``Certificate`` parsed the first time those exact bytes were seen (a hit costs one SHA-256 of the
/// DER and a lookup), and parses and keeps it otherwise.
///
/// A cached certificate is only the parsed form of its bytes: every evaluation still verifies the
/// whole chain (signatures, validity, names, pins). Bounded: the least recently used certificates
/// are dropped first. Safe to share between threads; the keys are spread over independently locked
/// shards. Malformed input is never cached, so it is rejected the same way every time.
public final class CertificateCache: Sendable {
    private let entries: BoundedCache<SHA256Digest, Certificate>

    /// One cache for the whole process, for callers that have no reason to keep their own.
    public static let shared = CertificateCache()

    /// - Parameter capacity: The most certificates kept; 1,024 by default (about 3 MB with
    ///   OpenSSL's parsed form).
    public init(capacity: Int = 1024) {
        entries = BoundedCache(capacity: capacity)
    }

    /// The certificate these DER bytes encode: the one parsed before, or a new parse.
    /// - Parameters:
    ///   - derEncoded: Exactly one DER certificate.
    ///   - source: A name for the input, used in error messages.
    /// - Throws: ``PincheckError`` as ``Certificate/init(derEncoded:source:)`` does.
    public func certificate(derEncoded: [UInt8], source: String? = nil) throws(PincheckError) -> Certificate {
        try certificate(derEncoded, source: source)
    }

    /// `source` is only built on a miss: a hit allocates nothing for it.
    private func certificate(_ der: [UInt8], source: @autoclosure () -> String?) throws(PincheckError) -> Certificate {
        let fingerprint = SHA256Digest(hashing: der)
        if let known = entries.value(for: fingerprint) { return known }
        let parsed = try Certificate(derEncoded: der, fingerprint: fingerprint, source: source())
        entries.insert(parsed, for: fingerprint)
        return parsed
    }

    /// The certificates of a served chain, leaf first, each from the cache or parsed.
    /// - Throws: ``PincheckError`` naming the position of the first certificate that does not parse.
    public func chain(derEncoded chain: [[UInt8]]) throws(PincheckError) -> [Certificate] {
        var certificates: [Certificate] = []
        certificates.reserveCapacity(chain.count)
        for (position, der) in chain.enumerated() {
            certificates.append(try certificate(der, source: "served certificate \(position)"))
        }
        return certificates
    }

    /// The number of certificates held.
    public var count: Int { entries.count }
    /// The most certificates held.
    public var capacity: Int { entries.capacity }

    /// Forgets every certificate.
    public func removeAll() { entries.removeAll() }
}
