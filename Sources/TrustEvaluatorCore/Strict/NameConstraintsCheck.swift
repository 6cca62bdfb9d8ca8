/// Name constraints the way RFC 5280 §4.2.1.10 and the Web PKI mean them, where OpenSSL is lax:
/// - the extension names at least one subtree;
/// - a DNS subtree is a host name (no leading period: that form is for URIs only);
/// - a wildcard SAN is judged by every name it can match: `*.example.com` under a CA that excludes
///   `bar.example.com` is refused (CVE-2025-61727).
struct NameConstraintsCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        let certificates = input.path.certificates
        guard let leaf = certificates.first else { return }
        let wildcards = leaf.dnsNames.filter { $0.hasPrefix("*.") }.map { String($0.dropFirst(2)).lowercased() }
        for (depth, certificate) in certificates.enumerated() where depth > 0 {
            guard let constraints = certificate.facts.nameConstraints else { continue }
            // Built only for a finding: the subject costs an OpenSSL name print.
            var at: String { "the certificate at depth \(depth) (\(certificate.subject))" }
            if (constraints.permitted ?? []).isEmpty && (constraints.excluded ?? []).isEmpty {
                findings.fail(.nameConstraints, "\(at) has a nameConstraints extension without any subtree")
            }
            for case .dnsName(let base) in (constraints.permitted ?? []) + (constraints.excluded ?? [])
            where !DNSNameSyntax.isValid(base, allowWildcard: false) {
                findings.fail(.nameConstraints, "\(at) has a malformed DNS name constraint \"\(base)\"")
            }
            for case .dnsName(let base) in constraints.excluded ?? [] {
                let excluded = base.lowercased()
                for parent in wildcards {
                    guard excluded.hasSuffix("." + parent), !excluded.dropLast(parent.count + 1).contains(".") else { continue }
                    findings.fail(
                        .nameConstraints,
                        "the leaf's wildcard *.\(parent) covers \(excluded), which \(at) excludes")
                }
            }
        }
    }
}
