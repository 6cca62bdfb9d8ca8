import FoundationEssentials

extension TrustAnchors {
    /// What the public CAs did to client certificates in 2026, said wherever a server trusts them
    /// for its clients.
    public static let publicClientCertificatesEnded =
        "public CAs stopped issuing client certificates: Let's Encrypt removed clientAuth from its default profile on 2026-02-11 and ended its tlsclient profile on 2026-07-08, and Chrome's root program requires serverAuth-only hierarchies for new intermediates from 2026-06-15, so clients lose clientAuth at their next renewal; give the server the private CA that issues its clients"

    /// Why these anchors are a poor choice for judging **client** certificates (mutual TLS): the
    /// system store, or each root a browser root program includes. Empty for private CAs.
    /// - Parameter rootPrograms: The root programs' data that tells a public root (the bundled data by default).
    public func clientAuthenticationWarnings(rootPrograms: RootPrograms = .bundled) -> [String] {
        switch origin {
        case .system:
            return ["the client anchors are the system store of public roots: \(Self.publicClientCertificatesEnded)"]
        case .nothing:
            return []
        case .certificates:
            return certificates.compactMap { certificate in
                guard let root = rootPrograms.root(for: certificate), !root.includedIn.isEmpty else { return nil }
                let programs = root.includedIn.map(\.description).joined(separator: ", ")
                return "the client anchor \(certificate.subject) is a public root (\(programs)): \(Self.publicClientCertificatesEnded)"
            }
        }
    }
}
