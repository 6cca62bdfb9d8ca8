import FoundationEssentials

/// Maps hosts to policies and decides (Alamofire's `ServerTrustManager`, TrustKit's pinned domains).
///
/// The most specific matching pattern wins. A host no pattern matches is rejected when
/// ``allHostsMustBeEvaluated`` (the default); otherwise it gets default validation — chain and
/// name are still checked: "not pinned" never means "not checked".
public struct TrustManager: Sendable {
    public let policies: [HostPolicy]
    public let allHostsMustBeEvaluated: Bool
    /// The validation unlisted hosts get when they are allowed (its `pinning` is ignored).
    public let defaultValidation: TrustPolicy
    private let diagnostics: (@Sendable (DiagnosticEvent) -> Void)?

    /// The policy for hosts no pattern matches, when one was given (``single(_:)``).
    private var everyHost: TrustPolicy?

    /// Which host policies apply to a host that several patterns match.
    public enum PatternMatching: Sendable, Hashable {
        /// The most specific pattern's policy alone (TrustKit, Android, Alamofire). The default.
        case mostSpecific
        /// The pins of every matching pattern together: a chain matching any of them is accepted
        /// (OkHttp's `CertificatePinner.findMatchingPins`). Every policy must hold one enforced
        /// public-key pin set without expiry; the most specific pattern's other settings apply.
        case allMatching
    }

    /// How a host that several patterns match is judged; ``PatternMatching/mostSpecific`` by default.
    public var patternMatching: PatternMatching = .mostSpecific

    /// One policy for every host: what a client talking to a single upstream usually wants.
    public static func single(_ policy: TrustPolicy, diagnostics: (@Sendable (DiagnosticEvent) -> Void)? = nil) -> TrustManager {
        var manager = TrustManager(policies: [], allHostsMustBeEvaluated: true, defaultValidation: policy, diagnostics: diagnostics)
        manager.everyHost = policy
        return manager
    }

    /// - Parameters:
    ///   - policies: The host policies; the most specific matching pattern wins.
    ///   - allHostsMustBeEvaluated: Reject hosts no pattern matches (the default); when false they
    ///     get ``defaultValidation`` and ``Decision/Action/performDefaultHandling``.
    ///   - defaultValidation: The anchors and checks for unlisted hosts (its pinning is ignored).
    ///   - diagnostics: Called with each evaluation's steps.
    public init(policies: [HostPolicy] = [], allHostsMustBeEvaluated: Bool = true, defaultValidation: TrustPolicy = TrustPolicy(),
                diagnostics: (@Sendable (DiagnosticEvent) -> Void)? = nil) {
        self.policies = policies
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        var validation = defaultValidation
        validation.pinning = .none
        validation.chainValidation = .required
        validation.nameValidation = .required
        self.defaultValidation = validation
        self.diagnostics = diagnostics
    }

    /// The policy for `host`, or nil: the most specific matching pattern's, with, under
    /// ``PatternMatching/allMatching``, the pins of every other matching pattern added.
    /// - Throws: ``PincheckError`` (`host.invalid`) when `host` cannot be a certificate name.
    public func policy(for host: String) throws(PincheckError) -> HostPolicy? {
        let name = try HostNormalization.peerName(for: host).text
        var best: (HostPolicy, Int)? = nil
        var matching: [HostPolicy] = []
        for policy in policies {
            guard let score = policy.pattern.specificity(for: name) else { continue }
            matching.append(policy)
            if best == nil || score > best!.1 { best = (policy, score) }
        }
        guard let chosen = best?.0 else { return nil }
        guard patternMatching == .allMatching, matching.count > 1 else { return chosen }
        var pins = Set<PublicKeyPin>()
        for policy in matching {
            for set in policy.pinSets { if case .publicKeys(let pinned) = set.pinning { pins.formUnion(pinned.pins) } }
        }
        guard !pins.isEmpty, let union = try? PinSet(.publicKeys(try PinnedPublicKeys(pins: pins))) else { return chosen }
        return HostPolicy(pattern: chosen.pattern, pinSets: [union], validation: chosen.validation,
                          reportURIs: chosen.reportURIs, revocation: chosen.revocation)
    }

    /// Evaluates a served chain for a host and decides what to do.
    /// - Parameters:
    ///   - servedChain: What the peer sent, leaf first.
    ///   - host: The host connected to (DNS name, IDN in either form, or IP literal).
    ///   - port: The port, for reports.
    ///   - time: The verification time.
    ///   - stapledOCSPResponse: The OCSP response the server stapled (DER), if any.
    /// - Throws: ``PincheckError`` when the chain is empty or the host cannot be a name.
    public func evaluate(_ servedChain: [Certificate], host: String, port: Int = 443, at time: Date,
                         stapledOCSPResponse: [UInt8]? = nil) throws(PincheckError) -> Decision {
        let name = try HostNormalization.peerName(for: host).text
        let staple = StapledOCSPCheck(response: stapledOCSPResponse, policy: RevocationPolicy())
        guard let policy = try policy(for: name) else {
            if var everyHost {
                everyHost.additionalPathChecks.append(staple)
                let verdict = try Evaluator(policy: everyHost, diagnostics: diagnostics).evaluate(servedChain, host: name, at: time)
                return Decision(action: verdict.isTrusted ? .useCredential : .reject, verdict: verdict, policy: nil, coverage: .everyHost, reports: [])
            }
            var defaultValidation = self.defaultValidation
            defaultValidation.additionalPathChecks.append(staple)
            let verdict = try Evaluator(policy: defaultValidation, diagnostics: diagnostics).evaluate(servedChain, host: name, at: time)
            if allHostsMustBeEvaluated {
                let reason = Reason(.hostNotListed, "\(name) matches no pinning policy, and every host must be evaluated by one (allHostsMustBeEvaluated)")
                return Decision(action: .reject, verdict: verdict.adding(failures: [reason]), policy: nil, coverage: .unlistedRefused, reports: [])
            }
            return Decision(action: verdict.isTrusted ? .performDefaultHandling : .reject, verdict: verdict, policy: nil,
                            coverage: .unlistedDefaultValidation, reports: [])
        }

        var base = policy.validation
        base.pinning = .none
        base.additionalPathChecks.append(StapledOCSPCheck(response: stapledOCSPResponse, policy: policy.revocation))
        var failures: [Reason] = []
        var warnings: [Reason] = []
        var reportOnlyFailures: [Reason] = []
        var matches: [PinMatch] = []
        func record(_ reasons: [Reason], into list: inout [Reason]) {
            for reason in reasons where !list.contains(reason) { list.append(reason) }
        }
        let active = policy.pinSets.filter { set in
            guard let expires = set.expires, time >= expires else { return true }
            warnings.append(Reason(.pinSetExpired, "the pin set for \(policy.pattern) expired on \(Self.day(expires)); only default validation applied"))
            return false
        }
        // Default validation runs whenever the chain must validate or nothing is pinned, so an expired
        // or report-only set never means "unchecked". With chain validation disabled, the pin sets
        // alone decide (AFSecurityPolicy's allowInvalidCertificates), each with its own checks.
        let validatesChain = if case .required = base.chainValidation { true } else { false }
        let chainVerdict = validatesChain || active.isEmpty
            ? try Evaluator(policy: base, diagnostics: diagnostics).evaluate(servedChain, host: name, at: time) : nil
        record(chainVerdict?.failures ?? [], into: &failures)
        record(chainVerdict?.warnings ?? [], into: &warnings)
        var path = chainVerdict?.verifiedPath
        var checkedHost = chainVerdict?.checkedHost
        // Android's overridePins: a chain that verifies to one of these anchors skips the pins.
        var overridesPins: Bool? = nil
        func pinsOverridden() throws(PincheckError) -> Bool {
            if let overridesPins { return overridesPins }
            guard let anchors = policy.pinOverrideAnchors else { overridesPins = false; return false }
            var overriding = base
            overriding.anchors = anchors
            overridesPins = try Evaluator(policy: overriding, diagnostics: diagnostics).evaluate(servedChain, host: name, at: time).isTrusted
            return overridesPins!
        }
        for set in active {
            var pinned = base
            pinned.pinning = set.pinning
            let verdict = try Evaluator(policy: pinned, diagnostics: diagnostics).evaluate(servedChain, host: name, at: time)
            checkedHost = checkedHost ?? verdict.checkedHost
            record(verdict.warnings, into: &warnings)
            let fresh = verdict.failures.filter { !(chainVerdict?.failures.contains($0) ?? false) }
            let onlyPinFailures = !fresh.isEmpty && fresh.allSatisfy { $0.code == .pinMismatch }
            let overridden = onlyPinFailures && set.enforcement == .enforce ? try pinsOverridden() : false
            switch set.enforcement {
            case .enforce where overridden:
                warnings.append(Reason(.pinMismatch, "the pins of \(policy.pattern) did not match, but the chain ends at a trust anchor that overrides pins (Android overridePins); accepted on its validation"))
            case .enforce:
                record(fresh, into: &failures)
            case .reportOnly:
                // Only pin failures are forgiven; a broken chain or name is rejected all the same.
                let pinFailures = fresh.filter { $0.code == .pinMismatch || $0.code == .noUsablePins }
                record(fresh.filter { !pinFailures.contains($0) }, into: &failures)
                record(pinFailures, into: &reportOnlyFailures)
                if !pinFailures.isEmpty {
                    warnings.append(Reason(.reportOnlyFailure, "the report-only pin set for \(policy.pattern) did not match; the connection is allowed and a report is due"))
                }
            }
            if verdict.isTrusted {
                matches += verdict.matchedPins
                if set.pinning.isCertificatePinning || path == nil { path = verdict.verifiedPath ?? path }
                if set.enforcement == .enforce, let verified = verdict.verifiedPath,
                   set.pinCount < 2 || set.matchesAll(of: verified.certificates) {
                    warnings.append(Reason(.noBackupPin, "the pin set for \(policy.pattern) has no backup pin: \(set.pinCount < 2 ? "only one pin" : "every pin matches the current chain"); a key rotation would lock clients out (RFC 7469 §2.5)"))
                }
            }
        }

        let recorded = failures + reportOnlyFailures
        let verdict = Verdict(failures: recorded, warnings: warnings, verifiedPath: failures.isEmpty ? path : nil,
                              servedChain: servedChain, checkedHost: checkedHost,
                              matchedPins: failures.isEmpty ? matches : [], evaluationTime: time)
        // Every pin set expired: no policy really applies, so the decision is the stack's default handling.
        let expired = !policy.pinSets.isEmpty && active.isEmpty
        let action: Decision.Action = !failures.isEmpty ? .reject : (expired ? .performDefaultHandling : .useCredential)
        let reports = recorded.isEmpty || policy.reportURIs.isEmpty ? [] : [
            PinFailureReport(time: time, host: name, port: port, policy: policy, active: active, served: servedChain,
                             validated: chainVerdict?.verifiedPath?.certificates ?? path?.certificates ?? []),
        ]
        return Decision(action: action, verdict: verdict, policy: policy, coverage: expired ? .pinSetExpired : .hostPolicy, reports: reports)
    }

    private static func day(_ date: Date) -> String { Timestamp.day(date) }
}

extension TrustPolicy.Pinning {
    var isCertificatePinning: Bool {
        if case .certificates = self { return true }
        return false
    }
}

extension Verdict {
    func adding(failures extra: [Reason]) -> Verdict {
        Verdict(failures: failures + extra, warnings: warnings, verifiedPath: nil, servedChain: servedChain,
                checkedHost: checkedHost, matchedPins: [], evaluationTime: evaluationTime)
    }
}

/// What a trust manager decided, kept apart from what happened (the verdict): report-only mode
/// changes the decision, never the verdict.
public struct Decision: Sendable {
    /// What to do with the connection, in URLSession's terms.
    public enum Action: String, Sendable, Hashable {
        /// Trusted by a policy that applies to the host.
        case useCredential
        /// No policy applies (unlisted host, allowed, or its pins expired); default validation ran and passed.
        case performDefaultHandling
        /// Not trusted.
        case reject
    }

    /// Which rule of the trust manager applied.
    public enum Coverage: String, Sendable, Hashable {
        /// A host policy (``policy``) matched.
        case hostPolicy
        /// The manager's single every-host policy applied (``TrustManager/single(_:diagnostics:)``).
        case everyHost
        /// No policy matched and unlisted hosts are allowed: default validation ran.
        case unlistedDefaultValidation
        /// No policy matched and unlisted hosts are refused.
        case unlistedRefused
        /// A host policy matched, but all its pin sets have expired: default validation ran.
        case pinSetExpired
    }

    public let action: Action
    /// Which rule applied.
    public let coverage: Coverage
    /// Everything that was found, including report-only pin failures.
    public let verdict: Verdict
    /// The policy that applied, if any.
    public let policy: HostPolicy?
    /// Reports due to the policy's report URIs.
    public let reports: [PinFailureReport]

    init(action: Action, verdict: Verdict, policy: HostPolicy?, coverage: Coverage, reports: [PinFailureReport]) {
        self.action = action
        self.verdict = verdict
        self.policy = policy
        self.coverage = coverage
        self.reports = reports
    }

    /// True when the connection may go ahead.
    public var allowsConnection: Bool { action != .reject }
}
