import FoundationEssentials
import TrustEvaluatorCore

/// Apple's App Transport Security pins (`NSAppTransportSecurity` / `NSPinnedDomains`).
extension ConfigurationImporter {
    private static let atsDomainKeys: Set<String> = ["NSIncludesSubdomains", "NSPinnedLeafIdentities", "NSPinnedCAIdentities"]

    /// App Transport Security identity pinning (iOS 14+, macOS 11+): per domain, the leaf must match
    /// one of `NSPinnedLeafIdentities` and a certificate above it one of `NSPinnedCAIdentities`;
    /// with both lists, both must; an empty list blocks the domain. Each identity is a dictionary
    /// `{ SPKI-SHA256-BASE64: … }`. Unlisted domains get ATS's default validation.
    static func ats(_ data: Data, source: String) throws(PincheckError) -> RawConfiguration {
        let root = try plistDictionary(data, source: source, format: "App Transport Security")
        let transport = root["NSAppTransportSecurity"]?.dictionary ?? root
        guard let domains = transport["NSPinnedDomains"]?.dictionary else {
            throw PincheckError(.invalidPolicy, "no NSPinnedDomains dictionary (nor an NSAppTransportSecurity holding one)", source: source)
        }
        var hosts: [RawHost] = []
        for (domain, path, settings) in try domainSettings(domains, in: "NSPinnedDomains", allowing: atsDomainKeys, source: source) {
            func identities(_ key: String) throws(PincheckError) -> [String]? {
                guard let value = settings[key] else { return nil }
                guard case .array(let entries) = value else {
                    throw PincheckError(.invalidPolicy, "\(path).\(key): not an array of identities", source: source)
                }
                var pins: [String] = []
                for (index, entry) in entries.enumerated() {
                    guard let identity = entry.dictionary, identity.count == 1, let hash = identity["SPKI-SHA256-BASE64"]?.string else {
                        throw PincheckError(
                            .invalidPolicy, "\(path).\(key)[\(index)]: an identity is a dictionary holding SPKI-SHA256-BASE64 only", source: source)
                    }
                    pins.append("sha256/" + hash)
                }
                return pins
            }
            let leaf = try identities("NSPinnedLeafIdentities")
            let authorities = try identities("NSPinnedCAIdentities")
            guard leaf != nil || authorities != nil else {
                throw PincheckError(.invalidPolicy, "\(path): neither NSPinnedLeafIdentities nor NSPinnedCAIdentities", source: source)
            }
            // A Boolean in Apple's schema; another type is refused rather than read as false.
            if let value = settings["NSIncludesSubdomains"], value.bool == nil {
                throw PincheckError(.invalidPolicy, "\(path).NSIncludesSubdomains: not a Boolean (<true/> or <false/>)", source: source)
            }
            hosts.append(
                RawHost(
                    pattern: domain, includeSubdomains: settings["NSIncludesSubdomains"]?.bool,
                    leafPins: leaf, caPins: authorities))
        }
        return RawConfiguration(allHostsMustBeEvaluated: false, hosts: hosts)
    }
}
