import FoundationEssentials
import TrustEvaluatorCore

/// One entry of `hosts`: its pattern, pins, revocation, report URIs, anchors and CT requirement.
extension ConfigurationBuilder {
    func pattern(_ host: RawHost, at path: String) throws(PincheckError) -> HostPattern {
        do {
            return try HostPattern(host.pattern, includeSubdomains: host.includeSubdomains ?? false, publicSuffixes: publicSuffixes)
        } catch { throw fail("\(path).pattern", error.message) }
    }

    func hostEntry(
        _ host: RawHost, pattern: HostPattern, at path: String, fileAnchors: TrustAnchors,
        defaultTransparency: CertificateTransparency.Requirement?
    ) throws(PincheckError) -> Configuration.HostEntry {
        let revocation = try revocation(host.revocation, at: "\(path).revocation")
        let pins = try pinSets(host, at: path)
        var reportURIs: [URL] = []
        for (index, text) in (host.reportURIs ?? []).enumerated() {
            guard let url = URL(string: text), url.scheme == "https", url.host != nil else {
                throw fail("\(path).reportURIs[\(index)]", "\"\(text)\" is not an https:// URL")
            }
            reportURIs.append(url)
        }
        var validation = ValidationPolicy(
            anchors: try host.anchors.map { raw throws(PincheckError) in try anchors(raw, at: "\(path).anchors") } ?? fileAnchors,
            chainValidation: host.allowInvalidCertificates == true ? .disabled(because: "allowInvalidCertificates in \(path)") : .required,
            nameValidation: host.validatesDomainName == false ? .disabled(because: "validatesDomainName false in \(path)") : .required)
        validation.revocationLists = revocation.lists
        validation.revocationScope = revocation.scope
        validation.certificateTransparency =
            host.certificateTransparency == nil
            ? defaultTransparency : try transparency(host.certificateTransparency, at: "\(path).certificateTransparency")
        var policy = HostPolicy(
            pattern: pattern, pinSets: pins.sets, validation: validation, reportURIs: reportURIs,
            revocation: revocation.policy)
        policy.pinOverrideAnchors = try host.pinOverrideAnchors.map { raw throws(PincheckError) in
            try anchors(raw, at: "\(path).pinOverrideAnchors")
        }
        return Configuration.HostEntry(path: path, policy: policy, enforce: pins.enforce, expires: pins.expires)
    }

    /// `revocation`: CRL files, their scope, a required staple, and the distribution points' CRLs.
    private func revocation(_ raw: RawRevocation?, at path: String) throws(PincheckError)
        -> (lists: [CertificateRevocationList], scope: ValidationPolicy.RevocationScope, policy: RevocationPolicy)
    {
        var lists: [CertificateRevocationList] = []
        for (index, file) in (raw?.crls ?? []).enumerated() {
            do { lists += try CertificateRevocationList.load(contentsOf: resolve(file)) } catch {
                throw fail("\(path).crls[\(index)]", error.description)
            }
        }
        let scope: ValidationPolicy.RevocationScope
        switch raw?.crlScope ?? "leaf" {
        case "leaf": scope = .leaf
        case "chain": scope = .wholeChain
        case let other: throw fail("\(path).crlScope", "\"\(other)\" is not \"leaf\" or \"chain\"")
        }
        var policy = RevocationPolicy(requireStapledOCSP: raw?.requireStapledOCSP ?? false)
        switch raw?.distributionPoints ?? "off" {
        case "off": break
        case "soft": policy.distributionPointCRLs = DistributionPointCRLs(scope: scope, failure: .soft)
        case "hard": policy.distributionPointCRLs = DistributionPointCRLs(scope: scope, failure: .hard)
        case let other: throw fail("\(path).distributionPoints", "\"\(other)\" is not \"off\", \"soft\" or \"hard\"")
        }
        return (lists, scope, policy)
    }
}
