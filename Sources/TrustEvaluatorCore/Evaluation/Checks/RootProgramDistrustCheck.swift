import FoundationEssentials

/// The root programs' distrust (``RootProgramPolicy``), judged on the path verified against the
/// anchors as revocation is: a pin says nothing about whether a browser still trusts the CA. After
/// ``TransparencyCheck``, whose verified SCTs Chrome's date is compared with. Records the anchor's
/// programs for the verdict either way. Listed wherever revocation is judged.
struct RootProgramDistrustCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        let settings = run.policy.rootPrograms
        let path = run.judgedAnchorsPath()
        guard let top = path.certificates.last else { return .next }
        let root = path.certificates.count > 1 ? settings.data.root(for: top) : nil
        run.rootProgramAnswer = Verdict.RootProgramAnswer(
            anchor: root, anchorIsPublic: path.anchoring == .trustAnchor && !run.policy.anchors.isPrivateAnchor(top, programs: settings.data),
            sources: settings.data.sources)
        guard let root else { return .next }
        run.timeBoundaries += root.memberships.compactMap { $0.status == .removed && $0.distrustAfter == nil ? $0.statusSince : nil }
        switch settings.distrust {
        case .programs(let programs):
            for membership in root.memberships where programs.contains(membership.program) {
                if let reason = refusal(membership, of: root, run: run) { run.found.fail(reason) }
            }
        case .notApplied(let why):
            for membership in root.memberships {
                guard let reason = refusal(membership, of: root, run: run) else { continue }
                run.found.warn(Reason(.rootDistrusted, "\(reason.message) (not applied: \(why))", evidence: reason.evidence, requirement: .chain))
            }
        }
        return .next
    }

    /// The program's refusal of this leaf under `root`, if it refuses it.
    private func refusal(_ membership: RootPrograms.Membership, of root: RootPrograms.Root, run: EvaluationRun) -> Reason? {
        let program = membership.program
        guard let date = membership.distrustAfter else {
            // A removal is known from the data's date on; an audit of an older time cannot tell.
            guard membership.status == .removed, membership.statusSince.map({ run.time >= $0 }) ?? true else { return nil }
            let evidence = RootProgramEvidence(
                program: program, root: root.name, status: .removed, distrustAfter: nil, compared: nil, comparedTime: nil)
            return Reason(
                .rootDistrusted,
                "the path ends at \(root.name), which \(program)'s root program does not trust for TLS servers (removed, or kept for other uses only)",
                evidence: Evidence(rootProgram: evidence), requirement: .chain)
        }
        let (compared, time) = comparedTime(for: program, run: run)
        guard time > date else { return nil }
        let evidence = RootProgramEvidence(
            program: program, root: root.name, status: membership.status, distrustAfter: date, compared: compared, comparedTime: time)
        return Reason(
            .rootDistrusted,
            "the path ends at \(root.name), which \(program) distrusts for certificates issued after \(Timestamp.iso8601(date)); this leaf's \(compared.words) is \(Timestamp.iso8601(time))",
            evidence: Evidence(rootProgram: evidence), requirement: .chain)
    }

    /// What the program compares with its date: Mozilla the leaf's notBefore; Chrome the earliest
    /// SCT whose log signature verified, else the notBefore.
    private func comparedTime(for program: RootPrograms.Program, run: EvaluationRun) -> (RootProgramEvidence.Compared, Date) {
        if program == .chrome, let earliest = run.transparency?.timestamps.filter({ $0.status == .verified }).map(\.sct.timestamp).min() {
            return (.earliestVerifiedSCT, earliest)
        }
        return (.notBefore, run.leaf.notBefore)
    }
}
