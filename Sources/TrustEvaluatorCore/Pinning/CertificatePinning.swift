import FoundationEssentials

/// A non-empty set of pinned certificates, ready to anchor a path.
public struct PinnedCertificates: Sendable {
    /// The pinned certificates, without duplicates, in the order given.
    public let certificates: [Certificate]
    /// The pinned certificates as an anchor set, built once.
    let anchors: TrustAnchors

    /// - Throws: ``PincheckError`` (`pin.empty-set`) when `certificates` is empty: certificate
    ///   pinning with nothing pinned fails closed at construction.
    public init(_ certificates: [Certificate]) throws(PincheckError) {
        var unique: [Certificate] = []
        for certificate in certificates where !unique.contains(certificate) { unique.append(certificate) }
        guard !unique.isEmpty else {
            throw PincheckError(.emptyPinSet, "certificate pinning needs at least one pinned certificate")
        }
        self.certificates = unique
        self.anchors = try TrustAnchors(certificates: unique)
    }

    /// Reads the pinned certificates from PEM or DER files.
    /// - Throws: ``PincheckError`` naming the unreadable or malformed file, or `pin.empty-set`.
    public init(contentsOf paths: [String]) throws(PincheckError) {
        var all: [Certificate] = []
        for path in paths { all += try Certificate.load(contentsOf: path) }
        try self.init(all)
    }
}

extension PinnedCertificates: PinCheck {
    /// The path is verified again with only the pinned certificates as anchors (partial chains
    /// allowed), name and validity included even with chain validation disabled, and must contain
    /// one of them byte for byte.
    func check(_ input: PinCheckInput) -> PinSetOutcome {
        var outcome = PinSetOutcome()
        let result = ChainVerifier.verify(
            ChainVerificationRequest(
                leaf: input.leaf, untrusted: input.untrusted, anchors: anchors, peer: input.peer, time: input.time,
                allowPartialChain: true, maximumDepth: input.validation.maximumChainDepth,
                purpose: input.validation.purpose, revocationLists: input.validation.revocationLists,
                revocationScope: input.validation.revocationScope,
                strictRules: input.validation.validatesChain ? .webPKI : .warningsOnly))
        outcome.consulted = result.builtChain + result.errors.compactMap(\.certificate)
        outcome.warnings += ChainReasons.tolerated(result)
        let configured = certificates.map(\.publicKeyPin)
        if !result.succeeded && result.errors.allSatisfy(\.isMissingIssuer) {
            outcome.mismatches.append(input.mismatch(configured: configured, path: result.builtChain, what: "pinned certificates"))
            outcome.warnings += input.pinsOutside(result.builtChain) { certificates.contains($0) }
            return outcome
        }
        guard result.succeeded else {
            outcome.failures = ChainReasons.failures(
                result.errors, leaf: input.leaf, peer: input.peer, time: input.time,
                purpose: input.validation.purpose)
            return outcome
        }
        // A pinned leaf is trusted directly, but OpenSSL keeps the issuers it had already found
        // above it. They are not part of the path the pin anchors: the path ends at its last
        // pinned certificate (the anchor; always present when verification succeeded).
        let anchored =
            result.builtChain.lastIndex(where: certificates.contains)
            .map { Array(result.builtChain[...$0]) } ?? result.builtChain
        let verified = VerifiedPath(anchored, anchoring: .pinnedCertificate)
        outcome.path = verified
        // Walked root first, as AFNetworking does; any byte-equal certificate decides.
        for (depth, certificate) in verified.certificates.enumerated().reversed() where certificates.contains(certificate) {
            outcome.matches.append(PinMatch(pin: certificate.publicKeyPin, depth: depth, certificate: certificate))
        }
        if outcome.matches.isEmpty {
            outcome.mismatches.append(input.mismatch(configured: configured, path: verified.certificates, what: "pinned certificates"))
        }
        outcome.warnings += input.pinsOutside(verified.certificates) { certificates.contains($0) }
        return outcome
    }

    var matchesOnAnchorsPath: Bool { false }
    var pinCount: Int { certificates.count }
    var keyPins: [PublicKeyPin] { certificates.map(\.publicKeyPin) }
    var pinnedCertificates: [Certificate] { certificates }
    func matchesAll(of path: [Certificate]) -> Bool { certificates.allSatisfy(path.contains) }
}
