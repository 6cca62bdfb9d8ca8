/// CABF 3.2.2.6 (x509-limbo `pedantic-public-suffix-wildcard`): no wildcard directly below a public
/// suffix (`*.co.uk`), which would cover names registered by strangers. Private registries count
/// too (`*.s3.amazonaws.com`, as x509-limbo's `webpki::` case demands), although Amazon's own
/// certificate for S3 has such names: x509-limbo's `online::s3.amazonaws.com` is the price, a
/// false reject rather than a false accept. Uses Debian's Public Suffix
/// List; without it installed the check cannot run and says nothing (scripts/setup.sh installs it).
struct PublicSuffixWildcardCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard let leaf = input.path.certificates.first else { return }
        let wildcards = leaf.dnsNames.filter { $0.hasPrefix("*.") }
        // The list is loaded on first need only: most leaves carry no wildcard.
        guard !wildcards.isEmpty, let publicSuffixes = PublicSuffixList.system else { return }
        for name in wildcards {
            let base = String(name.dropFirst(2)).lowercased()
            if publicSuffixes.isPublicSuffix(base) {
                findings.failures.append(Reason(.profileViolation, "the leaf's wildcard \(name) covers every name under the public suffix \(base)"))
            }
        }
    }
}
