import FoundationEssentials

/// What a host requires of revocation information (offline only: nothing is ever fetched).
public struct RevocationPolicy: Sendable, Hashable {
    /// Reject connections that staple no usable OCSP response (always the case for must-staple leaves).
    public var requireStapledOCSP: Bool
    /// How old a response without `nextUpdate` may be.
    public var maximumResponseAge: TimeInterval

    public init(requireStapledOCSP: Bool = false, maximumResponseAge: TimeInterval = 7 * 86_400) {
        self.requireStapledOCSP = requireStapledOCSP
        self.maximumResponseAge = maximumResponseAge
    }
}

/// The stapled OCSP response over the verified path: *revoked* always rejects; an unusable,
/// stale or *unknown* response, or none, rejects when stapling is required (by the policy, or by
/// a must-staple leaf) and is a warning otherwise.
struct StapledOCSPCheck: PathCheck {
    let response: [UInt8]?
    let policy: RevocationPolicy

    /// A response's freshness depends on the time; no response at all does not.
    var dependsOnVerificationTime: Bool { response != nil }

    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard input.path.count >= 2 else { return }
        let leaf = input.path[0]
        let mustStaple = leaf.handle.requiresStapledOCSP
        let required = policy.requireStapledOCSP || mustStaple
        let why = mustStaple ? "the leaf is must-staple (TLS feature status_request)" : "the policy requires a stapled OCSP response"
        func problem(_ code: Reason.Code, _ message: String) {
            let reason = Reason(code, required ? "\(message); \(why)" : message)
            if required { findings.failures.append(reason) } else { findings.warnings.append(reason) }
        }
        guard let response else {
            if required { findings.failures.append(Reason(.stapleMissing, "no OCSP response was stapled; \(why)")) }
            return
        }
        switch StapledOCSP.check(response, leaf: leaf, issuer: input.path[1], at: input.time, maximumAge: policy.maximumResponseAge) {
        case .good:
            break
        case .revoked(let reason, let at):
            let when = at.map { " on \(Timestamp.iso8601($0))" } ?? ""
            findings.failures.append(Reason(.revoked, "the stapled OCSP response says the leaf \(leaf.subject) was revoked\(when) (reason code \(reason))"))
        case .unknown:
            problem(.ocspStatusUnknown, "the stapled OCSP response says the leaf's status is unknown")
        case .unusable(let message):
            problem(.stapleUnusable, "the stapled OCSP response cannot be used: \(message)")
        }
    }
}
