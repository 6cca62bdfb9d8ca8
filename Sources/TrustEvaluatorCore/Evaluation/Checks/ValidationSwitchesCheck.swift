/// What the policy switched off is said first: a name not checked, a chain not validated.
struct ValidationSwitchesCheck: EvaluationCheck {
    func apply(to run: inout EvaluationRun) -> EvaluationRun.Next {
        switch run.policy.nameValidation {
        case .required where run.peer == nil:
            run.warn(.hostNotChecked, "no host name was given, so the certificate was not checked against any name", requirement: .name)
        case .required: break
        case .disabled(let because):
            run.warn(
                .hostNotChecked, "host name validation is disabled (\(because)): a valid certificate for any host is accepted", requirement: .name)
        }
        if case .disabled(let because) = run.policy.chainValidation {
            run.warn(.chainNotValidated, "chain validation is disabled (\(because))", requirement: .chain)
        }
        return .next
    }
}
