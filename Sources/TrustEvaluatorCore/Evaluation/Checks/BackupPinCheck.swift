/// The backup-pin rule (``BackupPinFinding``) on a pin set that matched: a warning, never a
/// failure. In the plans of a trust manager's host policies, and wherever a caller asks for
/// ``EvaluationAdvisories/backupPins``.
struct BackupPinCheck: EvaluationCheck {
    /// The set's place in the plan's pin sets.
    let index: Int

    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        guard let path = run.matchedPaths[index],
            let finding = run.plan.pinSets[index].backupPinFinding(onChain: path.certificates)
        else { return .next }
        let count = run.plan.pinSets.count
        run.warn(.noBackupPin, finding.message(naming: run.pinsName + BackupPinFinding.setNumber(index, of: count)), requirement: .pins)
        return .next
    }
}
