/// CABF 3.2.2.6 (x509-limbo `pedantic-public-suffix-wildcard`): no wildcard directly below a public
/// suffix (`*.co.uk`), which would cover names registered by strangers. Private registries count
/// too (`*.s3.amazonaws.com`, as x509-limbo's `webpki::` case demands), although Amazon's own
/// certificate for S3 has such names: x509-limbo's `online::s3.amazonaws.com` is the price, a
/// false reject rather than a false accept. Uses Debian's Public Suffix
/// List; without it installed the check cannot run and says nothing (scripts/setup.sh installs it).
struct PublicSuffixWildcardCheck: PathCheck {
    let publicSuffixes: PublicSuffixList? = PublicSuffixList.system

    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard let publicSuffixes, let leaf = input.path.certificates.first else { return }
        for name in leaf.dnsNames where name.hasPrefix("*.") {
            let base = String(name.dropFirst(2)).lowercased()
            if publicSuffixes.isPublicSuffix(base) {
                findings.failures.append(Reason(.profileViolation, "the leaf's wildcard \(name) covers every name under the public suffix \(base)"))
            }
        }
    }
}
