import FoundationEssentials
internal import PincheckOpenSSL

/// Finds the certificates between a leaf and the anchors for a road that is shown the leaf alone
/// (AsyncHTTPClient's connection initializers), so the leaf's CRL can be verified with its issuer.
///
/// An issuer comes from the policy (an anchor, an additional intermediate) or, failing that, from
/// the caIssuers URL of the certificate below it (RFC 5280 §4.2.2.1, http only). What a caIssuers
/// URL serves is untrusted: it is only a candidate for the path the engine then verifies to the
/// anchors, and it is kept for later connections only once such a path through it verified
/// (``keep(_:)``). Every reach is bounded: ``maximumBytes`` per answer, the fetcher's timeout,
/// destinations and proxy, ``maximumFetchesPerLeaf`` per leaf, the fetcher's
/// `maximumFetchesInFlight` at once (one fetch per URL however many connections wait for it),
/// ``keptLimit`` issuers kept, and a failure remembered for the fetcher's `failureMemory`.
package final class IssuerLookup: Sendable {
    /// The largest answer accepted from a caIssuers URL: a certificate, or a PKCS#7 bundle of a few.
    package static let maximumBytes = 64 << 10
    /// The most caIssuers fetches for one leaf (a path of four certificates below the anchor).
    package static let maximumFetchesPerLeaf = 3
    /// The most fetched issuers kept.
    package static let keptLimit = 64

    /// A certificate found at a caIssuers URL.
    package struct Fetched: Sendable {
        package let url: String
        package let certificate: Certificate
    }

    typealias Answer = Result<[UInt8], HTTPFetch.Failure>

    /// Why the issuers could not be found.
    package struct Problem: Error, Sendable {
        package let text: String
        init(_ text: String) { self.text = text }
    }

    private struct State {
        var kept: [String: Certificate] = [:]
        var keptOrder: [String] = []
        var failures: [String: (until: ContinuousClock.Instant, why: String)] = [:]
        var waiting: [String: [CheckedContinuation<Answer?, Never>]] = [:]
        var running = 0
        var fetches = 0
    }

    private let transport: @Sendable (String) -> Answer
    private let maximumInFlight: Int
    private let failureMemory: Duration
    private let state = Locked(State())

    init(transport: @escaping @Sendable (String) -> Answer, maximumInFlight: Int, failureMemory: Duration) {
        self.transport = transport
        self.maximumInFlight = max(1, maximumInFlight)
        self.failureMemory = failureMemory
    }

    /// How many caIssuers fetches have gone out.
    package var fetchCount: Int { state.withLock { $0.fetches } }

    /// How many lookups wait for the fetch of `url` under way.
    func waiters(for url: String) -> Int { state.withLock { $0.waiting[url]?.count ?? 0 } }

    /// The certificates above `leaf` that a path to `anchors` needs and the policy does not hold,
    /// lowest first (empty when the policy holds them all); or why they could not be found.
    package func certificates(above leaf: Certificate, anchors: [Certificate], intermediates: [Certificate]) async -> Result<[Fetched], Problem> {
        var current = leaf
        var found: [Fetched] = []
        var fetched = 0
        // Each step climbs one certificate; the policy's intermediates count as steps too.
        for _ in 0...(Self.maximumFetchesPerLeaf + intermediates.count) {
            if anchors.contains(where: { $0.handle.mayHaveIssued(current.handle) && $0.handle.signatureVerifies(on: current.handle) }) {
                return .success(found)
            }
            if current.handle.isRoot { return .failure(Problem("\(current.subject) is a root that is not among the anchors")) }
            if let known = intermediates.first(where: { $0 != current && $0.handle.mayHaveIssued(current.handle) }) {
                current = known
                continue
            }
            guard fetched < Self.maximumFetchesPerLeaf else {
                return .failure(Problem("no anchor within \(Self.maximumFetchesPerLeaf) caIssuers fetches above the leaf"))
            }
            guard let url = current.handle.caIssuersURLs.first else {
                return .failure(Problem("\(current.subject) names no http caIssuers URL, and its issuer is neither an anchor nor one of the policy's additional intermediates"))
            }
            fetched += 1
            switch await issuer(of: current, at: url) {
            case .success(let issuer):
                found.append(Fetched(url: url, certificate: issuer))
                current = issuer
            case .failure(let problem):
                return .failure(problem)
            }
        }
        return .failure(Problem("no anchor above the leaf within the certificates allowed"))
    }

    /// Keeps fetched issuers for later connections: call it only once a path through them verified.
    package func keep(_ issuers: [Fetched]) {
        state.withLock { state in
            for issuer in issuers where state.kept.updateValue(issuer.certificate, forKey: issuer.url) == nil {
                state.keptOrder.append(issuer.url)
                if state.keptOrder.count > Self.keptLimit { state.kept[state.keptOrder.removeFirst()] = nil }
            }
        }
    }

    /// The issuer of `subject` at `url`: kept, or fetched (once per URL at a time).
    private func issuer(of subject: Certificate, at url: String) async -> Result<Certificate, Problem> {
        var answer: Answer? = nil
        var droppedKept = false
        while answer == nil {
            switch state.withLock({ state in next(url, &state) }) {
            case .kept(let certificate) where certificate.handle.mayHaveIssued(subject.handle): return .success(certificate)
            case .kept(let certificate):
                // What the URL served before did not issue this certificate: the CA may have
                // changed what it publishes there (a new intermediate under the same name). The
                // old answer is dropped and the URL asked again, once.
                guard !droppedKept else { return .failure(Problem("the certificate kept for \(url) did not issue \(subject.subject)")) }
                droppedKept = true
                state.withLock { state in
                    guard state.kept[url]?.handle === certificate.handle else { return }
                    state.kept[url] = nil
                    state.keptOrder.removeAll { $0 == url }
                }
            case .failed(let why): return .failure(Problem(why))
            case .wait(let launch): answer = await wait(url, launch: launch)
            }
        }
        let found = Self.issuer(of: subject, in: answer!, from: url)
        if case .failure(let problem) = found {
            state.withLock { state in
                if state.failures.count >= RevocationListFetcher.rememberedFailureLimit { state.failures = [:] }
                state.failures[url] = (ContinuousClock.now + failureMemory, "\(problem.text) (a failure of the last \(failureMemory), not asked again yet)")
            }
        }
        return found
    }

    private enum Next {
        case kept(Certificate)
        case failed(String)
        /// Wait for the fetch of the URL; `launch`: this caller starts it.
        case wait(launch: Bool)
    }

    private func next(_ url: String, _ state: inout State) -> Next {
        if let kept = state.kept[url] { return .kept(kept) }
        if let failure = state.failures[url] {
            if ContinuousClock.now < failure.until { return .failed(failure.why) }
            state.failures[url] = nil
        }
        if state.waiting[url] != nil { return .wait(launch: false) }
        guard state.running < maximumInFlight else {
            return .failed("\(maximumInFlight) caIssuers fetches are under way; \(url) was not fetched")
        }
        state.running += 1
        state.fetches += 1
        state.waiting[url] = []
        return .wait(launch: true)
    }

    /// The answer of the fetch of `url`, started here when `launch`; nil when that fetch ended
    /// before this caller waited (its result is then kept or remembered: look again).
    private func wait(_ url: String, launch: Bool) async -> Answer? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Answer?, Never>) in
            let waiting = state.withLock { state -> Bool in
                guard state.waiting[url] != nil else { return false }
                state.waiting[url]!.append(continuation)
                return true
            }
            guard waiting else { return continuation.resume(returning: nil) }
            guard launch else { return }
            if !DetachedThread.start({ [self] in finish(url, transport(url)) }) {
                finish(url, .failure(.unavailable("no thread to fetch on")))
            }
        }
    }

    /// The certificate in what `url` served whose key signed `subject`, or why there is none.
    private static func issuer(of subject: Certificate, in answer: Answer, from url: String) -> Result<Certificate, Problem> {
        switch answer {
        case .success(let bytes):
            let certificates: [Certificate]
            do {
                certificates = try Certificate.parseBundle(bytes, source: url)
            } catch {
                return .failure(Problem("what \(url) served is not a certificate: \(error.message)"))
            }
            guard let issuer = certificates.first(where: { $0.handle.mayHaveIssued(subject.handle) && $0.handle.signatureVerifies(on: subject.handle) }) else {
                return .failure(Problem("what \(url) served holds no certificate whose key signed \(subject.subject)"))
            }
            return .success(issuer)
        case .failure(.tooLarge(let limit)): return .failure(Problem("\(url) served more than the \(limit) bytes allowed for an issuer"))
        case .failure(.timedOut): return .failure(Problem("fetching \(url) took too long"))
        case .failure(.notDER): return .failure(Problem("what \(url) served is not a certificate"))
        case .failure(.unavailable(let why)): return .failure(Problem("\(url) could not be fetched: \(why)"))
        case .failure(.refused(let why)): return .failure(Problem("\(url) was not fetched: \(why)"))
        }
    }

    /// Hands a fetch's answer to everyone waiting for it.
    private func finish(_ url: String, _ answer: Answer) {
        let waiting = state.withLock { state -> [CheckedContinuation<Answer?, Never>] in
            state.running -= 1
            return state.waiting.removeValue(forKey: url) ?? []
        }
        for waiter in waiting { waiter.resume(returning: answer) }
    }
}
