/// CABF 7.1.2.1: a root CA certificate has no extendedKeyUsage. Judged only when the path ends at
/// a trust anchor above the leaf that is a root (self-issued, signed by its own key): a
/// certificate trusted on its own is not acting as a root, and an intermediate given as anchor
/// carries the EKU intermediates carry (CABF 7.1.2.2 requires it of them).
struct RootExtendedKeyUsageCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard input.path.anchoring == .trustAnchor, input.path.count > 1, let root = input.path.certificates.last else { return }
        // The EKU first: `isRoot` verifies a signature, too costly for every evaluation.
        if root.facts.extendedKeyUsage != nil, root.handle.isRoot {
            // Go and rustls-webpki ignore a root's EKU; private CAs (certipy, JupyterHub's) put
            // serverAuth+clientAuth there. Only the Baseline Requirements forbid it.
            input.baselineRequirement(.profileViolation, "the root (\(root.subject)) has an extendedKeyUsage extension", into: &findings)
        }
    }
}
