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

    /// The pins of a set: certificates or public keys. There is no empty case: a host without
    /// pins has no pin set.
    public enum Pins: Sendable {
        /// Certificate pinning (``TrustPolicy/Pinning/certificates(_:)``).
        case certificates(PinnedCertificates)
        /// Public-key pinning (``TrustPolicy/Pinning/publicKeys(_:)``).
        case publicKeys(PinnedPublicKeys)

        /// The pins of a pinning mode; nil for `.none`, which pins nothing.
        public init?(_ pinning: TrustPolicy.Pinning) {
            switch pinning {
            case .none: return nil
            case .certificates(let pinned): self = .certificates(pinned)
            case .publicKeys(let pinned): self = .publicKeys(pinned)
            }
        }

        /// The same pins as a policy's pinning mode.
        public var pinning: TrustPolicy.Pinning {
            switch self {
            case .certificates(let pinned): .certificates(pinned)
            case .publicKeys(let pinned): .publicKeys(pinned)
            }
        }

        var check: any PinCheck {
            switch self {
            case .certificates(let pinned): pinned
            case .publicKeys(let pinned): pinned
            }
        }
    }

    /// The set's pins.
    public let pins: Pins
    /// The pins as a pinning mode (never `.none`).
    public var pinning: TrustPolicy.Pinning { pins.pinning }
    /// Whether a mismatch rejects the connection.
    public let enforcement: Enforcement
    /// The instant the pin set stops applying (00:00:00 UTC of the configured day), if any.
    public let expires: Date?
    /// The pinning flavour's check (``PinCheck``).
    let check: any PinCheck

    /// A pin set. It cannot be empty: ``Pins`` has no `.none` (a host without pins has no pin set).
    /// - Parameters:
    ///   - pins: The pinned certificates or public keys.
    ///   - enforcement: `.enforce` by default.
    ///   - expires: When the set stops applying; never by default.
    public init(_ pins: Pins, enforcement: Enforcement = .enforce, expires: Date? = nil) {
        self.pins = pins
        self.check = pins.check
        self.enforcement = enforcement
        self.expires = expires
    }

    /// The pinned certificates of a certificate-pinning set (none for other sets).
    package var pinnedCertificates: [Certificate] { check.pinnedCertificates }

    /// The number of distinct pins (keys or certificates).
    package var pinCount: Int { check.pinCount }

    /// An enforced public-key set without expiry: what OkHttp's union of pins can hold.
    package var isUnionable: Bool {
        guard case .publicKeys(let pinned) = pins, pinned.scope == .anyCertificate, enforcement == .enforce, expires == nil else { return false }
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
