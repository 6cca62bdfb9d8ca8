import TrustEvaluatorCore

/// `certificateTransparency` (at the top level and per host) and `certificateTransparencyLogLists`.
extension ConfigurationBuilder {
    /// The file's own log lists, read once.
    func logLists(_ files: [String]) throws(PincheckError) -> CertificateTransparency.Logs {
        var lists: [CertificateTransparency.LogList] = []
        for (index, file) in files.enumerated() {
            do { lists.append(try CertificateTransparency.LogList(contentsOf: resolve(file))) } catch {
                throw fail("certificateTransparencyLogLists[\(index)]", error.description)
            }
        }
        return CertificateTransparency.Logs(lists)
    }

    /// A requirement as written; nil when absent or `"policy": "off"`. Its logs are the store's,
    /// else the known lists; a requirement with neither is a load error.
    func transparency(_ raw: RawTransparency?, at key: String) throws(PincheckError) -> CertificateTransparency.Requirement? {
        guard let raw else { return nil }
        func value<Value: RawRepresentable<String> & CaseIterable>(_ text: String?, _ field: String, default fallback: Value) throws(PincheckError)
            -> Value
        {
            guard let text else { return fallback }
            guard let value = Value(rawValue: text) else {
                throw fail("\(key).\(field)", "\"\(text)\" is not \(Value.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
            }
            return value
        }
        if raw.policy == RawTransparency.off {
            guard raw.enforcement == nil, raw.scope == nil, raw.whenUnenforceable == nil else {
                throw fail(key, "policy \"off\" takes no enforcement, scope or whenUnenforceable")
            }
            return nil
        }
        guard let policy = CertificateTransparency.Policy(rawValue: raw.policy) else {
            throw fail("\(key).policy", "\"\(raw.policy)\" is not \"chrome\", \"apple\" or \"off\"")
        }
        let enforcement: CertificateTransparency.Enforcement = try value(raw.enforcement, "enforcement", default: .enforce)
        var requirement: CertificateTransparency.Requirement
        if let logStore {
            requirement = CertificateTransparency.Requirement(policy: policy, logStore: logStore, enforcement: enforcement)
        } else if let logs {
            requirement = CertificateTransparency.Requirement(policy: policy, logs: logs, enforcement: enforcement)
        } else {
            throw fail(
                key,
                "a Certificate Transparency policy needs log lists: certificateTransparencyLogLists in the file, or lists given at load (--ct-log-list)"
            )
        }
        requirement.scope = try value(raw.scope, "scope", default: .publiclyTrustedAnchors)
        requirement.whenUnenforceable = try value(raw.whenUnenforceable, "whenUnenforceable", default: .fail)
        return requirement
    }
}
