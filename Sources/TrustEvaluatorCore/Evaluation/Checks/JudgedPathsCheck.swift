/// Every path that was judged — the anchors' path, and a pin set's own re-anchored path — also
/// goes through the policy's path checks (the certificate profile's rows and the policy's own).
struct JudgedPathsCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        var judged: [VerifiedPath] = []
        if let basePath = run.basePath { judged.append(basePath) }
        if let path = run.path, !judged.contains(where: { $0.certificates == path.certificates && $0.anchoring == path.anchoring }) {
            judged.append(path)
        }
        for candidate in judged {
            let findings = run.pathFindings(candidate)
            findings.failures.forEach { run.found.fail($0) }
            findings.warnings.forEach { run.found.warn($0) }
        }
        return .next
    }
}
