import Foundation

/// Something the evaluator did, for `--explain`-style tracing. The library itself never prints.
public enum DiagnosticEvent: Sendable {
    /// An evaluation started for this host (nil: no name checked) at this time.
    case evaluationStarted(host: String?, time: Date, servedCount: Int)
    /// OpenSSL verified a path against these anchors.
    case pathVerified(VerifiedPath)
    /// OpenSSL rejected the chain with these reasons.
    case pathRejected([Reason])
    /// A pin matched a certificate of the verified path.
    case pinMatched(PinMatch)
    /// The final outcome.
    case decided(trusted: Bool)
}

/// Evaluates served chains against one ``TrustPolicy``. Cheap to copy; safe to share across tasks.
public struct Evaluator: Sendable {
    /// The policy every evaluation applies.
    public let policy: TrustPolicy
    private let diagnostics: (@Sendable (DiagnosticEvent) -> Void)?

    /// - Parameters:
    ///   - policy: The policy to apply.
    ///   - diagnostics: Called with each step of every evaluation, on the evaluating thread.
    public init(policy: TrustPolicy, diagnostics: (@Sendable (DiagnosticEvent) -> Void)? = nil) {
        self.policy = policy
        self.diagnostics = diagnostics
    }

    /// Judges a served chain for a host at a given time.
    ///
    /// The steps are AFSecurityPolicy's `evaluateServerTrust:forDomain:` (see DESIGN §2), with
    /// two deliberate differences: pins are matched only against a path of certificates that
    /// really certify the leaf, and with chain validation disabled a requested host name is still
    /// checked in public-key mode.
    /// - Parameters:
    ///   - servedChain: What the peer sent, leaf first; it may contain junk.
    ///   - host: The DNS name or IP literal the leaf must carry; `nil` checks no name (a warning says so).
    ///   - time: The verification time. Pass `Date()` for now; tests pass a fixed time.
    /// - Returns: A verdict; untrusted chains are verdicts, not errors.
    /// - Throws: ``PincheckError`` only when the chain is empty or the host cannot be a certificate name.
    public func evaluate(_ servedChain: [Certificate], host: String?, at time: Date) throws(PincheckError) -> Verdict {
        guard let leaf = servedChain.first else {
            throw PincheckError(.emptyChain, "no certificate was served")
        }
        let requested = try host.map { host throws(PincheckError) in try HostName.peerName(for: host) }
        diagnostics?(.evaluationStarted(host: requested?.text, time: time, servedCount: servedChain.count))
        guard servedChain.count <= Limits.maximumServedChainLength else {
            // A resource limit, checked before any verification work.
            let reason = Reason(.tooLong, "the peer served \(servedChain.count) certificates; chains of more than \(Limits.maximumServedChainLength) are refused without being verified")
            diagnostics?(.decided(trusted: false))
            return Verdict(failures: [reason], warnings: [], verifiedPath: nil, servedChain: servedChain,
                           checkedHost: requested?.text, matchedPins: [], evaluationTime: time)
        }

        var run = Run(policy: policy, served: servedChain, leaf: leaf, time: time)
        switch (policy.nameValidation, requested) {
        case (.required, let peer?):
            run.peer = peer
        case (.required, nil):
            run.warn(.hostNotChecked, "no host name was given, so the certificate was not checked against any name")
        case (.disabled(let because), _):
            run.warn(.hostNotChecked, "host name validation is disabled (\(because)): a valid certificate for any host is accepted")
        }
        if case .disabled(let because) = policy.chainValidation {
            run.warn(.chainNotValidated, "chain validation is disabled (\(because))")
        }
        run.decide()

        let verdict = run.verdict()
        if let diagnostics {
            if let path = verdict.verifiedPath { diagnostics(.pathVerified(path)) }
            let chainFailures = verdict.failures.filter { $0.evidence.openSSLError != nil }
            if !chainFailures.isEmpty { diagnostics(.pathRejected(chainFailures)) }
            verdict.matchedPins.forEach { diagnostics(.pinMatched($0)) }
            diagnostics(.decided(trusted: verdict.isTrusted))
        }
        return verdict
    }
}

extension PeerName {
    var text: String {
        switch self {
        case .dns(let name): name
        case .ipAddress(let address): address
        }
    }
}

/// The state of one evaluation.
private struct Run {
    let policy: TrustPolicy
    let served: [Certificate]
    let leaf: Certificate
    let time: Date
    var peer: PeerName?
    var failures: [Reason] = []
    var warnings: [Reason] = []
    var path: VerifiedPath?
    var matches: [PinMatch] = []

    init(policy: TrustPolicy, served: [Certificate], leaf: Certificate, time: Date) {
        self.policy = policy
        self.served = served
        self.leaf = leaf
        self.time = time
    }

    mutating func warn(_ code: Reason.Code, _ message: String, evidence: Evidence = Evidence()) {
        warnings.append(Reason(code, message, evidence: evidence))
    }

    mutating func fail(_ code: Reason.Code, _ message: String, evidence: Evidence = Evidence()) {
        // OpenSSL may report one problem under two codes (20 then 21, say): say it once.
        guard !failures.contains(where: { $0.code == code && $0.message == message }) else { return }
        failures.append(Reason(code, message, evidence: evidence))
    }

    func verdict() -> Verdict {
        Verdict(failures: failures, warnings: warnings, verifiedPath: failures.isEmpty ? path : nil,
                servedChain: served, checkedHost: peer?.text, matchedPins: failures.isEmpty ? matches : [],
                evaluationTime: time)
    }

    private var validatesChain: Bool {
        if case .required = policy.chainValidation { return true }
        return false
    }

    private var untrusted: [Certificate] { Array(served.dropFirst()) + policy.additionalIntermediates }

    // MARK: The steps

    mutating func decide() {
        // A CRL without a cRLNumber cannot be ordered against a newer one (RFC 5280 §5.2.3): refuse
        // to rely on it rather than let a stale list vouch for a certificate.
        for (index, crl) in policy.revocationLists.enumerated() where !crl.hasNumber {
            fail(.revocationUnknown, "supplied CRL #\(index + 1) has no cRLNumber extension (RFC 5280 §5.2.3), so it cannot be used")
        }
        decidePinning()
        // Every path that was verified also goes through the policy's own checks.
        if let path, !policy.pathChecks.isEmpty {
            var findings = PathFindings()
            let input = PathCheckInput(path: path, servedChain: served, peer: peer, time: time)
            for check in policy.pathChecks { check.check(input, into: &findings) }
            findings.failures.forEach { fail($0.code, $0.message, evidence: $0.evidence) }
            warnings += findings.warnings
        }
    }

    private mutating func decidePinning() {
        // 1. AFNetworking's guard: checking a name on a chain nobody validates means nothing
        //    unless something is pinned.
        if peer != nil, !validatesChain, case .none = policy.pinning {
            fail(.selfSignedRequiresPinning, "validating a host name with chain validation disabled requires pinning: without pins anyone can make a certificate for any name")
            return
        }
        switch policy.pinning {
        case .none:
            // 3. No pinning: trusted iff chain validation is off or the chain verifies.
            guard validatesChain else { return }
            _ = verifyAgainstAnchors()
        case .certificates(let pinned):
            // 4. The chain must first verify against the normal anchors.
            if validatesChain, verifyAgainstAnchors() == nil { return }
            evaluateCertificatePins(pinned)
        case .publicKeys(let pinned):
            if validatesChain {
                guard let verified = verifyAgainstAnchors() else { return }
                matchPublicKeys(pinned, on: verified)
            } else {
                // Chain validation off: only certificates that certify the leaf by signature may
                // match (AFNetworking would count any served certificate), and a requested name
                // must still be on the leaf.
                if let peer, !HostCheck.matches(leaf, peer) {
                    failNameMismatch(peer)
                    return
                }
                let pool = untrusted + policy.anchors.certificates
                let linked = SignatureChain.path(from: leaf, through: pool, maximumDepth: policy.maximumChainDepth)
                matchPublicKeys(pinned, on: VerifiedPath(linked, anchoring: .signaturesOnly))
            }
        }
    }

    /// Steps 2–4: OpenSSL verification against the policy's anchors. Records failures; returns the path.
    private mutating func verifyAgainstAnchors() -> VerifiedPath? {
        let request = ChainVerificationRequest(
            leaf: leaf, untrusted: untrusted, anchors: policy.anchors, peer: peer, time: time,
            allowPartialChain: false, maximumDepth: policy.maximumChainDepth,
            purpose: policy.purpose, revocationLists: policy.revocationLists, revocationScope: policy.revocationScope)
        let outcome = ChainVerifier.verify(request)
        if outcome.succeeded, passesPathChecks(outcome.builtChain) {
            path = VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
            return path
        }
        // OpenSSL stops at the first path it builds. When that one fails (or fails the policy's
        // own checks), try the other paths to the caller's anchors, each forced on OpenSSL by
        // offering only its intermediates and its anchor. The system store cannot be enumerated.
        if let alternate = alternatePath(request, avoiding: outcome.builtChain) {
            path = alternate
            return alternate
        }
        guard outcome.succeeded else {
            recordChainErrors(outcome.errors)
            return nil
        }
        let verified = VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
        path = verified
        return verified
    }

    private func alternatePath(_ request: ChainVerificationRequest, avoiding chosen: [Certificate]) -> VerifiedPath? {
        guard !policy.anchors.certificates.isEmpty else { return nil }
        let candidates = PathCandidates.enumerate(
            leaf: leaf, pool: untrusted, anchors: policy.anchors.certificates, maximumDepth: policy.maximumChainDepth)
        for candidate in candidates where candidate != chosen {
            guard let anchor = candidate.last, let only = try? TrustAnchors(certificates: [anchor]) else { continue }
            var forced = request
            forced.untrusted = Array(candidate.dropFirst().dropLast())
            forced.anchors = only
            let outcome = ChainVerifier.verify(forced)
            if outcome.succeeded, passesPathChecks(outcome.builtChain) {
                return VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
            }
        }
        return nil
    }

    private func passesPathChecks(_ chain: [Certificate]) -> Bool {
        let checks = policy.pathChecks
        guard !checks.isEmpty else { return true }
        var findings = PathFindings()
        let input = PathCheckInput(path: VerifiedPath(chain, anchoring: .trustAnchor), servedChain: served, peer: peer, time: time)
        for check in checks { check.check(input, into: &findings) }
        return findings.failures.isEmpty
    }

    /// Step 5: re-anchor on the pinned certificates (partial chains allowed). Name and validity
    /// still apply, even with chain validation disabled.
    private mutating func evaluateCertificatePins(_ pinned: PinnedCertificates) {
        let outcome = ChainVerifier.verify(ChainVerificationRequest(
            leaf: leaf, untrusted: untrusted, anchors: pinned.anchors, peer: peer, time: time,
            allowPartialChain: true, maximumDepth: policy.maximumChainDepth,
            purpose: policy.purpose, revocationLists: policy.revocationLists, revocationScope: policy.revocationScope))
        let configured = pinned.certificates.map(\.publicKeyPin)
        let noPathToPin = outcome.errors.allSatisfy { Self.issuerNotFound.contains($0.code) }
        if !outcome.succeeded && noPathToPin {
            failPinMismatch(configured: configured, path: outcome.builtChain, what: "pinned certificates")
            warnAboutPinsOutside(outcome.builtChain) { pinned.certificates.contains($0) }
            return
        }
        guard outcome.succeeded else {
            recordChainErrors(outcome.errors)
            return
        }
        // A pinned leaf is trusted directly, but OpenSSL keeps the issuers it had already found
        // above it. They are not part of the path the pin anchors: the path ends at its last
        // pinned certificate (the anchor; always present when verification succeeded).
        let anchored = outcome.builtChain.lastIndex(where: pinned.certificates.contains)
            .map { Array(outcome.builtChain[...$0]) } ?? outcome.builtChain
        let verified = VerifiedPath(anchored, anchoring: .pinnedCertificate)
        // Walked root first, as AFNetworking does; any byte-equal certificate decides.
        for (depth, certificate) in verified.certificates.enumerated().reversed() where pinned.certificates.contains(certificate) {
            matches.append(PinMatch(pin: certificate.publicKeyPin, depth: depth, certificate: certificate))
        }
        path = verified
        if matches.isEmpty {
            failPinMismatch(configured: configured, path: verified.certificates, what: "pinned certificates")
        }
        warnAboutPinsOutside(verified.certificates) { pinned.certificates.contains($0) }
    }

    /// Step 6: some certificate of the path has a pinned key.
    private mutating func matchPublicKeys(_ pinned: PinnedPublicKeys, on verified: VerifiedPath) {
        path = verified
        for (depth, certificate) in verified.certificates.enumerated() {
            for pin in pinned.matches(certificate) {
                matches.append(PinMatch(pin: pin, depth: depth, certificate: certificate))
            }
        }
        if matches.isEmpty {
            failPinMismatch(configured: pinned.pins.sorted(), path: verified.certificates, what: "pins")
        }
        if pinned.pins.contains(where: { $0.algorithm == .sha1 }) {
            warn(.weakPin, "SHA-1 pins are configured; replace them with sha256/ pins")
        }
        warnAboutPinsOutside(verified.certificates) { !pinned.matches($0).isEmpty }
    }

    // MARK: Reasons

    private static let issuerNotFound: Set<Int32> = [
        ChainVerifier.errorUnableToGetIssuerLocally, ChainVerifier.errorUnableToGetIssuer,
        ChainVerifier.errorUnableToVerifyLeafSignature, ChainVerifier.errorDepthZeroSelfSigned,
        ChainVerifier.errorSelfSignedInChain, ChainVerifier.errorCertificateUntrusted,
    ]

    private mutating func failPinMismatch(configured: [PublicKeyPin], path: [Certificate], what: String) {
        var evidence = Evidence()
        evidence.pinsConfigured = configured
        evidence.pinsOfPath = path.map(\.publicKeyPin)
        evidence.hostRequested = peer?.text
        // OkHttp's message: enough to fix the configuration from the message alone.
        var lines = ["Certificate pinning failure: no certificate of the verified path matches the \(what)."]
        lines.append("  Verified path:")
        lines += path.map { "    \($0.publicKeyPin) : \($0.subject)" }
        lines.append("  Pinned for \(peer?.text ?? "this policy"):")
        lines += configured.map { "    \($0)" }
        fail(.pinMismatch, lines.joined(separator: "\n"), evidence: evidence)
    }

    private mutating func failNameMismatch(_ peer: PeerName) {
        var evidence = Evidence()
        evidence.hostRequested = peer.text
        evidence.namesPresented = leaf.dnsNames + leaf.ipAddresses
        let names = evidence.namesPresented!.isEmpty ? "no DNS or IP subjectAltName" : evidence.namesPresented!.joined(separator: ", ")
        switch peer {
        case .dns(let name):
            fail(.hostMismatch, "the certificate is not valid for \(name); it names \(names)", evidence: evidence)
        case .ipAddress(let address):
            fail(.ipAddressMismatch, "the certificate is not valid for IP address \(address); it names \(names)", evidence: evidence)
        }
    }

    private mutating func warnAboutPinsOutside(_ path: [Certificate], matching: (Certificate) -> Bool) {
        for certificate in served where !path.contains(certificate) && matching(certificate) {
            var evidence = Evidence()
            evidence.pinsOfPath = path.map(\.publicKeyPin)
            warn(.pinOutsideVerifiedPath,
                 "a pin matches the served certificate \(certificate.subject), which is not on the verified path; it was not counted",
                 evidence: evidence)
        }
    }

    private mutating func recordChainErrors(_ errors: [ChainVerificationError]) {
        for error in errors {
            if error.code == ChainVerifier.errorHostnameMismatch || error.code == ChainVerifier.errorIPAddressMismatch, let peer {
                failNameMismatch(peer)
                continue
            }
            var evidence = Evidence()
            evidence.openSSLError = Evidence.OpenSSLError(
                code: Int(error.code), text: error.text, depth: error.depth, subject: error.certificate?.subject)
            let subject = error.certificate.map { " (\($0.subject))" } ?? ""
            let (code, message) = Self.describe(error, subject: subject, time: time, purpose: policy.purpose)
            fail(code, message, evidence: evidence)
        }
    }

    private static func describe(_ error: ChainVerificationError, subject: String, time: Date, purpose: TrustPolicy.Purpose) -> (Reason.Code, String) {
        let at = "certificate at depth \(error.depth)\(subject)"
        switch error.code {
        case ChainVerifier.errorCertificateExpired:
            let end = error.certificate.map { " on \(ISO8601DateFormatter().string(from: $0.notAfter))" } ?? ""
            return (.expired, "the \(at) expired\(end)")
        case ChainVerifier.errorCertificateNotYetValid:
            let start = error.certificate.map { " until \(ISO8601DateFormatter().string(from: $0.notBefore))" } ?? ""
            return (.notYetValid, "the \(at) is not valid\(start)")
        case ChainVerifier.errorDepthZeroSelfSigned:
            return (.selfSigned, "the leaf\(subject) is self-signed and not a trust anchor")
        case ChainVerifier.errorSelfSignedInChain:
            return (.untrustedRoot, "the chain ends at a self-signed root that is not a trust anchor\(subject)")
        case ChainVerifier.errorUnableToGetIssuerLocally, ChainVerifier.errorUnableToGetIssuer, ChainVerifier.errorUnableToVerifyLeafSignature:
            return (.unknownIssuer, "no path to a trust anchor: the issuer of the \(at) is neither served nor trusted (missing intermediate, or an unknown CA)")
        case ChainVerifier.errorCertificateUntrusted:
            return (.unknownIssuer, "the chain does not end at a trust anchor")
        case ChainVerifier.errorInvalidCA:
            return (.invalidCA, "the \(at) is used as a CA but is not one")
        case ChainVerifier.errorPathLengthExceeded:
            return (.pathLengthExceeded, "the path is longer than the pathLenConstraint of the \(at) allows")
        case ChainVerifier.errorInvalidPurpose:
            return (.wrongPurpose, "the \(at) is not valid for TLS \(purpose == .serverAuthentication ? "server" : "client") authentication")
        case ChainVerifier.errorSignatureFailure:
            return (.badSignature, "the signature of the \(at) does not verify")
        case ChainVerifier.errorChainTooLong:
            return (.tooLong, "the path is longer than the maximum depth")
        case ChainVerifier.errorCertificateRevoked:
            return (.revoked, "the \(at) is revoked by a supplied CRL")
        case let code where ChainVerifier.revocationUnknownErrors.contains(code):
            return (.revocationUnknown, "the revocation status of the \(at) is unknown: \(error.text)")
        case ChainVerifier.errorPermittedViolation, ChainVerifier.errorExcludedViolation:
            return (.nameConstraints, "a name of the \(at) violates its issuer's name constraints")
        default:
            return (.invalid, "the \(at) failed verification: \(error.text) (OpenSSL error \(error.code))")
        }
    }
}
