import FoundationEssentials
import Synchronization

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
///
/// Give it a ``CertificateCache`` and a ``VerdictCache`` when it judges the same servers over and
/// over (a client's connection pool, a proxy): certificates are then parsed once, and a chain it
/// has judged before is not verified again until a certificate's validity boundary is crossed.
public struct Evaluator: Sendable {
    /// The policy every evaluation applies.
    public let policy: TrustPolicy
    /// Where ``evaluate(derEncoded:host:at:)`` finds certificates parsed before, if anywhere.
    public let certificateCache: CertificateCache?
    /// Where verdicts are kept for reuse, if anywhere.
    public let verdictCache: VerdictCache?
    private let diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    /// The policy's path checks, assembled once.
    private let pathChecks: PathChecks
    /// Tells this evaluator's cached verdicts from every other's (never reused in a process).
    private let identity: UInt64
    /// False when a check depends on time beyond validity periods: then nothing is cached.
    private let cacheable: Bool

    /// - Parameters:
    ///   - policy: The policy to apply.
    ///   - certificateCache: Parsed certificates to reuse in ``evaluate(derEncoded:host:at:)``.
    ///   - verdictCache: Verdicts to reuse while they still hold (see ``VerdictCache``).
    ///   - diagnostics: Called with each step of every evaluation, on the evaluating thread.
    public init(policy: TrustPolicy, certificateCache: CertificateCache? = nil, verdictCache: VerdictCache? = nil,
                diagnostics: (@Sendable (DiagnosticEvent) -> Void)? = nil) {
        self.policy = policy
        self.certificateCache = certificateCache
        self.verdictCache = verdictCache
        self.diagnostics = diagnostics
        self.pathChecks = policy.pathChecks
        self.identity = evaluatorIdentities.wrappingAdd(1, ordering: .relaxed).newValue
        self.cacheable = !pathChecks.dependsOnVerificationTime
    }

    /// Judges a served chain given as DER, as TLS stacks hand it over: each certificate comes from
    /// the ``certificateCache`` when it has been parsed before, and is parsed otherwise.
    /// - Parameters:
    ///   - derEncoded: The peer's certificates, leaf first, one DER certificate each.
    ///   - host: As in ``evaluate(_:host:at:)``.
    ///   - time: As in ``evaluate(_:host:at:)``.
    /// - Throws: ``PincheckError`` when the chain is empty, a certificate does not parse, or the
    ///   host cannot be a certificate name.
    public func evaluate(derEncoded chain: [[UInt8]], host: String?, at time: Date) throws(PincheckError) -> Verdict {
        guard !chain.isEmpty else { throw PincheckError(.emptyChain, "no certificate was served") }
        let certificates: [Certificate]
        if let certificateCache {
            certificates = try certificateCache.chain(derEncoded: chain)
        } else {
            var parsed: [Certificate] = []
            parsed.reserveCapacity(chain.count)
            for (position, der) in chain.enumerated() {
                parsed.append(try Certificate(derEncoded: der, source: "served certificate \(position)"))
            }
            certificates = parsed
        }
        return try evaluate(certificates, host: host, at: time)
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

        // The same rounding as the verifier's: OpenSSL judges whole seconds.
        let second = Timestamp.seconds(time)
        var cacheKey: VerdictCache.Key? = nil
        if let verdictCache, cacheable {
            let key = VerdictCache.key(evaluator: identity, chain: servedChain, host: requested?.text)
            if let known = verdictCache.verdict(for: key, at: second) {
                let verdict = known.reused(at: time, servedChain: servedChain)
                report(verdict)
                return verdict
            }
            cacheKey = key
        }

        var run = Run(policy: policy, checks: pathChecks, served: servedChain, leaf: leaf, time: time,
                      tracksConsulted: cacheKey != nil)
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
        if let cacheKey, let verdictCache {
            let window = validityWindow(at: second, served: servedChain, consulted: run.consulted)
            verdictCache.insert(verdict, for: cacheKey, from: window.from, until: window.until)
        }
        report(verdict)
        return verdict
    }

    /// Judges a served chain together with the OCSP response the server stapled for its leaf,
    /// as a TLS client that received it would: the response is checked against the verified path
    /// (its issuer may be the trust anchor, which the server never sends). A response that
    /// verifies and says *revoked* is `revocation.revoked` and the chain is not trusted; one that
    /// is unusable, stale or *unknown* is a warning, unless the leaf is must-staple.
    /// - Parameters:
    ///   - stapledOCSPResponse: The DER OCSP response, or nil when none was stapled.
    ///   - servedChain, host, time: As in ``evaluate(_:host:at:)``.
    /// - Throws: As ``evaluate(_:host:at:)``.
    public func evaluate(_ servedChain: [Certificate], host: String?, at time: Date,
                         stapledOCSPResponse: [UInt8]?) throws(PincheckError) -> Verdict {
        guard let stapledOCSPResponse else { return try evaluate(servedChain, host: host, at: time) }
        var stapled = policy
        stapled.additionalPathChecks.append(StapledOCSPCheck(response: stapledOCSPResponse, policy: RevocationPolicy()))
        // A response's freshness depends on the time: no verdict cache.
        return try Evaluator(policy: stapled, certificateCache: certificateCache, verdictCache: nil, diagnostics: diagnostics)
            .evaluate(servedChain, host: host, at: time)
    }

    /// Every certificate and CRL whose validity could have decided the verdict bounds its reuse.
    private func validityWindow(at second: Int64, served: [Certificate], consulted: [Certificate]) -> ValidityWindow {
        var window = ValidityWindow(at: second)
        for certificate in served { window.add(certificate) }
        for certificate in consulted { window.add(certificate) }
        for certificate in policy.additionalIntermediates { window.add(certificate) }
        for certificate in policy.anchors.certificates { window.add(certificate) }
        if case .certificates(let pinned) = policy.pinning {
            for certificate in pinned.certificates { window.add(certificate) }
        }
        for list in policy.revocationLists { window.add(list) }
        return window
    }

    private func report(_ verdict: Verdict) {
        guard let diagnostics else { return }
        if let path = verdict.verifiedPath { diagnostics(.pathVerified(path)) }
        let chainFailures = verdict.failures.filter { $0.evidence.openSSLError != nil }
        if !chainFailures.isEmpty { diagnostics(.pathRejected(chainFailures)) }
        verdict.matchedPins.forEach { diagnostics(.pinMatched($0)) }
        diagnostics(.decided(trusted: verdict.isTrusted))
    }
}

/// Source of ``Evaluator`` identities.
private let evaluatorIdentities = Atomic<UInt64>(0)

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
    let checks: PathChecks
    let served: [Certificate]
    let leaf: Certificate
    let time: Date
    var peer: PeerName?
    var failures: [Reason] = []
    var warnings: [Reason] = []
    var path: VerifiedPath?
    var matches: [PinMatch] = []
    /// OpenSSL's strict-rule findings on the chosen path that count as warnings only.
    var toleratedFindings: [String] = []
    /// Certificates the verifier built paths from (besides the served ones): the validity of each
    /// bounds how long the verdict may be reused.
    var consulted: [Certificate] = []
    /// Whether to collect ``consulted`` (only a verdict cache needs it).
    private let tracksConsulted: Bool
    /// The path checks' findings for a path already checked while choosing it.
    private var checkedPath: (path: VerifiedPath, findings: PathFindings)?

    init(policy: TrustPolicy, checks: PathChecks, served: [Certificate], leaf: Certificate, time: Date, tracksConsulted: Bool) {
        self.policy = policy
        self.checks = checks
        self.served = served
        self.untrusted = Array(served.dropFirst()) + policy.additionalIntermediates
        self.tracksConsulted = tracksConsulted
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
        Verdict(failures: failures, warnings: warnings + toleratedFindings.map { Reason(.profileViolation, $0) }, verifiedPath: failures.isEmpty ? path : nil,
                servedChain: served, checkedHost: peer?.text, matchedPins: failures.isEmpty ? matches : [],
                evaluationTime: time)
    }

    private var validatesChain: Bool {
        if case .required = policy.chainValidation { return true }
        return false
    }

    /// The served certificates after the leaf, then the policy's intermediates.
    private let untrusted: [Certificate]

    // MARK: The steps

    mutating func decide() {
        // A CRL without a cRLNumber cannot be ordered against a newer one (RFC 5280 §5.2.3): refuse
        // to rely on it rather than let a stale list vouch for a certificate.
        for (index, crl) in policy.revocationLists.enumerated() where !crl.hasNumber {
            fail(.revocationUnknown, "supplied CRL #\(index + 1) has no cRLNumber extension (RFC 5280 §5.2.3), so it cannot be used")
        }
        decidePinning()
        // Every path that was verified also goes through the policy's own checks.
        if let path, !checks.isEmpty {
            let findings = checkedPath.flatMap { $0.path.certificates == path.certificates && $0.path.anchoring == path.anchoring ? $0.findings : nil } ?? pathFindings(path)
            findings.failures.forEach { fail($0.code, $0.message, evidence: $0.evidence) }
            warnings += findings.warnings
        }
    }

    private func pathFindings(_ path: VerifiedPath) -> PathFindings {
        var findings = PathFindings()
        let input = PathCheckInput(path: path, servedChain: served, peer: peer, time: time)
        for check in checks.profile { check.check(input, into: &findings) }
        if !validatesChain, !findings.failures.isEmpty {
            // Chain validation is disabled: the pins (and the name) decide, and the profile only informs.
            findings.warnings += findings.failures.map {
                Reason($0.code, "\($0.message) (not counted: chain validation is disabled)", evidence: $0.evidence)
            }
            findings.failures = []
        }
        for check in checks.policy { check.check(input, into: &findings) }
        return findings
    }

    /// Runs the path checks on a candidate path; remembers the findings when it passes.
    private mutating func passesPathChecks(_ chain: [Certificate]) -> Bool {
        guard !checks.isEmpty else { return true }
        let candidate = VerifiedPath(chain, anchoring: .trustAnchor)
        let findings = pathFindings(candidate)
        guard findings.failures.isEmpty else { return false }
        checkedPath = (candidate, findings)
        return true
    }

    private mutating func consult(_ outcome: ChainVerification) {
        guard tracksConsulted else { return }
        consulted += outcome.builtChain
        for error in outcome.errors { if let certificate = error.certificate { consulted.append(certificate) } }
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
        consult(outcome)
        if outcome.succeeded, passesPathChecks(outcome.builtChain) {
            path = VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
            toleratedFindings = outcome.tolerated
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
        toleratedFindings = outcome.tolerated
        return verified
    }

    private mutating func alternatePath(_ request: ChainVerificationRequest, avoiding chosen: [Certificate]) -> VerifiedPath? {
        guard !policy.anchors.certificates.isEmpty else { return nil }
        let candidates = PathCandidates.enumerate(
            leaf: leaf, pool: untrusted, anchors: policy.anchors.certificates, maximumDepth: policy.maximumChainDepth)
        for candidate in candidates where candidate != chosen {
            guard let anchor = candidate.last, let only = try? TrustAnchors(certificates: [anchor]) else { continue }
            var forced = request
            forced.untrusted = Array(candidate.dropFirst().dropLast())
            forced.anchors = only
            let outcome = ChainVerifier.verify(forced)
            consult(outcome)
            if outcome.succeeded, passesPathChecks(outcome.builtChain) {
                toleratedFindings = outcome.tolerated
                return VerifiedPath(outcome.builtChain, anchoring: .trustAnchor)
            }
        }
        return nil
    }

    /// Step 5: re-anchor on the pinned certificates (partial chains allowed). Name and validity
    /// still apply, even with chain validation disabled.
    private mutating func evaluateCertificatePins(_ pinned: PinnedCertificates) {
        let outcome = ChainVerifier.verify(ChainVerificationRequest(
            leaf: leaf, untrusted: untrusted, anchors: pinned.anchors, peer: peer, time: time,
            allowPartialChain: true, maximumDepth: policy.maximumChainDepth,
            purpose: policy.purpose, revocationLists: policy.revocationLists, revocationScope: policy.revocationScope,
            strictRules: validatesChain ? .webPKI : .warningsOnly))
        consult(outcome)
        toleratedFindings = outcome.tolerated
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
        for (depth, certificate) in verified.certificates.enumerated() where pinned.admits(depth: depth) {
            for pin in pinned.matches(certificate) {
                matches.append(PinMatch(pin: pin, depth: depth, certificate: certificate))
            }
        }
        if matches.isEmpty {
            let what = switch pinned.scope {
            case .anyCertificate: "pins"
            case .leaf: "pins for the leaf"
            case .certificateAuthorities: "pins for the certificates above the leaf"
            }
            failPinMismatch(configured: pinned.pins.sorted(), path: verified.certificates, what: what)
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
            let end = error.certificate.map { " on \(Timestamp.iso8601($0.notAfter))" } ?? ""
            return (.expired, "the \(at) expired\(end)")
        case ChainVerifier.errorCertificateNotYetValid:
            let start = error.certificate.map { " until \(Timestamp.iso8601($0.notBefore))" } ?? ""
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
