import FoundationEssentials

/// One pin set of a host: pins, how a mismatch is handled, and until when it applies.
public struct PinSet: Sendable {
    /// Whether a mismatch rejects the connection.
    public enum Enforcement: Sendable, Hashable {
        /// A mismatch rejects.
        case enforce
        /// A mismatch on a valid chain is recorded, warned about and reported, but the connection
        /// is allowed. An invalid chain is still rejected.
        case reportOnly
    }

    /// The pinning mode and pins (never `.none`: a host without pins has no pin set).
    public let pinning: TrustPolicy.Pinning
    public let enforcement: Enforcement
    /// The instant the pin set stops applying (00:00:00 UTC of the configured day), if any.
    public let expires: Date?
    /// The pinning flavour's check (``PinCheck``).
    let check: any PinCheck

    /// - Throws: ``PincheckError`` (`policy.invalid`) when `pinning` is `.none`.
    public init(_ pinning: TrustPolicy.Pinning, enforcement: Enforcement = .enforce, expires: Date? = nil) throws(PincheckError) {
        guard let check = pinning.check else {
            throw PincheckError(.invalidPolicy, "a pin set needs pins; a host without pins is declared with no pin set")
        }
        self.pinning = pinning
        self.check = check
        self.enforcement = enforcement
        self.expires = expires
    }

    /// A pin set from pins already known not to be `.none`.
    init(unchecked pinning: TrustPolicy.Pinning) {
        self.pinning = pinning
        self.check = pinning.check!
        self.enforcement = .enforce
        self.expires = nil
    }

    /// The pinned certificates of a certificate-pinning set (none for other sets).
    package var pinnedCertificates: [Certificate] { check.pinnedCertificates }

    /// The number of distinct pins (keys or certificates).
    package var pinCount: Int { check.pinCount }

    /// An enforced public-key set without expiry: what OkHttp's union of pins can hold.
    package var isUnionable: Bool {
        guard case .publicKeys(let pinned) = pinning, pinned.scope == .anyCertificate, enforcement == .enforce, expires == nil else { return false }
        return true
    }

    /// True until the set's expiry (always, without one).
    package func isActive(at time: Date) -> Bool { expires.map { time < $0 } ?? true }

    /// The key pins the set holds: its public-key pins, or the keys of its pinned certificates.
    package var keyPins: [PublicKeyPin] { check.keyPins }

    /// True when every pin of the set matches some certificate of `path`.
    func matchesAll(of path: [Certificate]) -> Bool { check.matchesAll(of: path) }

    /// Parses `yyyy-MM-dd` as 00:00:00 UTC of that day (TrustKit's reading).
    public static func expiryDate(_ text: String) -> Date? {
        Timestamp.parseDay(text)
    }
}
