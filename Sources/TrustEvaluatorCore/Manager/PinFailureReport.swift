import FoundationEssentials

/// An RFC 7469 §3 pin validation failure report.
public struct PinFailureReport: Sendable, Encodable, Hashable {
    public let dateTime: String
    public let hostname: String
    public let port: Int
    public let effectiveExpirationDate: String?
    public let includeSubdomains: Bool
    public let notedHostname: String
    public let servedCertificateChain: [String]
    public let validatedCertificateChain: [String]
    public let knownPins: [String]
    /// Where it is to be sent (not part of the JSON body).
    public let reportURIs: [URL]

    enum CodingKeys: String, CodingKey {
        case dateTime = "date-time", hostname, port
        case effectiveExpirationDate = "effective-expiration-date"
        case includeSubdomains = "include-subdomains"
        case notedHostname = "noted-hostname"
        case servedCertificateChain = "served-certificate-chain"
        case validatedCertificateChain = "validated-certificate-chain"
        case knownPins = "known-pins"
    }

    init(time: Date, host: String, port: Int, policy: HostPolicy, active: [PinSet], served: [Certificate], validated: [Certificate]) {
        dateTime = Timestamp.iso8601(time)
        hostname = host
        self.port = port
        effectiveExpirationDate = active.compactMap(\.expires).min().map(Timestamp.iso8601)
        includeSubdomains = policy.pattern.kind != .exact
        notedHostname = policy.pattern.base
        servedCertificateChain = served.map(\.pemEncoded)
        validatedCertificateChain = validated.map(\.pemEncoded)
        var pins: [String] = []
        for set in active {
            pins += set.keyPins.map { "pin-\($0.algorithm.rawValue)=\"\($0.base64)\"" }
        }
        knownPins = pins
        reportURIs = policy.reportURIs
    }

    /// The report as RFC 7469 JSON.
    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }
}
