import Foundation
import Logging
import NIOConcurrencyHelpers
import TrustEvaluator

/// What judges a client at one moment: the evaluator of one anchor set or of every domain's CAs,
/// and with trust domains the evaluator of each. Replaced whole, never edited.
struct ClientTrust: Sendable {
    let evaluator: Evaluator
    let router: TrustDomainRouter?
    let trustDomains: [String: SPIFFETrustDomain]
    let generation: Int

    init(evaluator: Evaluator, router: TrustDomainRouter?, trustDomains: [String: SPIFFETrustDomain], generation: Int) {
        self.evaluator = evaluator
        self.router = router
        self.trustDomains = trustDomains
        self.generation = generation
    }

    /// One evaluator per domain, each with `clients` (purpose and name rules already set) over that
    /// domain's CAs and CRLs.
    /// - Throws: `policy.invalid` for no domain or a domain given twice.
    init(trustDomains: [SPIFFETrustDomain], clients: TrustPolicy, certificateCache: CertificateCache,
         verdictCache: VerdictCache?, generation: Int) throws(PincheckError) {
        var byName: [String: SPIFFETrustDomain] = [:]
        for domain in trustDomains {
            guard byName.updateValue(domain, forKey: domain.name) == nil else {
                throw PincheckError(.invalidPolicy, "trust domain \(domain.name) is given twice")
            }
        }
        var every = try Self.placeholderPolicy(clients, trustDomains)
        every.validation.revocationLists += trustDomains.flatMap(\.revocationLists)
        var evaluators: [String: Evaluator] = [:]
        for domain in trustDomains {
            var policy = clients
            policy.validation.anchors = domain.anchors
            policy.validation.revocationLists += domain.revocationLists
            evaluators[domain.name] = Evaluator(policy: policy, certificateCache: certificateCache, verdictCache: verdictCache)
        }
        let everyDomain = Evaluator(policy: every, certificateCache: certificateCache, verdictCache: verdictCache)
        self.init(evaluator: everyDomain, router: TrustDomainRouter(evaluators: evaluators, everyDomain: everyDomain),
                  trustDomains: byName, generation: generation)
    }

    /// `policy` over every domain's CAs at once.
    /// - Throws: `policy.invalid` for no domain.
    static func placeholderPolicy(_ policy: TrustPolicy, _ domains: [SPIFFETrustDomain]) throws(PincheckError) -> TrustPolicy {
        guard !domains.isEmpty else { throw PincheckError(.invalidPolicy, "no trust domain given: every client would be refused") }
        var every = policy
        every.validation.anchors = try TrustAnchors(certificates: domains.flatMap(\.anchors.certificates), classification: .privatePKI)
        return every
    }

    static func metadata(_ trust: ClientTrust, folder: String) -> Logger.Metadata {
        ["folder": "\(folder)", "generation": "\(trust.generation)",
         "domains": "\(trust.trustDomains.keys.sorted().map { "\($0) (\(trust.trustDomains[$0]!.anchors.certificates.count) CA)" }.joined(separator: ", "))"]
    }
}

/// The trust a verifier judges by, shared by its copies: read once per handshake, replaced whole
/// by a watched bundle folder.
final class ClientTrustSource: Sendable {
    private let box: NIOLockedValueBox<ClientTrust>

    init(_ trust: ClientTrust) { box = NIOLockedValueBox(trust) }

    var current: ClientTrust { box.withLockedValue { $0 } }

    func replace(with trust: ClientTrust) { box.withLockedValue { $0 = trust } }

    /// Reads `folder` every `interval` and puts in force what `make` builds from a change that
    /// parses; stops once this source is gone.
    func watch(folder: String, from first: BundleFolderSnapshot, every interval: Duration, logger: Logger,
               make: @escaping @Sendable ([SPIFFETrustDomain], Int) throws(PincheckError) -> ClientTrust) {
        Task.detached { [weak self] in
            var last = first
            while true {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                self.reload(folder: folder, last: &last, logger: logger, make: make)
            }
        }
    }

    /// One look at the folder: a change that parses replaces the trust in force; one that does not
    /// is logged once and the trust in force is kept.
    func reload(folder: String, last: inout BundleFolderSnapshot, logger: Logger,
                make: @Sendable ([SPIFFETrustDomain], Int) throws(PincheckError) -> ClientTrust) {
        let inForce = current
        do throws(PincheckError) {
            let next = try BundleFolderSnapshot(folder: folder)
            guard next != last else { return }
            last = next
            let trust = try make(try next.domains(), inForce.generation + 1)
            replace(with: trust)
            logger.notice("trust bundles in force", metadata: ClientTrust.metadata(trust, folder: folder))
        } catch {
            logger.error("trust bundle change refused; the bundles in force are kept",
                         metadata: ["folder": "\(folder)", "generation": "\(inForce.generation)", "error": "\(error)"])
        }
    }
}

/// The bytes of a bundle folder's files at one moment: compared to tell a change, and parsed
/// from the same bytes (a file rewritten between the two is seen at the next look).
struct BundleFolderSnapshot: Equatable, Sendable {
    let folder: String
    let contents: [String: [UInt8]]
    let files: [SPIFFETrustDomain.BundleFile]

    init(folder: String) throws(PincheckError) {
        self.folder = folder
        files = try SPIFFETrustDomain.bundleFiles(inFolder: folder)
        var contents: [String: [UInt8]] = [:]
        for file in files {
            contents[file.path] = try InputFile.read(file.path, limit: InputFile.certificateLimit, what: "trust bundle")
        }
        self.contents = contents
    }

    /// The domains these files describe.
    /// - Throws: ``PincheckError`` for a file that does not parse, a CRL file without its bundle,
    ///   or no bundle at all.
    func domains() throws(PincheckError) -> [SPIFFETrustDomain] {
        var crls: [String: [CertificateRevocationList]] = [:]
        for file in files where file.kind == .revocationLists {
            crls[file.domain] = try CertificateRevocationList.parse(contents[file.path] ?? [], source: file.path)
        }
        var domains: [SPIFFETrustDomain] = []
        for file in files where file.kind == .bundle {
            let certificates = try Certificate.parseBundle(contents[file.path] ?? [], source: file.path)
            domains.append(try SPIFFETrustDomain(file.domain, anchors: TrustAnchors(certificates: certificates, classification: .privatePKI),
                                                 revocationLists: crls.removeValue(forKey: file.domain) ?? []))
        }
        guard !domains.isEmpty else {
            throw PincheckError(.emptyInput, "the trust-bundle folder holds no DOMAIN.trust-bundle.pem file", source: folder)
        }
        if let orphan = crls.keys.sorted().first {
            throw PincheckError(.invalidPolicy, "\(orphan).crl.pem names a trust domain without a bundle in the folder", source: folder)
        }
        return domains
    }
}
