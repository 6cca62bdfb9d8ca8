import FoundationEssentials
internal import PincheckOpenSSL

/// Verdicts already reached, reused when the same evaluator sees the same served chain for the
/// same host again while nothing that decided the verdict can have changed.
///
/// A hit costs a lookup instead of a verification: a busy client that reconnects to the same
/// hosts pays for signatures once per chain instead of once per handshake. An entry is keyed by
/// the served chain (the SHA-256 of its certificates' fingerprints), the checked host and the
/// identity of the ``Evaluator`` that made it; an evaluator's policy, anchors and revocation lists
/// never change, so a changed policy is a new evaluator and can never hit an old entry. The one
/// input an evaluator reads afresh is a Certificate Transparency ``CertificateTransparency/LogStore``:
/// an entry also carries the generation of the logs it was judged with, so an updated store never
/// hits a verdict of its old lists.
///
/// Time is the one input that changes on its own. An entry remembers the span of verification
/// times in which no certificate it depended on (the served chain, the verified path, the
/// policy's intermediates, anchors and pinned certificates) and no supplied CRL starts or stops
/// being valid, and it is reused only inside that span, so a hit returns exactly the verdict a
/// fresh evaluation would (with the new evaluation time). Policies whose checks depend on time in
/// other ways (a stapled OCSP response) are never cached.
///
/// Bounded: the least recently used verdicts are dropped first. Safe to share between threads and
/// between evaluators; the keys are spread over independently locked shards.
public final class VerdictCache: Sendable {
    struct Key: Hashable, Sendable {
        let evaluator: UInt64
        let chain: SHA256Digest
        let host: String?
        /// The generation of the CT logs the verdict was judged with (0: none, or fixed logs).
        let logGeneration: UInt64
    }

    struct Entry: Sendable {
        let verdict: Verdict
        /// The verification times (whole seconds since 1970) the verdict holds for: `from..<until`.
        let from: Int64
        let until: Int64
    }

    private let entries: BoundedCache<Key, Entry>

    /// - Parameter capacity: The most verdicts kept; 1,024 by default.
    public init(capacity: Int = 1024) {
        entries = BoundedCache(capacity: capacity)
    }

    /// The number of verdicts held.
    public var count: Int { entries.count }
    /// The most verdicts held.
    public var capacity: Int { entries.capacity }

    /// Forgets every verdict.
    public func removeAll() { entries.removeAll() }

    func verdict(for key: Key, at second: Int64) -> Verdict? {
        guard let entry = entries.value(for: key) else { return nil }
        guard entry.from <= second, second < entry.until else { return nil }
        return entry.verdict
    }

    func insert(_ verdict: Verdict, for key: Key, from: Int64, until: Int64) {
        entries.insert(Entry(verdict: verdict, from: from, until: until), for: key)
    }

    /// The key of a served chain: one SHA-256 over its certificates' fingerprints, in order.
    static func key(
        evaluator: UInt64, chain: [Certificate], host: String?, revocationLists: [CertificateRevocationList] = [],
        logGeneration: UInt64 = 0
    ) -> Key {
        let count = chain.count + revocationLists.count
        let digest = withUnsafeTemporaryAllocation(of: SHA256Digest.self, capacity: count) { buffer in
            for (index, certificate) in chain.enumerated() { buffer.initializeElement(at: index, to: certificate.fingerprint) }
            for (index, list) in revocationLists.enumerated() { buffer.initializeElement(at: chain.count + index, to: list.fingerprint) }
            defer { buffer.deinitialize() }
            return SHA256Digest(hashing: UnsafeRawBufferPointer(buffer))
        }
        return Key(evaluator: evaluator, chain: digest, host: host, logGeneration: logGeneration)
    }
}

/// The span of verification times over which nothing time-dependent changes: every instant at
/// which a certificate or CRL becomes valid or stops being valid is a boundary, and a verdict
/// reached at `second` holds from the last boundary at or before it to the first one after it.
struct ValidityWindow {
    private(set) var from = Int64.min
    private(set) var until = Int64.max
    let second: Int64

    init(at second: Int64) { self.second = second }

    /// Adds a boundary; a moment on either side of `instant` counts (OpenSSL treats notAfter and
    /// a CRL's nextUpdate differently, and both readings must stay inside one window).
    mutating func add(_ instant: Int64) {
        place(instant)
        place(instant &+ 1)
    }

    private mutating func place(_ boundary: Int64) {
        if boundary <= second { from = max(from, boundary) } else { until = min(until, boundary) }
    }

    mutating func add(_ certificate: Certificate) {
        add(certificate.handle.notBeforeSeconds)
        add(certificate.handle.notAfterSeconds)
    }

    mutating func add(_ list: CertificateRevocationList) {
        add(list.handle.lastUpdateSeconds)
        if let next = list.handle.nextUpdateSeconds { add(next) }
    }
}
