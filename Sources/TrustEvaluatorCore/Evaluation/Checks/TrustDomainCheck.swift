/// The SPIFFE trust-domain rule (``TrustDomainRule``): the leaf names exactly one SPIFFE ID, of
/// this plan's domain. The plan over every domain's CAs refuses every client (it judges those no
/// domain can, for the record). A chain this domain's CAs refuse, that another domain's CAs
/// would let in, is named as such (`identity.trust-domain-mismatch`): a CA of one domain issuing
/// an identity of another.
struct TrustDomainCheck: EvaluationCheck {
    let rule: TrustDomainRule
    /// The other domains' plans, by name order (made once, with this plan).
    let others: [(name: String, plan: EvaluationPlan)]

    init(rule: TrustDomainRule) {
        self.rule = rule
        self.others = rule.domains.keys.sorted().filter { $0 != rule.domain }.map { name in
            var validation = rule.domains[name]!
            validation.clientIdentity = ClientIdentityRequirement()
            validation.advisories = []
            return (name, EvaluationPlan(validation: validation, pinSets: []))
        }
    }

    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        let id: SPIFFEID
        switch TrustDomainRule.claim(of: run.leaf, known: rule.domains.keys) {
        case .refused(let reason):
            run.found.fail(reason)
            return .next
        case .id(let claimed): id = claimed
        }
        guard let domain = rule.domain, id.trustDomain == domain else {
            run.found.fail(
                Reason(
                    .trustDomainMissing,
                    "the client certificate claims \(id) but was judged against every domain's CAs at once, which never trusts a client",
                    requirement: .name))
            return .next
        }
        guard !run.found.failures.isEmpty, let issuer = otherDomainTrusting(&run) else { return .next }
        run.found.fail(
            Reason(
                .trustDomainMismatch,
                "the client certificate claims \(id) but was issued under trust domain \(issuer)'s CA, not \(domain)'s", requirement: .chain))
        return .next
    }

    /// The first other domain (by name) whose CAs would have let this chain in.
    private func otherDomainTrusting(_ run: inout EvaluationRun) -> String? {
        for (name, plan) in others {
            var nested = EvaluationRun(
                plan: plan, served: run.served, peer: nil, time: run.time, staple: run.staple,
                tracksConsulted: run.tracksConsulted)
            nested.decide()
            run.consulted += nested.consulted
            if nested.found.failures.isEmpty { return name }
        }
        return nil
    }

    var runsAfterStop: Bool { true }
}
