import Foundation
import TrustEvaluator

/// A SPIFFE trust domain and its bundle: the CAs that issue its identities (and, optionally, their
/// CRLs). A client whose SPIFFE ID names this domain must chain to these CAs and no others
/// (Envoy's `trust_bundle_map`).
public struct SPIFFETrustDomain: Sendable {
    /// The trust domain's name, `example.org` in `spiffe://example.org/…`.
    public let name: String
    /// The domain's CAs.
    public let anchors: TrustAnchors
    /// CRLs of the domain's CAs, checked for its clients.
    public let revocationLists: [CertificateRevocationList]

    /// - Parameters:
    ///   - name: The trust domain, as in a SPIFFE ID.
    ///   - anchors: The domain's own CAs: certificates, never the system store.
    ///   - revocationLists: CRLs of those CAs (none by default).
    /// - Throws: `PincheckError` (`policy.invalid`) for a name that is not a trust domain, or
    ///   anchors that are the system store.
    public init(_ name: String, anchors: TrustAnchors, revocationLists: [CertificateRevocationList] = []) throws(PincheckError) {
        guard let name = SPIFFEID.trustDomain(name) else {
            throw PincheckError(.invalidPolicy, "\"\(name.prefix(120))\" is not a SPIFFE trust domain (lowercase letters, digits, '.', '-' and '_')")
        }
        guard !anchors.certificates.isEmpty else {
            throw PincheckError(.invalidPolicy, "trust domain \(name): its bundle must be its own CAs, not the system store")
        }
        self.name = name
        self.anchors = anchors
        self.revocationLists = revocationLists
    }

    /// The bundles of a SPIFFE bundle folder: one PEM file per trust domain, named
    /// `DOMAIN.trust-bundle.pem` (or `DOMAIN.pem`), and optionally that domain's CRLs in
    /// `DOMAIN.crl.pem`; other files are ignored.
    /// - Throws: `PincheckError` when a bundle or CRL file cannot be read, a bundle holds no
    ///   certificate, a CRL file names a domain without a bundle, or the folder holds no bundle at
    ///   all (an empty trust set would refuse every client).
    public static func bundles(inFolder folder: String) throws(PincheckError) -> [SPIFFETrustDomain] {
        try BundleFolderSnapshot(folder: folder).domains()
    }

    struct BundleFile: Equatable {
        enum Kind { case bundle, revocationLists }
        let domain: String
        let path: String
        let kind: Kind
    }

    /// The folder's bundle and CRL files, by name order.
    static func bundleFiles(inFolder folder: String) throws(PincheckError) -> [BundleFile] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted() } catch {
            throw PincheckError(.unreadableFile, "cannot list the trust-bundle folder: \(error.localizedDescription)", source: folder)
        }
        return names.compactMap { file in
            let path = (folder as NSString).appendingPathComponent(file)
            for (suffix, kind) in [(".trust-bundle.pem", BundleFile.Kind.bundle), (".crl.pem", .revocationLists), (".pem", .bundle)]
            where file.hasSuffix(suffix) && file.count > suffix.count {
                return BundleFile(domain: String(file.dropLast(suffix.count)), path: path, kind: kind)
            }
            return nil
        }
    }
}
