/// What a server requires of its clients besides a chain to its anchors: identities, and the
/// SPIFFE trust-domain rule. Each is a check of the plan (``ClientIdentityCheck``,
/// ``TrustDomainCheck``), so every mTLS road judges them in the same place as the chain.
package struct ClientIdentityRequirement: Sendable {
    /// The client's leaf must carry one of these (none: no identity rule).
    package var identities: [ClientIdentity] = []
    /// The trust-domain rule, when clients are judged per SPIFFE trust domain.
    package var trustDomains: TrustDomainRule?

    package init(identities: [ClientIdentity] = [], trustDomains: TrustDomainRule? = nil) {
        self.identities = identities
        self.trustDomains = trustDomains
    }

    var isEmpty: Bool { identities.isEmpty && trustDomains == nil }
}

/// Envoy's `trust_bundle_map` as a rule of one plan: a client is judged against the bundle of
/// the one trust domain its leaf's SPIFFE ID names, and only that one.
package struct TrustDomainRule: Sendable {
    /// The domain whose CAs this plan's anchors are; nil for the plan over every domain's CAs at
    /// once, which judges a client no domain can judge (for the record) and never trusts it.
    package let domain: String?
    /// Every domain, by name, with the validation its clients are judged by (its CAs and CRLs).
    package let domains: [String: ValidationPolicy]

    package init(domain: String?, domains: [String: ValidationPolicy]) {
        self.domain = domain
        self.domains = domains
    }

    /// What a leaf claims: the one SPIFFE ID of a known domain, or why no domain can judge it.
    package enum Claim: Sendable {
        case id(SPIFFEID)
        case refused(Reason)
    }

    /// The leaf's claim among `known` domains (the router's choice and the check's rule are this one reading).
    package static func claim(of leaf: Certificate, known: some Collection<String>) -> Claim {
        let claimed = leaf.subjectAlternativeNames.compactMap { name -> String? in
            if case .uri(let uri) = name, uri.lowercased().hasPrefix("spiffe:") { return uri }
            return nil
        }
        guard claimed.count == 1, let only = claimed.first else {
            return .refused(
                Reason(
                    .trustDomainMissing,
                    claimed.isEmpty
                        ? "the client certificate (\(leaf.subject)) carries no SPIFFE ID: a trust domain's bundle cannot be chosen"
                        : "the client certificate (\(leaf.subject)) carries \(claimed.count) SPIFFE IDs (\(claimed.joined(separator: ", "))); an X509-SVID carries exactly one",
                    requirement: .name))
        }
        let id: SPIFFEID
        do { id = try SPIFFEID(parsing: only) } catch {
            return .refused(
                Reason(
                    .trustDomainMissing, "the client certificate (\(leaf.subject)) carries a malformed SPIFFE ID: \(error.message)",
                    requirement: .name))
        }
        guard known.contains(id.trustDomain) else {
            return .refused(
                Reason(
                    .trustDomainUnknown,
                    "the client certificate names trust domain \(id.trustDomain) (\(id)), which has no bundle here (known: \(known.sorted().joined(separator: ", ")))",
                    requirement: .name))
        }
        return .id(id)
    }
}

/// Which evaluator judges a client: the one of the trust domain its leaf's SPIFFE ID names, or
/// the one over every domain's CAs, whose plan refuses it (``TrustDomainCheck``).
package struct TrustDomainRouter: Sendable {
    package let evaluators: [String: Evaluator]
    /// Every domain's CAs at once: for the verdict of a client no domain can judge.
    package let everyDomain: Evaluator

    package init(evaluators: [String: Evaluator], everyDomain: Evaluator) {
        self.evaluators = evaluators
        self.everyDomain = everyDomain
    }

    package func evaluator(for leaf: Certificate) -> Evaluator {
        guard case .id(let id) = TrustDomainRule.claim(of: leaf, known: evaluators.keys) else { return everyDomain }
        return evaluators[id.trustDomain] ?? everyDomain
    }
}
