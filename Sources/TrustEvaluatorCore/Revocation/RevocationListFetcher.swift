import FoundationEssentials
package import PincheckOpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Fetches CRLs from distribution points (http URLs) and keeps those that verified until their
/// nextUpdate: in memory, and in a folder when one is named.
///
/// What a distribution point serves is untrusted until it verifies: a CRL is kept (in memory or
/// in the folder) only after it verified against the issuer on the path that asked for it —
/// signed by that issuer's key, covering the certificate, complete, fresh. Anything else answers
/// the evaluation that fetched it and is then forgotten, so one forged response served over
/// plain http cannot switch revocation off for later evaluations; a failed fetch is remembered
/// for ``Limits/failureMemory`` only, so a dead server is not asked again by every evaluation.
///
/// Every reach is bounded: bytes per fetch, time per fetch (and each evaluation waits at most
/// that plus a 2 s margin), fetches in flight per fetcher, bytes of parsed CRLs kept,
/// distribution points read per certificate (``maximumDistributionPointsPerCertificate``), and
/// destinations (no redirect to another host or port, never a link-local, metadata or — unless
/// allowed — loopback address). One fetch per URL and issuer at a time, however many evaluations
/// wait for it. Fetches run on threads of their own (OpenSSL's HTTP client blocks), never on the
/// caller's: an evaluation awaiting a CRL holds no event loop and no thread of Swift's
/// cooperative pool. Share one fetcher per process.
///
/// On AsyncHTTPClient's road, which is shown the leaf alone, the fetcher also finds the leaf's
/// issuer at its caIssuers URL, under the same timeout, proxy, destinations and fetches in flight
/// (`IssuerLookup`): a candidate for the path the engine verifies, never trusted by arriving.
public final class RevocationListFetcher: Sendable {
    /// Bounds on fetching.
    public struct Limits: Sendable, Hashable {
        /// The largest CRL accepted, in bytes: 64 MiB by default (large CAs publish CRLs of tens
        /// of megabytes; a bigger answer is refused as `revocation.crl-unavailable`).
        public var maximumBytes: Int
        /// How long resolving, connecting and transferring may take together: 10 s by default.
        /// An evaluation waits at most this plus a margin of 2 s for a
        /// fetch; past that the CRL is `revocation.crl-unavailable` (and a fetch still under way
        /// leaves its CRL, once verified, for the next evaluation).
        public var timeout: Duration
        /// The most bytes of parsed CRLs kept in memory, as estimated resident size
        /// (``CertificateRevocationList/estimatedResidentBytes``): 256 MiB by default. The least
        /// recently used go first; a CRL larger than the whole budget is used once and not kept.
        public var maximumCachedBytes: Int = 256 << 20
        /// The most fetches under way at once; more wait for a free slot (each evaluation still
        /// waits no longer than its deadline): 4 by default.
        public var maximumFetchesInFlight: Int = 4
        /// How long a failed fetch (no answer, too slow, too large, or an answer that did not
        /// verify) is remembered, so evaluations in that time do not ask again: 10 s by default.
        public var failureMemory: Duration = .seconds(10)
        /// Whether distribution points on loopback addresses are fetched: false by default, so a
        /// remote peer's certificate cannot make a server send requests to its own loopback
        /// services. Allow it only where the certificates come from this machine.
        public var allowsLoopback: Bool = false
        /// Whether private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) are fetched
        /// from: true by default, since that is where an enterprise PKI publishes its CRLs. Set it
        /// false where no fetch should reach the internal network. Whatever it says, a caIssuers
        /// URL of a leaf not yet verified is never fetched from one when the policy's anchors are
        /// the system's (a public-facing server: its issuers are public).
        public var allowsPrivateNetworks: Bool = true

        public init(maximumBytes: Int = 64 << 20, timeout: Duration = .seconds(10)) {
            self.maximumBytes = maximumBytes
            self.timeout = timeout
        }
    }

    /// Which HTTP proxy fetches go through.
    public enum Proxy: Sendable, Hashable {
        /// `http_proxy` and `no_proxy` from the environment, as curl and OpenSSL read them.
        case environment
        /// None.
        case none
        /// This one (`http://host:port`).
        case url(String)
    }

    /// The most distribution-point URLs read from one certificate; the rest are not fetched, and
    /// the evaluation warns that they were ignored.
    public static var maximumDistributionPointsPerCertificate: Int { X509Handle.distributionPointLimit }

    public let limits: Limits
    /// Where verified CRLs are kept across processes (`<SHA-256 of the URL>.crl`, DER); nil:
    /// memory only (also when the folder named failed ``checkCacheDirectory(_:)``: see
    /// ``cacheDirectoryProblem``).
    public let cacheDirectory: String?
    /// Why the folder given to ``init(limits:cacheDirectory:proxy:)`` is not used; nil when it
    /// is used or none was given.
    public let cacheDirectoryProblem: PincheckError?
    private let transport: @Sendable (String) -> Result<[UInt8], HTTPFetch.Failure>
    /// Finds a leaf's issuers at caIssuers URLs, for a road shown the leaf alone: under this
    /// fetcher's timeout, destinations, proxy and fetches in flight.
    package let issuers: IssuerLookup
    private let state: Locked<State>
    /// Held while a fetched CRL is parsed and verified: one at a time, so parsing (several times
    /// the DER's size in memory while it runs) is never multiplied by the fetches in flight.
    /// Its value counts the parses and verifications done.
    private let parsing = Locked(0)

    /// The most CRLs kept in memory, whatever their size.
    package static let cachedListLimit = 128
    /// The most fetches waiting for a slot; past that an evaluation's CRL is unavailable at once.
    package static let queuedFetchLimit = 256

    private struct Key: Hashable {
        let url: String
        let issuer: SHA256Digest
    }

    private struct State {
        var cached: CostBoundedLRU<String, CertificateRevocationList>
        var fetches = 0
    }

    /// One fetch per URL and issuer, and its failures remembered for ``Limits/failureMemory``.
    private let flights: SingleFlight<Key, FetchedRevocationLists.Result>

    /// One CRL wanted for one certificate, and what it must verify against before it is kept.
    package struct Request: Sendable {
        package let url: String
        /// The SHA-256 of the issuer's key: a fetch, and a remembered failure, are per URL and
        /// issuer, so a certificate naming another CA's URL cannot spoil that URL for the CA's own.
        package let issuer: SHA256Digest
        /// Nil when `list` verified for the certificate; otherwise why not.
        package let verify: @Sendable (CertificateRevocationList) -> String?

        package init(url: String, issuer: SHA256Digest, verify: @escaping @Sendable (CertificateRevocationList) -> String?) {
            self.url = url
            self.issuer = issuer
            self.verify = verify
        }
    }

    /// - Parameters:
    ///   - limits: Bounds on fetching.
    ///   - cacheDirectory: A folder the running user owns and no one else can write, to keep
    ///     verified CRLs across processes. One that fails ``checkCacheDirectory(_:)`` is not used
    ///     (``cacheDirectoryProblem`` says why); ``init(limits:cachingIn:proxy:)`` throws instead.
    ///   - proxy: `.environment` by default.
    /// The fetcher of roads that fetch without being given one (NIO's verification callback, when
    /// a policy asks for distribution-point CRLs): default limits, memory only, one per process.
    package static let processWide = RevocationListFetcher()

    public convenience init(limits: Limits = Limits(), cacheDirectory: String? = nil, proxy: Proxy = .environment) {
        var problem: PincheckError? = nil
        if let cacheDirectory {
            do { try Self.checkCacheDirectory(cacheDirectory) } catch { problem = error }
        }
        self.init(
            limits: limits, cacheDirectory: problem == nil ? cacheDirectory : nil, problem: problem,
            transport: Self.httpTransport(limits: limits, proxy: proxy),
            issuerTransport: Self.issuerTransport(limits: limits, proxy: proxy, maximumBytes: IssuerLookup.maximumBytes))
    }

    /// A fetcher keeping verified CRLs in `folder`, which must pass ``checkCacheDirectory(_:)``.
    /// - Throws: ``PincheckError`` naming the folder and what is wrong with it.
    public convenience init(limits: Limits = Limits(), cachingIn folder: String, proxy: Proxy = .environment) throws(PincheckError) {
        try Self.checkCacheDirectory(folder)
        self.init(
            limits: limits, cacheDirectory: folder, problem: nil, transport: Self.httpTransport(limits: limits, proxy: proxy),
            issuerTransport: Self.issuerTransport(limits: limits, proxy: proxy, maximumBytes: IssuerLookup.maximumBytes))
    }

    /// HTTP GETs under `limits` (bytes: `maximumBytes` when given and smaller).
    private static func httpTransport(limits: Limits, proxy: Proxy) -> @Sendable (String) -> Result<[UInt8], HTTPFetch.Failure> {
        let issuers = issuerTransport(limits: limits, proxy: proxy, maximumBytes: limits.maximumBytes)
        return { url in issuers(url, false) }
    }

    /// HTTP GETs under `limits`, at most `maximumBytes`; the second argument refuses private
    /// networks for that fetch whatever `limits` allows.
    private static func issuerTransport(limits: Limits, proxy: Proxy, maximumBytes: Int) -> IssuerLookup.Transport {
        let proxyText: String? =
            switch proxy {
            case .environment: nil
            case .none: ""
            case .url(let url): url
            }
        let bytes = min(limits.maximumBytes, maximumBytes)
        return { url, publicOnly in
            let destinations = HTTPFetch.Destinations(
                loopback: limits.allowsLoopback,
                privateNetworks: limits.allowsPrivateNetworks && !publicOnly)
            return HTTPFetch.get(url, maximumBytes: bytes, timeout: limits.timeout, proxy: proxyText, destinations: destinations)
        }
    }

    /// A fetcher over another transport (the tests' and the benchmark's seam), for CRLs and issuers alike.
    package convenience init(limits: Limits, cacheDirectory: String?, transport: @escaping @Sendable (String) -> Result<[UInt8], HTTPFetch.Failure>) {
        self.init(limits: limits, cacheDirectory: cacheDirectory, problem: nil, transport: transport, issuerTransport: { url, _ in transport(url) })
    }

    private init(
        limits: Limits, cacheDirectory: String?, problem: PincheckError?,
        transport: @escaping @Sendable (String) -> Result<[UInt8], HTTPFetch.Failure>,
        issuerTransport: @escaping IssuerLookup.Transport
    ) {
        self.limits = limits
        self.cacheDirectory = cacheDirectory
        self.cacheDirectoryProblem = problem
        self.transport = transport
        self.issuers = IssuerLookup(transport: issuerTransport, maximumInFlight: limits.maximumFetchesInFlight, failureMemory: limits.failureMemory)
        self.state = Locked(State(cached: CostBoundedLRU(capacity: Self.cachedListLimit, budget: max(0, limits.maximumCachedBytes))))
        self.flights = SingleFlight(
            memoryLimit: Self.rememberedFailureLimit, maximumInFlight: limits.maximumFetchesInFlight, queueLimit: Self.queuedFetchLimit)
    }

    /// Checks a folder for keeping CRLs: it exists, is a folder (a link to one is followed), is
    /// owned by the running user, and no one else can write it. A folder others can write would
    /// let them plant a CRL; one that is not there, or not a folder, would silently keep nothing.
    /// - Throws: ``PincheckError`` `input.unreadable-file` (missing, not a folder) or
    ///   `policy.invalid` (owner, permissions).
    public static func checkCacheDirectory(_ path: String) throws(PincheckError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let why = errno == ENOENT ? "does not exist" : "cannot be read: \(String(cString: strerror(errno)))"
            throw PincheckError(.unreadableFile, "the CRL cache folder \(why)", source: path)
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw PincheckError(.unreadableFile, "the CRL cache must be a folder; this is not one", source: path)
        }
        guard status.st_uid == geteuid() else {
            throw PincheckError(
                .invalidPolicy,
                "the CRL cache folder is owned by user \(status.st_uid), not by the user running Pincheck (\(geteuid())): another user could plant CRLs in it",
                source: path)
        }
        guard status.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw PincheckError(
                .invalidPolicy,
                "the CRL cache folder can be written by its group or by others (mode \(String(status.st_mode & 0o777, radix: 8))): make it 0700 or 0755",
                source: path)
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw PincheckError(.unreadableFile, "the CRL cache folder cannot be written: \(String(cString: strerror(errno)))", source: path)
        }
    }

    /// Beyond `Limits.timeout`, what an evaluation waits for a fetch in all before it is answered
    /// without it: the transport rounds its bound up to whole seconds.
    package static let deadlineMargin = Duration.seconds(2)

    /// How many fetches have gone out (each URL once per refresh, however many waited for it).
    package var fetchCount: Int { state.withLock { $0.fetches } }

    /// The estimated resident bytes of the CRLs kept in memory.
    package var cachedBytes: Int { state.withLock { $0.cached.cost } }

    /// The CRLs at hand for `urls` that are fresh at `time` (nextUpdate not passed); nil unless
    /// every one is. Never fetches. Every CRL at hand has verified for the issuer that fetched it.
    func fresh(_ urls: [String], at time: Date) -> FetchedRevocationLists? {
        state.withLock { state -> FetchedRevocationLists? in
            var results: [String: FetchedRevocationLists.Result] = [:]
            for url in urls {
                guard let list = state.cached.value(for: url), Self.isFresh(list, at: time) else { return nil }
                results[url] = .list(list)
            }
            return FetchedRevocationLists(byURL: results)
        }
    }

    /// The CRLs `requests` ask for, fetching those not at hand or past their nextUpdate at `time`.
    func lists(_ requests: [Request], at time: Date) async -> FetchedRevocationLists {
        let (ready, asks) = prepare(requests, at: time)
        return gather(ready, asks, await flights.values(asks.map(\.ask)))
    }

    /// The same, blocking the calling thread until they are fetched: for a command-line tool's
    /// own thread, never an event loop or Swift's cooperative pool.
    func listsWaiting(_ requests: [Request], at time: Date) -> FetchedRevocationLists {
        let (ready, asks) = prepare(requests, at: time)
        return gather(ready, asks, flights.valuesWaiting(asks.map(\.ask)))
    }

    private func gather(
        _ ready: [String: FetchedRevocationLists.Result], _ asks: [(url: String, ask: SingleFlight<Key, FetchedRevocationLists.Result>.Ask)],
        _ answers: [FetchedRevocationLists.Result]
    ) -> FetchedRevocationLists {
        var results = ready
        for (asked, answer) in zip(asks, answers) { results[asked.url] = answer }
        return FetchedRevocationLists(byURL: results)
    }

    /// The CRLs at hand and fresh, and the asks for the others: one flight per URL and issuer
    /// across all callers, at most `maximumFetchesInFlight` at once, each waited for until the
    /// timeout and its margin.
    private func prepare(_ requests: [Request], at time: Date) -> (
        ready: [String: FetchedRevocationLists.Result], asks: [(url: String, ask: SingleFlight<Key, FetchedRevocationLists.Result>.Ask)]
    ) {
        var seen = Set<String>()
        let deadline = limits.timeout + Self.deadlineMargin
        var ready: [String: FetchedRevocationLists.Result] = [:]
        var asks: [(url: String, ask: SingleFlight<Key, FetchedRevocationLists.Result>.Ask)] = []
        for request in requests where seen.insert(request.url).inserted {
            let stale = state.withLock { $0.cached.value(for: request.url) }
            if let stale, Self.isFresh(stale, at: time) {
                ready[request.url] = .list(stale)
                continue
            }
            let key = Key(url: request.url, issuer: request.issuer)
            let late = FetchedRevocationLists.Result.failed("fetching the CRL took longer than the \(deadline) allowed", stale: stale)
            let refused = FetchedRevocationLists.Result.failed(
                "more than \(Self.queuedFetchLimit) CRL fetches are waiting; this one was not started", stale: stale)
            let ask = SingleFlight<Key, FetchedRevocationLists.Result>.Ask(key, deadline: (deadline, late), refused: refused) { [self] in
                let started = DetachedThread.start { [self] in land(key, fetch(request, at: time)) }
                if !started { land(key, .failed("no thread to fetch the CRL on", stale: nil)) }
            }
            asks.append((request.url, ask))
        }
        return (ready, asks)
    }

    /// What one fetch brought.
    private enum Fetched {
        /// A CRL that verified: kept.
        case verified(CertificateRevocationList)
        /// A CRL that did not verify: the evaluations waiting for this fetch judge it (and name
        /// what is wrong with it), nothing keeps it, and the failure is remembered briefly.
        case rejected(CertificateRevocationList, why: String)
        /// Nothing usable.
        case failed(String, stale: CertificateRevocationList?)
    }

    /// Records what a fetch brought (a verified list kept, a failure remembered) and answers the
    /// flight's waiters.
    private func land(_ key: Key, _ fetched: Fetched) {
        let memory = limits.failureMemory
        let remembered = { (why: String, stale: CertificateRevocationList?) in
            (value: FetchedRevocationLists.Result.failed("\(why) (a failure of the last \(memory), not asked again yet)", stale: stale), for: memory)
        }
        switch fetched {
        case .verified(let list):
            state.withLock { $0.cached.insert(list, for: key.url, cost: list.estimatedResidentBytes) }
            flights.land(key, .list(list))
        case .rejected(let list, let why):
            flights.land(key, .list(list), remembering: remembered(why, state.withLock { $0.cached.value(for: key.url) }))
        case .failed(let why, let stale):
            flights.land(key, .failed(why, stale: stale), remembering: remembered(why, stale))
        }
    }

    /// The most failed fetches remembered at once.
    package static let rememberedFailureLimit = 4096

    /// One fetch (or a read of the folder): the answer is parsed and verified before anything
    /// keeps it.
    private func fetch(_ request: Request, at time: Date) -> Fetched {
        let url = request.url
        let stale = state.withLock { $0.cached.value(for: url) }
        if let stored = readStored(url), Self.isFresh(stored, at: time),
            parsing.withLock({ count in
                count += 1; return request.verify(stored)
            }) == nil
        {
            return .verified(stored)
        }
        state.withLock { $0.fetches += 1 }
        switch transport(url) {
        case .success(let bytes):
            let parsed: Result<(CertificateRevocationList, String?), PincheckError> = parsing.withLock { count in
                count += 1
                do throws(PincheckError) {
                    let list = try CertificateRevocationList(derEncoded: bytes, source: url)
                    return .success((list, request.verify(list)))
                } catch {
                    return .failure(error)
                }
            }
            switch parsed {
            case .success((let list, nil)):
                store(list, for: url)
                return .verified(list)
            case .success((let list, let why?)):
                return .rejected(list, why: "what \(url) served did not verify: \(why)")
            case .failure(let error):
                return .failed("what \(url) served is not a DER CRL: \(error.message)", stale: stale)
            }
        case .failure(.tooLarge(let limit)):
            return .failed("the CRL is larger than the \(limit) bytes allowed", stale: stale)
        case .failure(.notDER):
            return .failed("what \(url) served is not a DER CRL", stale: stale)
        case .failure(.timedOut):
            return .failed("fetching the CRL took longer than the \(limits.timeout) allowed", stale: stale)
        case .failure(.unavailable(let why)):
            return .failed("the CRL could not be fetched: \(why)", stale: stale)
        case .failure(.refused(let why)):
            return .failed("not fetched: \(why)", stale: stale)
        }
    }

    private static func isFresh(_ list: CertificateRevocationList, at time: Date) -> Bool {
        guard let next = list.handle.nextUpdateSeconds else { return false }
        return Timestamp.seconds(time) < next
    }

    // MARK: The folder

    private func path(for url: String) -> String? {
        cacheDirectory.map { "\($0)/\(Hex.encode(Digest.sha256(Array(url.utf8)))).crl" }
    }

    /// A stored CRL, if its file is a regular file of the running user's that no one else can
    /// write. It is verified before use like a fetched one.
    private func readStored(_ url: String) -> CertificateRevocationList? {
        guard let path = path(for: url) else { return nil }
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(),
            status.st_mode & (S_IWGRP | S_IWOTH) == 0,
            let bytes = try? InputFile.read(path, limit: limits.maximumBytes, what: "cached CRL")
        else { return nil }
        return parsing.withLock { count in
            count += 1
            return try? CertificateRevocationList(derEncoded: bytes, source: path)
        }
    }

    /// Writes a verified CRL into place atomically (``PrivateFile``), so a reader never sees half
    /// a file. A folder that cannot be written only costs the next process a fetch.
    private func store(_ list: CertificateRevocationList, for url: String) {
        guard let path = path(for: url) else { return }
        _ = PrivateFile.write(list.derBytes, to: path, mode: 0o644)
    }
}

extension EvaluationPlan {
    /// An evaluation paused at its revocation check for the CRLs its verified path names: the
    /// path is verified once, before the pause, and the run goes on from there with the lists.
    struct PausedEvaluation {
        fileprivate var run: EvaluationRun
        /// The CRLs to fetch, each verified before it is kept.
        let requests: [RevocationListFetcher.Request]
    }

    /// The first part of an evaluation that checks distribution-point CRLs.
    enum RevocationPass {
        /// Judged already: the policy checks none, every CRL was at hand, or the chain is refused anyway.
        case judged(Verdict)
        /// Paused: fetch these, then ``complete(_:with:verdictCache:diagnostics:)``.
        case paused(PausedEvaluation)
    }

    /// Judges a chain under a policy that checks distribution-point CRLs, in one pass. When every
    /// CRL the chain's certificates name is at hand and fresh, they are used at once. Otherwise
    /// the checks run up to revocation (the path is verified then, once); a chain already refused
    /// (its path, its name, its pins) or a host refused as unlisted fetches nothing, and only the
    /// distribution points of the verified path are asked for, never those of a certificate the
    /// path does not use.
    func beginRevocationPass(
        _ served: [Certificate], peer: PeerName?, at time: Date, staple: [UInt8]?,
        presentedSCTs: [SignedCertificateTimestamp], fetcher: RevocationListFetcher,
        verdictCache: VerdictCache?, diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    ) -> RevocationPass {
        func judged(_ lists: FetchedRevocationLists?) -> RevocationPass {
            .judged(
                evaluate(
                    served, peer: peer, at: time, staple: staple, revocationLists: lists, presentedSCTs: presentedSCTs,
                    verdictCache: verdictCache, diagnostics: diagnostics))
        }
        guard let settings = validation.revocation.distributionPointCRLs, let leaf = served.first, let pause = revocationCheckIndex else {
            return judged(nil)
        }
        // The chain's candidates (served and configured intermediates): their CRLs may all be at hand.
        let candidates = settings.scope == .leaf ? [leaf] : served + validation.additionalIntermediates
        if let fresh = fetcher.fresh(candidates.flatMap(\.handle.crlDistributionPointURLs), at: time) { return judged(fresh) }
        // The lists are not known yet, so no cached verdict is looked up (they are kept per CRL).
        guard
            case .started(var run, _) = start(
                served, peer: peer, at: time, staple: staple, revocationLists: FetchedRevocationLists(),
                presentedSCTs: presentedSCTs, verdictCache: verdictCache, looksUpCache: false,
                diagnostics: diagnostics)
        else {
            return judged(nil)
        }
        EvaluationPlan.run(checks[..<pause], on: &run)
        if run.found.failures.isEmpty, !run.stopped, coverage != .unlistedRefused {
            let requests = DistributionPointCheck(settings: settings, maximumAge: validation.revocation.maximumResponseAge, fetched: nil)
                .requests(on: run.judgedAnchorsPath().certificates, at: time)
            if !requests.isEmpty { return .paused(PausedEvaluation(run: run, requests: requests)) }
        }
        return .judged(
            complete(
                PausedEvaluation(run: run, requests: []), with: FetchedRevocationLists(), verdictCache: verdictCache,
                diagnostics: diagnostics))
    }

    /// The rest of a paused evaluation, with the CRLs fetched for it; the verdict is kept in the
    /// cache under those lists.
    func complete(
        _ paused: PausedEvaluation, with lists: FetchedRevocationLists, verdictCache: VerdictCache?,
        diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    ) -> Verdict {
        var run = paused.run
        run.fetchedLists = lists
        EvaluationPlan.run(checks[(revocationCheckIndex ?? checks.count)...], on: &run)
        let key =
            verdictCache == nil
            ? nil
            : cacheKey(
                run.served, peer: run.peer, staple: run.staple, revocationLists: lists,
                presentedSCTs: run.presentedSCTsFromExtension, logGeneration: run.transparencyLogGeneration)
        return finish(&run, cacheKey: key, verdictCache: verdictCache, diagnostics: diagnostics)
    }

    /// Judges a chain, fetching the CRLs its verified path names with `fetcher` (in one pass).
    func evaluate(
        _ served: [Certificate], peer: PeerName?, at time: Date, staple: [UInt8]?, presentedSCTs: [SignedCertificateTimestamp] = [],
        fetcher: RevocationListFetcher, verdictCache: VerdictCache?,
        diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    ) async -> Verdict {
        switch beginRevocationPass(
            served, peer: peer, at: time, staple: staple, presentedSCTs: presentedSCTs, fetcher: fetcher,
            verdictCache: verdictCache, diagnostics: diagnostics)
        {
        case .judged(let verdict): return verdict
        case .paused(let paused):
            let lists = await fetcher.lists(paused.requests, at: time)
            return complete(paused, with: lists, verdictCache: verdictCache, diagnostics: diagnostics)
        }
    }

    /// The same, blocking the calling thread while the CRLs are fetched (a command's).
    func evaluateWaiting(
        _ served: [Certificate], peer: PeerName?, at time: Date, staple: [UInt8]?,
        presentedSCTs: [SignedCertificateTimestamp] = [], fetcher: RevocationListFetcher, verdictCache: VerdictCache?,
        diagnostics: (@Sendable (DiagnosticEvent) -> Void)?
    ) -> Verdict {
        switch beginRevocationPass(
            served, peer: peer, at: time, staple: staple, presentedSCTs: presentedSCTs, fetcher: fetcher,
            verdictCache: verdictCache, diagnostics: diagnostics)
        {
        case .judged(let verdict): return verdict
        case .paused(let paused):
            return complete(paused, with: fetcher.listsWaiting(paused.requests, at: time), verdictCache: verdictCache, diagnostics: diagnostics)
        }
    }
}
