import FoundationEssentials

/// Which hosts a policy applies to: an exact name, `*.example.com` (exactly one more label),
/// `**.example.com` (zero or more labels), or a name with TrustKit's `includeSubdomains`.
/// IP literals match only themselves.
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Only the name itself.
        case exact
        /// The name and every name below it (TrustKit's `includeSubdomains`).
        case includingSubdomains
        /// `*.base`: exactly one label below the base.
        case oneLabel
        /// `**.base`: the base and any number of labels below it.
        case anyDepth
    }

    /// The normalised name below the wildcard (or the whole name), lowercase A-labels.
    public let base: String
    public let kind: Kind

    /// Parses a pattern.
    /// - Parameters:
    ///   - text: `api.example.com`, `*.example.com`, `**.example.com`, an IP literal, or an IDN in either form.
    ///   - includeSubdomains: TrustKit's flag: the name and every subdomain.
    ///   - publicSuffixes: Used to refuse patterns that would cover names registered by others.
    /// - Throws: ``PincheckError`` (`policy.invalid`) naming the pattern.
    public init(_ text: String, includeSubdomains: Bool = false, publicSuffixes: PublicSuffixList?) throws(PincheckError) {
        var name = text
        let kind: Kind
        if name.hasPrefix("**.") {
            name.removeFirst(3); kind = .anyDepth
        } else if name.hasPrefix("*.") {
            name.removeFirst(2); kind = .oneLabel
        } else {
            kind = includeSubdomains ? .includingSubdomains : .exact
        }
        if includeSubdomains && (kind == .anyDepth || kind == .oneLabel) {
            throw PincheckError(.invalidPolicy, "pattern \"\(text)\": use either a wildcard or includeSubdomains, not both")
        }
        guard !name.contains("*") else {
            throw PincheckError(.invalidPolicy, "pattern \"\(text)\": a wildcard may only be the whole first label (*.example.com or **.example.com)")
        }
        let normalised: PeerName
        do {
            normalised = try HostName.peerName(for: name)
        } catch {
            throw PincheckError(.invalidPolicy, "pattern \"\(text)\": \(error.message)")
        }
        switch normalised {
        case .ipAddress(let address):
            guard kind == .exact else {
                throw PincheckError(.invalidPolicy, "pattern \"\(text)\": an IP address matches only itself (no wildcards or includeSubdomains)")
            }
            base = address
        case .dns(let dnsName):
            if kind != .exact {
                guard let publicSuffixes else {
                    throw PincheckError(
                        .invalidPolicy,
                        "pattern \"\(text)\": subdomain patterns need the Public Suffix List to be checked (Debian: apt-get install publicsuffix)")
                }
                if publicSuffixes.coversOtherRegistrants(dnsName) {
                    throw PincheckError(
                        .invalidPolicy,
                        "pattern \"\(text)\": \(dnsName) is or contains a public suffix, so its subdomains belong to other registrants; pin the registrable names you own instead"
                    )
                }
            }
            base = dnsName
        }
        self.kind = kind
    }

    /// How specifically this pattern matches `host` (normalised), or nil when it does not.
    /// Larger is more specific: an exact match beats any wildcard, a longer base beats a shorter one.
    /// Runs on every evaluation a trust manager makes: no allocation.
    func specificity(for host: String) -> Int? {
        switch kind {
        case .exact:
            return host == base ? 1_000 : nil
        case .oneLabel:
            guard let labels = labelsAbove(in: host), labels == 1 else { return nil }
            return baseLabels * 3 + 2
        case .includingSubdomains, .anyDepth:
            if host == base { return baseLabels * 3 + 1 }
            return labelsAbove(in: host) != nil ? baseLabels * 3 : nil
        }
    }

    /// The number of labels `host` has in front of `.base`, or nil when it does not end in `.base`.
    private func labelsAbove(in host: String) -> Int? {
        let name = host.utf8, suffix = base.utf8
        guard name.count > suffix.count + 1 else { return nil }
        let start = name.index(name.endIndex, offsetBy: -suffix.count)
        guard name[start...].elementsEqual(suffix), name[name.index(before: start)] == UInt8(ascii: ".") else { return nil }
        var labels = 1
        for byte in name[..<name.index(before: start)] where byte == UInt8(ascii: ".") { labels += 1 }
        return labels
    }

    /// The number of labels of ``base``.
    private var baseLabels: Int {
        var labels = 1
        for byte in base.utf8 where byte == UInt8(ascii: ".") { labels += 1 }
        return labels
    }

    public var description: String {
        switch kind {
        case .exact: base
        case .includingSubdomains: "\(base) (and subdomains)"
        case .oneLabel: "*.\(base)"
        case .anyDepth: "**.\(base)"
        }
    }
}
