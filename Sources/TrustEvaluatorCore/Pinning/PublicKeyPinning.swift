import FoundationEssentials

/// A non-empty set of SPKI pins, and where on the verified path they may match.
public struct PinnedPublicKeys: Sendable {
    /// Which certificates of the verified path the pins are matched against.
    public enum Scope: Sendable, Hashable {
        /// Any certificate of the path, leaf to anchor (RFC 7469, OkHttp, TrustKit, Android).
        case anyCertificate
        /// The leaf only (Apple's `NSPinnedLeafIdentities`).
        case leaf
        /// Any certificate above the leaf, the anchor included (Apple's `NSPinnedCAIdentities`).
        case certificateAuthorities
    }

    /// The pins.
    public let pins: Set<PublicKeyPin>
    /// Where on the verified path the pins may match; ``Scope/anyCertificate`` by default.
    public let scope: Scope
    /// Whether any pin is SHA-1 (checked once, not on every match).
    private let hasSHA1Pins: Bool
    /// The pins taken from CA certificates (basicConstraints CA): keys known to sit above a leaf,
    /// which a road that sees the leaf alone can refuse when it is configured.
    package let certificateAuthorityPins: Set<PublicKeyPin>

    /// - Parameters:
    ///   - pins: Pins given as hashes.
    ///   - certificates: Certificates whose keys are pinned (their SHA-256 SPKI pins are added).
    ///   - scope: Where on the verified path the pins may match.
    /// - Throws: ``PincheckError`` (`pin.empty-set`) when no pin results.
    public init(pins: some Sequence<PublicKeyPin> = [], certificates: [Certificate] = [], scope: Scope = .anyCertificate) throws(PincheckError) {
        let all = Set(pins).union(certificates.map(\.publicKeyPin))
        guard !all.isEmpty else {
            throw PincheckError(.emptyPinSet, "public-key pinning needs at least one pin")
        }
        self.pins = all
        self.scope = scope
        self.hasSHA1Pins = all.contains { $0.algorithm == .sha1 }
        self.certificateAuthorityPins = Set(certificates.filter(\.isCertificateAuthority).map(\.publicKeyPin))
    }

    /// A set no chain can match: Apple's empty `NSPinnedLeafIdentities` or `NSPinnedCAIdentities`,
    /// which blocks the domain. Every evaluation under it is `pin.mismatch`.
    package init(blockingEverythingIn scope: Scope) {
        self.pins = []
        self.scope = scope
        self.hasSHA1Pins = false
        self.certificateAuthorityPins = []
    }

    /// Whether the certificate at `depth` of the verified path (0: the leaf) may match these pins.
    func admits(depth: Int) -> Bool {
        switch scope {
        case .anyCertificate: true
        case .leaf: depth == 0
        case .certificateAuthorities: depth > 0
        }
    }

    /// Parses pin strings (`sha256/…`, bare base64, `pin-sha256="…"`).
    /// - Throws: ``PincheckError`` naming the first malformed pin, or `pin.empty-set`.
    public init(parsing strings: [String]) throws(PincheckError) {
        var pins: [PublicKeyPin] = []
        for string in strings { pins.append(try PublicKeyPin(string)) }
        try self.init(pins: pins)
    }

    /// The pins of `certificate` in this set (its SHA-256 pin, or its SHA-1 pin if that is pinned).
    func matches(_ certificate: Certificate) -> [PublicKeyPin] {
        var result: [PublicKeyPin] = []
        if pins.contains(certificate.publicKeyPin) { result.append(certificate.publicKeyPin) }
        if hasSHA1Pins, pins.contains(certificate.publicKeySHA1Pin) {
            result.append(certificate.publicKeySHA1Pin)
        }
        return result
    }
}

extension PinnedPublicKeys: PinCheck {
    /// Some certificate of the path verified against the anchors, where the scope admits it, has
    /// a pinned key.
    func check(_ input: PinCheckInput) -> PinSetOutcome {
        var outcome = PinSetOutcome()
        guard let verified = input.anchorsPath else { return outcome }
        outcome.path = verified
        for (depth, certificate) in verified.certificates.enumerated() where admits(depth: depth) {
            for pin in matches(certificate) {
                outcome.matches.append(PinMatch(pin: pin, depth: depth, certificate: certificate))
            }
        }
        if outcome.matches.isEmpty {
            let what =
                switch scope {
                case .anyCertificate: "pins"
                case .leaf: "pins for the leaf"
                case .certificateAuthorities: "pins for the certificates above the leaf"
                }
            outcome.mismatches.append(input.mismatch(configured: pins.sorted(), path: verified.certificates, what: what))
        }
        if hasSHA1Pins {
            outcome.warnings.append(Reason(.weakPin, "SHA-1 pins are configured; replace them with sha256/ pins", requirement: .pins))
        }
        outcome.warnings += input.pinsOutside(verified.certificates) { !matches($0).isEmpty }
        return outcome
    }

    var matchesOnAnchorsPath: Bool { true }
    var pinCount: Int { pins.count }
    var keyPins: [PublicKeyPin] { pins.sorted() }
    var pinnedCertificates: [Certificate] { [] }
    func matchesAll(of path: [Certificate]) -> Bool { pins.allSatisfy { pin in path.contains { pin.matches($0) } } }
}
