import FoundationEssentials
package import PincheckOpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Fetches CRLs from distribution points (http URLs), bounded in size and time, and keeps each
/// until its nextUpdate: in memory, and in a directory when one is named.
///
/// One fetch per URL at a time, however many evaluations wait for it. Fetches run on threads of
/// their own (OpenSSL's HTTP client blocks), never on the caller's: an evaluation awaiting a CRL
/// holds no event loop and no thread of Swift's cooperative pool. Share one fetcher per process.
public final class RevocationListFetcher: Sendable {
    /// Bounds on one fetch.
    public struct Limits: Sendable, Hashable {
        /// The largest CRL accepted, in bytes: 64 MiB by default (large CAs publish CRLs of tens
        /// of megabytes; a bigger answer is refused as `revocation.crl-unavailable`).
        public var maximumBytes: Int
        /// How long connecting and transferring may take together: 10 s by default. An
        /// evaluation waits at most this plus 2 s for a fetch, name resolution included; past
        /// that the CRL is `revocation.crl-unavailable` (and a fetch still under way leaves its
        /// CRL for the next evaluation).
        public var timeout: Duration

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

    public let limits: Limits
    /// Where fetched CRLs are kept across processes (`<SHA-256 of the URL>.crl`, DER); nil: memory only.
    public let cacheDirectory: String?
    private let transport: @Sendable (String) -> Result<[UInt8], HTTPFetch.Failure>
    private let state = Locked(State())

    /// The most CRLs kept in memory; the least recently used goes first. Each is at most
    /// `Limits.maximumBytes` as DER, so a long scan of many hosts (each CA with its own
    /// distribution points) cannot grow the process without bound.
    package static let cachedListLimit = 128

    private struct State {
        var cached = LRUStorage<String, CertificateRevocationList>(capacity: RevocationListFetcher.cachedListLimit)
        var inFlight: [String: Flight] = [:]
        var fetches = 0
    }

    /// One fetch under way, which any number of evaluations wait for: asynchronously, or by
    /// blocking a thread of their own (the command).
    private final class Flight: Sendable {
        private let state = Locked<(result: FetchedRevocationLists.Result?, waiters: [CheckedContinuation<FetchedRevocationLists.Result, Never>])>((nil, []))
        private let done = Latch()

        /// Gives the waiters `result`; the first result wins (the fetch, or the deadline before it).
        func finish(_ result: FetchedRevocationLists.Result) {
            let waiters = state.withLock { state -> [CheckedContinuation<FetchedRevocationLists.Result, Never>]? in
                guard state.result == nil else { return nil }
                state.result = result
                defer { state.waiters = [] }
                return state.waiters
            }
            guard let waiters else { return }
            done.signal()
            for waiter in waiters { waiter.resume(returning: result) }
        }

        /// True once a result is in, waiting at most `timeout` for it.
        func finished(within timeout: Duration) -> Bool { done.wait(timeout: timeout) }

        func value() async -> FetchedRevocationLists.Result {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> FetchedRevocationLists.Result? in
                    if let result = state.result { return result }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }

        func wait() -> FetchedRevocationLists.Result {
            done.wait()
            return state.withLock { $0.result! }
        }
    }

    /// - Parameters:
    ///   - limits: Size and time bounds for each fetch.
    ///   - cacheDirectory: A directory the caller owns, to keep CRLs across processes; it must exist.
    ///   - proxy: `.environment` by default.
    public convenience init(limits: Limits = Limits(), cacheDirectory: String? = nil, proxy: Proxy = .environment) {
        let proxyText: String? = switch proxy {
        case .environment: nil
        case .none: ""
        case .url(let url): url
        }
        let seconds = Int(limits.timeout.components.seconds) + (limits.timeout.components.attoseconds > 0 ? 1 : 0)
        self.init(limits: limits, cacheDirectory: cacheDirectory) { url in
            HTTPFetch.get(url, maximumBytes: limits.maximumBytes, timeoutSeconds: max(1, seconds), proxy: proxyText)
        }
    }

    /// A fetcher over another transport (the tests' and the benchmark's seam).
    package init(limits: Limits, cacheDirectory: String?, transport: @escaping @Sendable (String) -> Result<[UInt8], HTTPFetch.Failure>) {
        self.limits = limits
        self.cacheDirectory = cacheDirectory
        self.transport = transport
    }

    /// Beyond `Limits.timeout`, what a fetch may take in all before its waiters are answered
    /// without it: the transport rounds its bound up to whole seconds, and name resolution is
    /// outside it.
    package static let deadlineMargin = Duration.seconds(2)

    /// How many fetches have gone out (each URL once per refresh, however many waited for it).
    package var fetchCount: Int { state.withLock { $0.fetches } }

    /// The CRLs at hand for `urls` that are fresh at `time` (nextUpdate not passed); nil unless
    /// every one is. Never fetches.
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

    /// The CRLs at `urls`, fetching those not at hand or past their nextUpdate at `time`.
    func lists(_ urls: [String], at time: Date) async -> FetchedRevocationLists {
        var results: [String: FetchedRevocationLists.Result] = [:]
        for (url, next) in start(urls, at: time) {
            switch next {
            case .ready(let result): results[url] = result
            case .flight(let flight): results[url] = await flight.value()
            }
        }
        return FetchedRevocationLists(byURL: results)
    }

    /// The same, blocking the calling thread until they are fetched: for a command-line tool's
    /// own thread, never an event loop or Swift's cooperative pool.
    func listsWaiting(_ urls: [String], at time: Date) -> FetchedRevocationLists {
        var results: [String: FetchedRevocationLists.Result] = [:]
        for (url, next) in start(urls, at: time) {
            switch next {
            case .ready(let result): results[url] = result
            case .flight(let flight): results[url] = flight.wait()
            }
        }
        return FetchedRevocationLists(byURL: results)
    }

    private enum Next {
        case ready(FetchedRevocationLists.Result)
        case flight(Flight)
    }

    /// Starts the fetches `urls` need (at most one per URL across all callers).
    private func start(_ urls: [String], at time: Date) -> [(String, Next)] {
        var seen = Set<String>()
        return urls.filter { seen.insert($0).inserted }.map { url in
            let (next, started): (Next, Flight?) = state.withLock { state in
                if let list = state.cached.value(for: url), Self.isFresh(list, at: time) { return (.ready(.list(list)), nil) }
                if let running = state.inFlight[url] { return (.flight(running), nil) }
                let flight = Flight()
                state.inFlight[url] = flight
                return (.flight(flight), flight)
            }
            if let started {
                let stale = state.withLock { $0.cached.value(for: url) }
                let launched = DetachedThread.start { [self] in started.finish(self.fetch(url, at: time, stale: stale)) }
                if !launched {
                    state.withLock { $0.inFlight[url] = nil }
                    started.finish(.failed("no thread to fetch the CRL on", stale: stale))
                } else {
                    // The transport bounds connecting and transferring; the system resolver, which
                    // runs before either, has its own time (resolv.conf's timeouts and attempts,
                    // often tens of seconds). The waiters are answered at the deadline whatever the
                    // fetch is doing; a fetch that ends later still leaves its CRL for the next one.
                    let deadline = limits.timeout + Self.deadlineMargin
                    let watched = DetachedThread.start {
                        if !started.finished(within: deadline) {
                            started.finish(.failed("fetching the CRL took longer than the \(deadline) allowed (name resolution included)", stale: stale))
                        }
                    }
                    if !watched { started.finish(.failed("no thread to time the CRL fetch on", stale: stale)) }
                }
            }
            return (url, next)
        }
    }

    /// One fetch (or a read of the directory), on a thread of its own; the result is cached.
    private func fetch(_ url: String, at time: Date, stale: CertificateRevocationList?) -> FetchedRevocationLists.Result {
        let result: FetchedRevocationLists.Result
        if let stored = readStored(url), Self.isFresh(stored, at: time) {
            result = .list(stored)
        } else {
            state.withLock { $0.fetches += 1 }
            switch transport(url) {
            case .success(let bytes):
                do {
                    let list = try CertificateRevocationList(derEncoded: bytes, source: url)
                    store(list, for: url)
                    result = .list(list)
                } catch {
                    result = .failed("what \(url) served is not a DER CRL: \(error.message)", stale: stale)
                }
            case .failure(.tooLarge(let limit)):
                result = .failed("the CRL is larger than the \(limit) bytes allowed", stale: stale)
            case .failure(.notDER):
                result = .failed("what \(url) served is not a DER CRL", stale: stale)
            case .failure(.timedOut):
                result = .failed("fetching the CRL took longer than the \(limits.timeout) allowed", stale: stale)
            case .failure(.unavailable(let why)):
                result = .failed("the CRL could not be fetched: \(why)", stale: stale)
            }
        }
        state.withLock { state in
            state.inFlight[url] = nil
            if case .list(let list) = result { state.cached.insert(list, for: url) }
        }
        return result
    }

    private static func isFresh(_ list: CertificateRevocationList, at time: Date) -> Bool {
        guard let next = list.handle.nextUpdateSeconds else { return false }
        return Timestamp.seconds(time) < next
    }

    // MARK: The directory

    private func path(for url: String) -> String? {
        cacheDirectory.map { "\($0)/\(Hex.encode(Digest.sha256(Array(url.utf8)))).crl" }
    }

    private func readStored(_ url: String) -> CertificateRevocationList? {
        guard let path = path(for: url),
              let bytes = try? InputFile.read(path, limit: limits.maximumBytes, what: "cached CRL") else { return nil }
        return try? CertificateRevocationList(derEncoded: bytes, source: path)
    }

    /// Writes the CRL beside its final name and renames it into place, so a reader never sees
    /// half a file. A directory that cannot be written only costs the next process a fetch.
    private func store(_ list: CertificateRevocationList, for url: String) {
        guard let path = path(for: url) else { return }
        let temporary = "\(path).\(getpid()).\(UInt64.random(in: 0...UInt64.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        let bytes = list.derBytes
        let written = bytes.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let count = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        close(descriptor)
        if !written || rename(temporary, path) != 0 { unlink(temporary) }
    }
}

extension EvaluationPlan {
    /// What a served chain needs from the distribution points under this plan's policy.
    enum RevocationListNeed {
        /// The policy checks none.
        case none
        /// Everything needed is at hand (or nothing can be fetched: a chain refused anyway).
        case ready(FetchedRevocationLists)
        /// These URLs are to be fetched.
        case fetch([String])
    }

    /// Nothing is fetched for a chain that is refused anyway, and only the distribution points of
    /// the verified path are fetched, never those of a certificate the path does not use. When
    /// every CRL the chain's certificates name is at hand and fresh, those are used at once;
    /// otherwise the chain is judged first without CRLs to find its verified path.
    func revocationListNeed(_ served: [Certificate], peer: PeerName?, at time: Date, staple: [UInt8]?,
                            fetcher: RevocationListFetcher) -> RevocationListNeed {
        guard let settings = validation.revocation.distributionPointCRLs, let leaf = served.first else { return .none }
        // The chain's candidates (served and configured intermediates): their CRLs may all be at hand.
        let candidates = settings.scope == .leaf ? [leaf] : served + validation.additionalIntermediates
        if let fresh = fetcher.fresh(candidates.flatMap(\.handle.crlDistributionPointURLs), at: time) { return .ready(fresh) }
        let first = evaluate(served, peer: peer, at: time, staple: staple, revocationLists: FetchedRevocationLists(),
                             verdictCache: nil, diagnostics: nil)
        // Refused for another reason than the CRLs (which were not there to judge): nothing to fetch.
        let crlCodes: Set<Reason.Code> = [.crlUnavailable, .crlNotCovered, .crlStale]
        guard first.failures.allSatisfy({ crlCodes.contains($0.code) }), let path = first.revocationPath else {
            return .ready(FetchedRevocationLists())
        }
        return .fetch(DistributionPointCheck.certificates(on: path, scope: settings.scope).flatMap(\.handle.crlDistributionPointURLs))
    }

    /// The CRLs the policy asks for, fetched with `fetcher`; nil when it asks for none.
    func revocationLists(_ served: [Certificate], peer: PeerName?, at time: Date, staple: [UInt8]?,
                         fetcher: RevocationListFetcher) async -> FetchedRevocationLists? {
        switch revocationListNeed(served, peer: peer, at: time, staple: staple, fetcher: fetcher) {
        case .none: nil
        case .ready(let lists): lists
        case .fetch(let urls): await fetcher.lists(urls, at: time)
        }
    }

    /// The same, blocking the calling thread (a command's).
    func revocationListsWaiting(_ served: [Certificate], peer: PeerName?, at time: Date, staple: [UInt8]?,
                                fetcher: RevocationListFetcher) -> FetchedRevocationLists? {
        switch revocationListNeed(served, peer: peer, at: time, staple: staple, fetcher: fetcher) {
        case .none: nil
        case .ready(let lists): lists
        case .fetch(let urls): fetcher.listsWaiting(urls, at: time)
        }
    }
}
