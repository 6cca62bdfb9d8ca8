/// How the peer served its chain, for a live check (``EvaluationAdvisories/servedChain``): an
/// intermediate of the verified path it did not send (clients that do not already hold it
/// fail), a chain from which no path could be built, and no stapled OCSP response. Warnings
/// only; a stapled response's own findings are the revocation check's.
struct ServedChainCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        let served = Set(run.served)
        if run.found.failures.isEmpty, let path = run.path, path.certificates.count > 1 {
            for certificate in path.certificates.dropFirst().dropLast() where !served.contains(certificate) {
                run.warn(
                    .incompleteChain,
                    "the server did not send the intermediate \(certificate.subject); clients that do not already hold it will fail",
                    requirement: .chain)
            }
        } else if run.found.failures.contains(where: { $0.code == .unknownIssuer }) {
            let count = run.served.count
            run.warn(
                .incompleteChain,
                "the server sent \(count) certificate\(count == 1 ? "" : "s") and no path to an anchor could be built: an intermediate is probably missing",
                requirement: .chain)
        }
        if run.staple.response == nil {
            run.warn(
                .notStapled, "no stapled OCSP response: clients must fetch revocation status themselves, or go without", requirement: .revocation)
        }
        return .next
    }

    var runsAfterStop: Bool { true }
}
