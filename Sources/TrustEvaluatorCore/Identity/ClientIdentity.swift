import FoundationEssentials

/// An identity a server requires of its clients' certificates (a service mesh's rule): one of
/// them must be in the client leaf's subjectAltName.
public enum ClientIdentity: Sendable, Hashable, CustomStringConvertible {
    /// A URI, compared exactly (a SPIFFE ID such as `spiffe://example.org/ns/prod/sa/api`).
    case uri(String)
    /// A DNS name, compared without regard to case (no wildcard matching: a client names itself).
    case dnsName(String)

    public var description: String {
        switch self {
        case .uri(let uri): "URI:\(uri)"
        case .dnsName(let name): "DNS:\(name)"
        }
    }

    /// Whether the leaf's subjectAltName holds this identity.
    package func isCarried(by leaf: Certificate) -> Bool {
        leaf.subjectAlternativeNames.contains { name in
            switch (self, name) {
            case (.uri(let wanted), .uri(let carried)): wanted == carried
            case (.dnsName(let wanted), .dnsName(let carried)): wanted.lowercased() == carried.lowercased()
            default: false
            }
        }
    }
}
