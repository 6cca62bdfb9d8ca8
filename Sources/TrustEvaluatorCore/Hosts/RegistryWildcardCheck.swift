/// Wildcards over registries match nothing, as in Chromium's host check
/// (`X509Certificate::VerifyHostname`: registries of the Public Suffix List's ICANN section and
/// unknown top-level domains, `EXCLUDE_PRIVATE_REGISTRIES`): `*.com` and `*.co.uk` cover names
/// registered by strangers, so they are not a name of anyone's. A certificate that carries one is
/// judged on its other names; `*.s3.amazonaws.com` or `*.github.io`, below suffixes of the
/// list's private section, match as any wildcard does (CA/B Forum 3.2.2.6 sends CAs to the ICANN
/// section only; Firefox, Go, rustls and OpenSSL have no such rule at all).
///
/// OpenSSL's host check has already matched some name of the leaf; this check refuses the match
/// when the only names that can have made it are registry wildcards. Without Debian's Public
/// Suffix List (package publicsuffix) registries cannot be told apart and the check cannot run.
///
/// The list (about 230 KB) is read the first time a leaf with a wildcard name is checked, not when
/// a policy is made: a command that checks one chain without wildcards never parses it.
struct RegistryWildcardCheck: PathCheck {
    var requirement: Reason.Requirement { .name }

    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard case .dns(let host)? = input.peer, let leaf = input.path.certificates.first,
            leaf.dnsNames.contains(where: { $0.hasPrefix("*.") }),
            let publicSuffixes = PublicSuffixList.system
        else { return }
        let registryWildcards = Self.registryWildcards(leaf.dnsNames, publicSuffixes)
        guard !registryWildcards.isEmpty else { return }
        if Self.matches(host: host, names: leaf.dnsNames, ignoring: registryWildcards) {
            findings.warn(
                .profileViolation,
                "the leaf carries \(registryWildcards.joined(separator: ", ")), a wildcard over a public registry, which matches no host; it was judged on its other names"
            )
            return
        }
        var evidence = Evidence()
        evidence.hostRequested = host
        evidence.namesPresented = leaf.dnsNames + leaf.ipAddresses
        findings.fail(
            .hostMismatch,
            "the certificate is not valid for \(host): the only name covering it is \(registryWildcards.joined(separator: ", ")), a wildcard over a public registry, which matches no host",
            evidence: evidence)
    }

    /// The wildcard names directly below an ICANN or unknown registry.
    static func registryWildcards(_ names: [String], _ publicSuffixes: PublicSuffixList) -> [String] {
        names.filter { name in
            guard name.hasPrefix("*.") else { return false }
            return publicSuffixes.isICANNSuffix(canonical(name.dropFirst(2)))
        }
    }

    /// Whether `host` (lowercase A-labels, no trailing dot) matches one of `names` other than
    /// `ignoring`: exactly, or through a whole-label wildcard standing for exactly one label.
    static func matches(host: String, names: [String], ignoring: [String]) -> Bool {
        let parent = host.firstIndex(of: ".").map { host[host.index(after: $0)...] }
        for name in names where !ignoring.contains(name) {
            let presented = canonical(name[...])
            if presented == host { return true }
            if presented.hasPrefix("*."), let parent, presented.dropFirst(2) == parent { return true }
        }
        return false
    }

    private static func canonical(_ name: Substring) -> String {
        var lowered = name.lowercased()
        if lowered.hasSuffix(".") { lowered.removeLast() }
        return lowered
    }
}
