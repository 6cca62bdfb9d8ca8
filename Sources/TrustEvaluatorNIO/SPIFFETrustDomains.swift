import Foundation
import TrustEvaluator

/// A SPIFFE ID, `spiffe://TRUST-DOMAIN/PATH`, parsed by the rules of the SPIFFE ID specification:
/// a trust domain of lowercase letters, digits, `.`, `-` and `_` (no port, no user), a path of
/// non-empty segments of letters, digits, `.`, `-` and `_` (no `.` or `..` segment, no trailing
/// `/`), no query or fragment, at most 2,048 bytes.
public struct SPIFFEID: Sendable, Hashable, CustomStringConvertible {
    /// The trust domain: the authority whose bundle the identity's chain must end at.
    public let trustDomain: String
    /// The path, empty or starting with `/`.
    public let path: String

    /// - Throws: `PincheckError` (`policy.invalid`) for text that is not a SPIFFE ID.
    public init(parsing text: String) throws(PincheckError) {
        func refuse(_ why: String) -> PincheckError {
            PincheckError(.invalidPolicy, "\"\(text.prefix(120))\" is not a SPIFFE ID: \(why)")
        }
        guard text.utf8.count <= 2048 else { throw refuse("longer than 2048 bytes") }
        guard text.hasPrefix("spiffe://") else { throw refuse("it does not start with spiffe://") }
        let rest = text.dropFirst("spiffe://".count)
        let domain = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(domain.count)
        guard let trustDomain = Self.trustDomain(String(domain)) else {
            throw refuse("the trust domain must be lowercase letters, digits, '.', '-' and '_' (no port, user or upper case)")
        }
        if !path.isEmpty {
            let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            for segment in segments {
                guard !segment.isEmpty else { throw refuse("the path has an empty segment or a trailing /") }
                guard segment != ".", segment != ".." else { throw refuse("the path has a '.' or '..' segment") }
                guard segment.utf8.allSatisfy(Self.isPathByte) else {
                    throw refuse("a path segment holds a character other than letters, digits, '.', '-' and '_'")
                }
            }
        }
        self.trustDomain = trustDomain
        self.path = String(path)
    }

    public var description: String { "spiffe://\(trustDomain)\(path)" }

    /// `name` when it is a valid trust-domain name, else nil.
    static func trustDomain(_ name: String) -> String? {
        guard !name.isEmpty, name.utf8.count <= 255, name.utf8.allSatisfy({ byte in
            (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2E || byte == 0x2D || byte == 0x5F
        }) else { return nil }
        return name
    }

    private static func isPathByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == 0x2E || byte == 0x2D || byte == 0x5F
    }
}

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

/// Which evaluator judges a client: the one of the trust domain its leaf's SPIFFE ID names.
struct TrustDomainRouter: Sendable {
    enum Route {
        case domain(SPIFFEID, Evaluator)
        /// Not routable: judged against every domain's CAs for the record, and refused with this reason.
        case refused(Reason)
    }

    let evaluators: [String: Evaluator]
    /// Every domain's CAs at once: for the verdict of a client no domain can judge, and never
    /// alone for a trusted one.
    let everyDomain: Evaluator

    func route(_ leaf: Certificate) -> Route {
        let claimed = leaf.subjectAlternativeNames.compactMap { name -> String? in
            if case .uri(let uri) = name, uri.lowercased().hasPrefix("spiffe:") { return uri }
            return nil
        }
        guard claimed.count == 1, let only = claimed.first else {
            return .refused(Reason(.trustDomainMissing, claimed.isEmpty
                ? "the client certificate (\(leaf.subject)) carries no SPIFFE ID: a trust domain's bundle cannot be chosen"
                : "the client certificate (\(leaf.subject)) carries \(claimed.count) SPIFFE IDs (\(claimed.joined(separator: ", "))); an X509-SVID carries exactly one",
                requirement: .name))
        }
        let id: SPIFFEID
        do { id = try SPIFFEID(parsing: only) } catch {
            return .refused(Reason(.trustDomainMissing, "the client certificate (\(leaf.subject)) carries a malformed SPIFFE ID: \(error.message)", requirement: .name))
        }
        guard let evaluator = evaluators[id.trustDomain] else {
            return .refused(Reason(.trustDomainUnknown,
                "the client certificate names trust domain \(id.trustDomain) (\(id)), which has no bundle here (known: \(evaluators.keys.sorted().joined(separator: ", ")))",
                requirement: .name))
        }
        return .domain(id, evaluator)
    }

    /// The other trust domain whose CAs would have let this chain in, if one would: the sign of a
    /// CA of one domain issuing an identity of another.
    func domainTrusting(_ chain: [Certificate], except claimed: String, at time: Date) -> String? {
        evaluators.keys.sorted().first { name in
            name != claimed && ((try? evaluators[name]!.evaluate(chain, host: nil, at: time))?.isTrusted ?? false)
        }
    }
}
