/// The leaf's keyUsage, when present, allows every usage the policy requires
/// (``ValidationPolicy/requiredKeyUsages``).
struct RequiredKeyUsageCheck: PathCheck {
    let required: Set<KeyUsage>

    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard let leaf = input.path.certificates.first, let usages = leaf.keyUsage else { return }
        let missing = required.subtracting(usages)
        guard !missing.isEmpty else { return }
        findings.fail(
            .keyUsage,
            "the leaf (\(leaf.subject)) does not allow the required key usage \(missing.map(\.description).sorted().joined(separator: ", "))")
    }
}
