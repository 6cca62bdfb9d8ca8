import FoundationEssentials

/// AFNetworking's `AFSecurityPolicy`, for code being ported: the same settings, the same
/// defaults and the same answers, evaluated by Pincheck's engine.
///
/// New code should build a ``TrustPolicy`` instead, where impossible combinations cannot be
/// written. Both give the same verdicts: this class only translates its settings into one.
///
/// Differences from AFNetworking (all of them fail closed):
/// - Public-key mode with `allowInvalidCertificates` counts only certificates that certify the
///   leaf by signature (AFNetworking counts every served certificate, so a pinned CA certificate
///   appended to an attacker's chain matched), and still checks the domain name.
/// - Pins are matched only against the verified path, never against other served certificates.
/// - The subject CN is never used as a host name, and partial wildcards (`w*.example.com`) never match.
/// - Unreadable pinned certificates are errors naming the file (``certificates(inDirectory:)``).
public final class SecurityPolicy {
    /// `AFSSLPinningMode`, with AFNetworking's raw values.
    public enum PinningMode: UInt, Sendable, CaseIterable {
        case none = 0
        case publicKey = 1
        case certificate = 2
    }

    /// The pinning mode (fixed at creation, as in AFNetworking).
    public let pinningMode: PinningMode
    /// The pinned certificates (`pinnedCertificates`). In public-key mode their keys are pinned.
    public var pinnedCertificates: Set<Certificate>
    /// SPKI hashes pinned in addition to ``pinnedCertificates`` (public-key mode only; a Pincheck extension).
    public var pinnedPublicKeyHashes: Set<PublicKeyPin>
    /// Accept chains that do not verify against the anchors. Default `false`.
    /// - Warning: For test servers only.
    public var allowInvalidCertificates: Bool = false
    /// Check the domain name against the leaf. Default `true`.
    /// - Warning: Turning this off accepts any valid certificate for any host.
    public var validatesDomainName: Bool = true
    /// The anchors chains must lead to (AFNetworking always uses the system's). Default: the system store.
    public var anchors: TrustAnchors = .system

    /// `+[AFSecurityPolicy defaultPolicy]`: no pinning, invalid certificates refused, domain validated.
    public static func defaultPolicy() -> SecurityPolicy { SecurityPolicy(pinningMode: .none) }

    /// `+policyWithPinningMode:withPinnedCertificates:`.
    /// - Parameters:
    ///   - pinningMode: The mode.
    ///   - pinnedCertificates: The certificates to pin (their keys, in public-key mode).
    ///   - pinnedPublicKeyHashes: Extra SPKI pins for public-key mode.
    public init(pinningMode: PinningMode, pinnedCertificates: Set<Certificate> = [], pinnedPublicKeyHashes: Set<PublicKeyPin> = []) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
        self.pinnedPublicKeyHashes = pinnedPublicKeyHashes
    }

    /// `+certificatesInBundle:`: every `.cer`, `.crt`, `.der` and `.pem` file in a directory.
    /// - Throws: ``PincheckError`` naming the first file that cannot be read or parsed (AFNetworking
    ///   would silently skip or crash on it).
    public static func certificates(inDirectory path: String) throws(PincheckError) -> Set<Certificate> {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw PincheckError(.unreadableFile, "the directory cannot be listed", source: path)
        }
        var result = Set<Certificate>()
        for name in names.sorted() where ["cer", "crt", "der", "pem"].contains(FilePath.pathExtension(name).lowercased()) {
            result.formUnion(try Certificate.load(contentsOf: FilePath.join(path, name)))
        }
        return result
    }

    /// `-evaluateServerTrust:forDomain:`.
    /// - Parameters:
    ///   - servedChain: The certificates the server sent, leaf first.
    ///   - domain: The host name; `nil` checks no name.
    ///   - time: The verification time; now by default.
    /// - Returns: Whether the server should be trusted. Unusable input (an empty chain, a host that
    ///   is not a name) is `false`.
    public func evaluateServerTrust(_ servedChain: [Certificate], forDomain domain: String?, at time: Date = Date()) -> Bool {
        (try? evaluate(servedChain, forDomain: domain, at: time).isTrusted) ?? false
    }

    /// The full verdict behind ``evaluateServerTrust(_:forDomain:at:)``.
    /// - Parameters:
    ///   - servedChain: The certificates the server sent, leaf first.
    ///   - domain: The host name; `nil` checks no name.
    ///   - time: The verification time; now by default.
    ///   - stapledOCSPResponse: The OCSP response the server stapled, judged with the
    ///     chain as on every other road (revocation is judged on the path verified against the
    ///     anchors, a pinned certificate notwithstanding; a must-staple leaf needs one).
    /// - Throws: ``PincheckError`` for an empty chain or an impossible host name.
    public func evaluate(
        _ servedChain: [Certificate], forDomain domain: String?, at time: Date = Date(),
        stapledOCSPResponse: [UInt8]? = nil
    ) throws(PincheckError) -> Verdict {
        let pinning: TrustPolicy.Pinning
        do {
            pinning = try makePinning()
        } catch {
            return try Self.rejection(servedChain, domain: domain, time: time, reason: noPinsReason(domain: domain))
        }
        return try Evaluator(policy: trustPolicy(pinning: pinning))
            .evaluate(servedChain, host: domain, at: time, stapledOCSPResponse: stapledOCSPResponse)
    }

    /// The equivalent ``TrustPolicy``, or an error when the pinning mode has no pins.
    public func trustPolicy() throws(PincheckError) -> TrustPolicy {
        trustPolicy(pinning: try makePinning())
    }

    private func trustPolicy(pinning: TrustPolicy.Pinning) -> TrustPolicy {
        TrustPolicy(
            pinning: pinning,
            anchors: anchors,
            chainValidation: allowInvalidCertificates ? .disabled(because: "allowInvalidCertificates") : .required,
            nameValidation: validatesDomainName ? .required : .disabled(because: "validatesDomainName is off"))
    }

    private func makePinning() throws(PincheckError) -> TrustPolicy.Pinning {
        switch pinningMode {
        case .none:
            return .none
        case .certificate:
            return .certificates(try PinnedCertificates(Array(pinnedCertificates)))
        case .publicKey:
            return .publicKeys(try PinnedPublicKeys(pins: pinnedPublicKeyHashes, certificates: Array(pinnedCertificates)))
        }
    }

    private func noPinsReason(domain: String?) -> Reason {
        if domain != nil && allowInvalidCertificates && validatesDomainName {
            return Reason(
                .selfSignedRequiresPinning, "validating a host name with chain validation disabled requires pinning, and nothing is pinned",
                requirement: .hostPolicy)
        }
        return Reason(.noUsablePins, "the pinning mode is \(pinningMode) but nothing is pinned: rejected (fail closed)", requirement: .pins)
    }

    private static func rejection(_ served: [Certificate], domain: String?, time: Date, reason: Reason) throws(PincheckError) -> Verdict {
        let host = try EvaluationEntry.peer(of: served, host: domain)?.text
        return Verdict(
            failures: [reason], warnings: [], verifiedPath: nil, servedChain: served,
            checkedHost: host, pinsFound: [], evaluationTime: time)
    }
}
