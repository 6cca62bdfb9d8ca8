import FoundationEssentials
import TrustEvaluatorCore

/// TrustKit's `TSKConfiguration` (an Info.plist, or that dictionary alone).
extension ConfigurationImporter {

    /// The exclusion key as TrustKit reads it at run time: the value of its
    /// `kTSKExcludeSubdomainFromParentPolicy` constant is `kSKExcludeSubdomainFromParentPolicy`
    /// (TrustKit/TSKTrustKitConfig.m). The constant's own name is accepted too.
    private static let exclusionKeys = ["kSKExcludeSubdomainFromParentPolicy", "TSKExcludeSubdomainFromParentPolicy"]

    private static let trustKitDomainKeys: Set<String> = Set(
        [
            "TSKPublicKeyHashes", "TSKIncludeSubdomains", "TSKEnforcePinning", "TSKExpirationDate", "TSKReportUris",
            "TSKDisableDefaultReportUri", "TSKPublicKeyAlgorithms",
        ] + exclusionKeys)

    /// The values of TrustKit's (older) `TSKPublicKeyAlgorithms`; any other is refused.
    private static let trustKitAlgorithms: Set<String> = [
        "TSKAlgorithmRsa2048", "TSKAlgorithmRsa4096", "TSKAlgorithmEcDsaSecp256r1", "TSKAlgorithmEcDsaSecp384r1",
    ]

    static func trustKit(_ data: Data, source: String) throws(PincheckError) -> RawConfiguration {
        // Only XML property lists, as TrustKit's Info.plist configurations are, only UTF-8, and
        // nesting bounded before the (recursive) property-list parser sees the document.
        var configuration = try plistDictionary(data, source: source, format: "TrustKit")
        if let nested = configuration["TSKConfiguration"]?.dictionary { configuration = nested }
        guard let domains = configuration["TSKPinnedDomains"]?.dictionary else {
            throw PincheckError(.invalidPolicy, "no TSKPinnedDomains dictionary (nor a TSKConfiguration holding one)", source: source)
        }
        // TrustKit's load-time rules (parseTrustKitConfiguration): a configuration TrustKit refuses
        // to load is refused here too, with TrustKit's reason.
        guard !domains.isEmpty else {
            throw PincheckError(.invalidPolicy, "TSKPinnedDomains is empty: TrustKit refuses a configuration with no pinned domains", source: source)
        }
        var hosts: [RawHost] = []
        var exclusions: [String] = []
        var includingSubdomains: [String] = []
        for (domain, path, settings) in try domainSettings(domains, in: "TSKPinnedDomains", allowing: trustKitDomainKeys, source: source) {
            var excluded = false
            for key in exclusionKeys where try trustKitFlag(settings, key, at: path, source: source) == true { excluded = true }
            if excluded {
                guard settings.count == 1 else {
                    throw PincheckError(.invalidPolicy, "\(path): an excluded domain takes no other key (TrustKit refuses it)", source: source)
                }
                exclusions.append(domain)
                hosts.append(RawHost(pattern: domain, mode: "none"))
                continue
            }
            let host = try trustKitPinnedHost(domain, settings, at: path, source: source)
            if host.includeSubdomains == true { includingSubdomains.append(domain) }
            hosts.append(host)
        }
        // An exclusion needs a parent policy that covers it (TrustKit looks one up and refuses otherwise).
        for excluded in exclusions where !includingSubdomains.contains(where: { excluded.hasSuffix("." + $0) }) {
            throw PincheckError(
                .invalidPolicy,
                "TSKPinnedDomains.\(excluded): excluded from a parent policy, but no parent domain with TSKIncludeSubdomains covers it (TrustKit refuses it)",
                source: source)
        }
        return RawConfiguration(allHostsMustBeEvaluated: false, hosts: hosts)
    }

    /// A TrustKit Boolean (read with -boolValue: a Boolean, number or string); nil when absent.
    private static func trustKitFlag(
        _ settings: [String: PlistValue], _ key: String, at path: String,
        source: String
    ) throws(PincheckError) -> Bool? {
        guard let value = settings[key] else { return nil }
        guard let bool = value.objectiveCBoolValue else {
            throw PincheckError(
                .invalidPolicy, "\(path).\(key): not a Boolean, number or string (TrustKit reads it with -boolValue, which this value does not have)",
                source: source)
        }
        return bool
    }

    /// One pinned domain, refused where TrustKit refuses it (parseTrustKitConfiguration).
    private static func trustKitPinnedHost(
        _ domain: String, _ settings: [String: PlistValue], at path: String,
        source: String
    ) throws(PincheckError) -> RawHost {
        guard let hashes = settings["TSKPublicKeyHashes"]?.strings else {
            throw PincheckError(.invalidPolicy, "\(path).TSKPublicKeyHashes: missing (a list of base64 SPKI SHA-256 hashes)", source: source)
        }
        for hash in hashes where Base64.decode(hash)?.count != 32 {
            throw PincheckError(
                .invalidPolicy, "\(path).TSKPublicKeyHashes: \"\(hash)\" is not a base64 SHA-256 hash (TrustKit refuses it)", source: source)
        }
        // TrustKit: an enforced policy needs a backup pin, a report-only one at least one pin.
        let enforcement = try trustKitFlag(settings, "TSKEnforcePinning", at: path, source: source)
        let enforced = enforcement ?? true
        let required = enforced ? 2 : 1
        guard Set(hashes).count >= required else {
            throw PincheckError(
                .invalidPolicy,
                "\(path).TSKPublicKeyHashes: \(enforced ? "an enforced policy" : "a policy") needs at least \(required) distinct pins (TrustKit refuses fewer: no backup pin)",
                source: source)
        }
        for algorithm in settings["TSKPublicKeyAlgorithms"]?.strings ?? [] where !trustKitAlgorithms.contains(algorithm) {
            throw PincheckError(.invalidPolicy, "\(path).TSKPublicKeyAlgorithms: unknown algorithm \"\(algorithm)\"", source: source)
        }
        let includesSubdomains = try trustKitFlag(settings, "TSKIncludeSubdomains", at: path, source: source)
        _ = try trustKitFlag(settings, "TSKDisableDefaultReportUri", at: path, source: source)
        return RawHost(
            pattern: domain,
            includeSubdomains: includesSubdomains,
            mode: "public-key",
            pins: hashes.map { "sha256/" + $0 },
            // TrustKit enforces by default; `TSKEnforcePinning: NO` is report-only.
            enforce: enforcement,
            expires: settings["TSKExpirationDate"]?.string,
            reportURIs: settings["TSKReportUris"]?.strings)
    }
}
