/// A CRL without a cRLNumber cannot be ordered against a newer one (RFC 5280 §5.2.3): refuse to
/// rely on it rather than let a stale list vouch for a certificate. Listed only when the policy
/// supplies such a CRL.
struct SuppliedCRLNumberCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        for (index, crl) in run.policy.revocationLists.enumerated() where !crl.hasNumber {
            run.found.fail(
                Reason(
                    .revocationUnknown, "supplied CRL #\(index + 1) has no cRLNumber extension (RFC 5280 §5.2.3), so it cannot be used",
                    requirement: .revocation))
        }
        return .next
    }
}
