import FoundationEssentials

/// What a host requires of revocation information: a stapled OCSP response, and the CRLs at the
/// certificates' distribution points (fetched only when ``distributionPointCRLs`` asks for them).
public struct RevocationPolicy: Sendable, Hashable {
    /// Reject connections that staple no usable OCSP response (always the case for must-staple leaves).
    public var requireStapledOCSP: Bool
    /// How old a response without `nextUpdate` may be (and a CRL without one).
    public var maximumResponseAge: TimeInterval
    /// CRLs from the certificates' own distribution points; nil (the library's default): none
    /// are fetched, so a connection never depends on a CRL server the caller did not ask for.
    /// The asynchronous evaluations fetch (``Evaluator/evaluate(_:host:at:stapledOCSPResponse:fetchingRevocationListsWith:)``),
    /// and so does the NIO road's verification callback (with the adapter's fetcher, else one for
    /// the process); a synchronous evaluation under a policy that sets this has no CRL to judge,
    /// and says so (`revocation.crl-unavailable`, a failure when ``DistributionPointCRLs/failure`` is `.hard`).
    public var distributionPointCRLs: DistributionPointCRLs?

    public init(requireStapledOCSP: Bool = false, maximumResponseAge: TimeInterval = 7 * 86_400) {
        self.init(requireStapledOCSP: requireStapledOCSP, maximumResponseAge: maximumResponseAge, distributionPointCRLs: nil)
    }

    /// - Parameters:
    ///   - requireStapledOCSP: Refuse a chain without a usable stapled OCSP response.
    ///   - maximumResponseAge: How old a stapled response's thisUpdate may be, in seconds.
    ///   - distributionPointCRLs: The CRLs at the certificates' distribution points to check; nil: none.
    public init(
        requireStapledOCSP: Bool = false, maximumResponseAge: TimeInterval = 7 * 86_400,
        distributionPointCRLs: DistributionPointCRLs?
    ) {
        self.requireStapledOCSP = requireStapledOCSP
        self.maximumResponseAge = maximumResponseAge
        self.distributionPointCRLs = distributionPointCRLs
    }
}

/// Checking certificates against the CRLs their cRLDistributionPoints name.
public struct DistributionPointCRLs: Sendable, Hashable {
    /// What a CRL that cannot be had, is stale, or does not cover the certificate does.
    public enum Failure: Sendable, Hashable {
        /// A warning: the connection goes on (a revoked certificate is refused all the same).
        case soft
        /// A failure: without a good answer from a covering, fresh CRL, the chain is refused.
        case hard
    }

    /// Which certificates of the verified path are checked: the leaf, or every one below the anchor.
    public var scope: ValidationPolicy.RevocationScope
    public var failure: Failure

    public init(scope: ValidationPolicy.RevocationScope = .leaf, failure: Failure = .soft) {
        self.scope = scope
        self.failure = failure
    }
}

/// The stapled OCSP response over the verified path: *revoked* always rejects; an unusable,
/// stale or *unknown* response, or none, rejects when stapling is required (by the policy, or by
/// a must-staple leaf) and is a warning otherwise.
struct StapledOCSPCheck: PathCheck {
    let response: [UInt8]?
    let policy: RevocationPolicy
    var requirement: Reason.Requirement { .revocation }

    /// A response's freshness depends on the time; no response at all does not.
    var dependsOnVerificationTime: Bool { response != nil }

    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        let leaf = input.path[0]
        let mustStaple = leaf.handle.requiresStapledOCSP
        let required = policy.requireStapledOCSP || mustStaple
        let why = mustStaple ? "the leaf is must-staple (TLS feature status_request)" : "the policy requires a stapled OCSP response"
        func problem(_ code: Reason.Code, _ message: String) {
            if required { findings.fail(code, "\(message); \(why)") } else { findings.warn(code, message) }
        }
        guard let response else {
            if required { findings.fail(.stapleMissing, "no OCSP response was stapled; \(why)") }
            return
        }
        // The issuer is the next certificate of the path; a self-signed leaf is its own. A path of
        // one that is not self-signed (a leaf linked to nothing) names no issuer to check against.
        let issuer: Certificate
        if input.path.count >= 2 {
            issuer = input.path[1]
        } else if leaf.handle.isSelfSigned {
            issuer = leaf
        } else {
            problem(.stapleUnusable, "the stapled OCSP response cannot be checked: the leaf's issuer is not on the path")
            return
        }
        switch StapledOCSP.check(response, leaf: leaf, issuer: issuer, at: input.time, maximumAge: policy.maximumResponseAge) {
        case .good:
            break
        case .revoked(let reason, let at):
            let when = at.map { " on \(Timestamp.iso8601($0))" } ?? ""
            findings.fail(.revoked, "the stapled OCSP response says the leaf \(leaf.subject) was revoked\(when) (reason code \(reason))")
        case .unknown:
            problem(.ocspStatusUnknown, "the stapled OCSP response says the leaf's status is unknown")
        case .unusable(let message):
            problem(.stapleUnusable, "the stapled OCSP response cannot be used: \(message)")
        }
    }
}
