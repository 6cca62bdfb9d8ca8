import Foundation
import Logging
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
    init(
        trustDomains: [SPIFFETrustDomain], clients: TrustPolicy, certificateCache: CertificateCache,
        verdictCache: VerdictCache?, generation: Int
    ) throws(PincheckError) {
        var byName: [String: SPIFFETrustDomain] = [:]
        for domain in trustDomains {
            guard byName.updateValue(domain, forKey: domain.name) == nil else {
                throw PincheckError(.invalidPolicy, "trust domain \(domain.name) is given twice")
            }
        }
        var every = try Self.placeholderPolicy(clients, trustDomains)
        every.validation.revocationLists += trustDomains.flatMap(\.revocationLists)
        var validations: [String: ValidationPolicy] = [:]
        for domain in trustDomains {
            var validation = clients.validation
            validation.anchors = domain.anchors
            validation.revocationLists += domain.revocationLists
            validations[domain.name] = validation
        }
        var evaluators: [String: Evaluator] = [:]
        for (name, validation) in validations {
            var policy = clients
            policy.validation = validation
            policy.validation.clientIdentity.trustDomains = TrustDomainRule(domain: name, domains: validations)
            evaluators[name] = Evaluator(policy: policy, certificateCache: certificateCache, verdictCache: verdictCache)
        }
        every.validation.clientIdentity.trustDomains = TrustDomainRule(domain: nil, domains: validations)
        let everyDomain = Evaluator(policy: every, certificateCache: certificateCache, verdictCache: verdictCache)
        self.init(
            evaluator: everyDomain, router: TrustDomainRouter(evaluators: evaluators, everyDomain: everyDomain),
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

    static func metadata(_ trust: ClientTrust, source: String) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["source": "\(source)", "generation": "\(trust.generation)"]
        if trust.router != nil {
            metadata["domains"] =
                "\(trust.trustDomains.keys.sorted().map { "\($0) (\(trust.trustDomains[$0]!.anchors.certificates.count) CA)" }.joined(separator: ", "))"
        } else {
            metadata["anchors"] = "\(trust.evaluator.policy.validation.anchors.certificates.count)"
        }
        return metadata
    }
}

/// The trust a verifier judges by, shared by its copies: read once per handshake, replaced whole
/// by a watched bundle folder.
final class ClientTrustSource: Sendable {
    private let box: Locked<ClientTrust>

    init(_ trust: ClientTrust) { box = Locked(trust) }

    var current: ClientTrust { box.withLock { $0 } }

    func replace(with trust: ClientTrust) { box.withLock { $0 = trust } }

    /// Reads the watched files (`read`) every `interval` and puts in force what `make` builds from a
    /// change that parses; stops once this source is gone.
    func watch<Files: Equatable & Sendable>(
        _ what: String, from first: Files, every interval: Duration, logger: Logger,
        read: @escaping @Sendable () throws(PincheckError) -> Files,
        make: @escaping @Sendable (Files, Int) throws(PincheckError) -> ClientTrust
    ) {
        Task.detached { [weak self] in
            var last = first
            while true {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                self.reload(what, last: &last, logger: logger, read: read, make: make)
            }
        }
    }

    /// One look at the files: a change that parses replaces the trust in force; one that does not
    /// is logged once and the trust in force is kept.
    func reload<Files: Equatable>(
        _ what: String, last: inout Files, logger: Logger,
        read: () throws(PincheckError) -> Files,
        make: (Files, Int) throws(PincheckError) -> ClientTrust
    ) {
        let inForce = current
        do throws(PincheckError) {
            let next = try read()
            guard next != last else { return }
            last = next
            let trust = try make(next, inForce.generation + 1)
            replace(with: trust)
            logger.notice("client trust in force", metadata: ClientTrust.metadata(trust, source: what))
        } catch {
            logger.error(
                "client trust change refused; the trust in force is kept",
                metadata: ["source": "\(what)", "generation": "\(inForce.generation)", "error": "\(error)"])
        }
    }
}

/// The bytes of a set of files at one moment, in order: compared to tell a change.
struct WatchedFiles: Equatable, Sendable {
    let contents: [[UInt8]]

    init(_ paths: [String]) throws(PincheckError) {
        var contents: [[UInt8]] = []
        for path in paths { contents.append(try InputFile.read(path, limit: InputFile.certificateLimit, what: "trust file")) }
        self.contents = contents
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
            domains.append(
                try SPIFFETrustDomain(
                    file.domain, anchors: TrustAnchors(certificates: certificates, classification: .privatePKI),
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
