import FoundationEssentials

/// A pinning flavour: how a pin set judges a served chain, run after the chain has been verified
/// against the anchors (the form of ``PathCheck``, with what pins need besides: their matches,
/// and for certificate pinning a path of their own).
///
/// One flavour per file, with its pin type (`PublicKeyPinning.swift`, `CertificatePinning.swift`).
/// A new flavour is a type conforming here and a case of ``TrustPolicy/Pinning`` that names it
/// (``TrustPolicy/Pinning/check``); the evaluation, the pin set's enforcement, expiry and
/// reports, and the verdict need nothing new.
protocol PinCheck: Sendable {
    /// Compares the pins with the chain. Chain and name failures met on the way go to the
    /// outcome's failures; the pins' own mismatches to its mismatches, which the set's enforcement
    /// decides.
    func check(_ input: PinCheckInput) -> PinSetOutcome

    /// Whether the pins are matched on the path verified against the anchors. With chain
    /// validation disabled the evaluation then links a path by issuer signatures for them.
    var matchesOnAnchorsPath: Bool { get }
    /// The number of distinct pins (keys or certificates).
    var pinCount: Int { get }
    /// The key pins the set holds, sorted (for a certificate pin, its key's).
    var keyPins: [PublicKeyPin] { get }
    /// Certificates the pins name, which bound how long a verdict may be reused and may link a
    /// path when chain validation is disabled.
    var pinnedCertificates: [Certificate] { get }
    /// True when every pin matches some certificate of `path` (no backup pin, RFC 7469 §2.5).
    func matchesAll(of path: [Certificate]) -> Bool
}

/// What a ``PinCheck`` looks at.
struct PinCheckInput {
    /// The path verified against the anchors (with chain validation disabled, linked by
    /// signatures when a flavour asked for it); nil when there is none.
    let anchorsPath: VerifiedPath?
    let leaf: Certificate
    /// What the peer sent, leaf first.
    let served: [Certificate]
    /// The served certificates after the leaf, then the policy's intermediates.
    let untrusted: [Certificate]
    /// The name the leaf must carry, if one is checked.
    let peer: PeerName?
    let time: Date
    let validation: ValidationPolicy

    /// OkHttp's message: enough to fix the configuration from the message alone.
    func mismatch(configured: [PublicKeyPin], path: [Certificate], what: String) -> Reason {
        var evidence = Evidence()
        evidence.pinsConfigured = configured
        evidence.pinsOfPath = path.map(\.publicKeyPin)
        evidence.hostRequested = peer?.text
        var lines = ["Certificate pinning failure: no certificate of the verified path matches the \(what)."]
        lines.append("  Verified path:")
        lines += path.map { "    \($0.publicKeyPin) : \($0.subject)" }
        lines.append("  Pinned for \(peer?.text ?? "this policy"):")
        lines += configured.map { "    \($0)" }
        return Reason(.pinMismatch, lines.joined(separator: "\n"), evidence: evidence, requirement: .pins)
    }

    /// A pin that matches a served certificate off the path is never counted; say so.
    func pinsOutside(_ path: [Certificate], matching: (Certificate) -> Bool) -> [Reason] {
        served.filter { !path.contains($0) && matching($0) }.map { certificate in
            var evidence = Evidence()
            evidence.pinsOfPath = path.map(\.publicKeyPin)
            return Reason(
                .pinOutsideVerifiedPath,
                "a pin matches the served certificate \(certificate.subject), which is not on the verified path; it was not counted",
                evidence: evidence, requirement: .pins)
        }
    }
}

/// What one pin set found.
struct PinSetOutcome {
    /// The pins' mismatches, which the set's enforcement decides (reject, report only, or
    /// Android's overridePins).
    var mismatches: [Reason] = []
    /// Chain and name failures met on the way: they reject whatever the enforcement.
    var failures: [Reason] = []
    var warnings: [Reason] = []
    /// The pins that matched, and where.
    var matches: [PinMatch] = []
    /// The path the set judged: the anchors' path, or one the flavour verified itself (anchored
    /// on pinned certificates: the verdict is then about it, when the set matches).
    var path: VerifiedPath?
    /// Certificates a verification of the flavour's own built paths from (they bound a cached verdict).
    var consulted: [Certificate] = []
    /// Whether the pins were compared with a path (false when the chain failed before).
    var compared: Bool { !matches.isEmpty || !mismatches.isEmpty }
}
