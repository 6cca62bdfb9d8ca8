import FoundationEssentials
internal import PincheckOpenSSL

/// Finds the certificates between a leaf and the anchors for a road that is shown the leaf alone
/// (AsyncHTTPClient's connection initializers), so the leaf's CRL can be verified with its issuer.
///
/// An issuer comes from the policy (an anchor, an additional intermediate) or, failing that, from
/// the caIssuers URLs of the certificate below it (RFC 5280 §4.2.2.1, http only; each URL in
/// turn). What a caIssuers URL serves is untrusted: it is only a candidate for the path the engine
/// then verifies to the anchors, and it is kept for later connections only once such a path
/// through it verified (``keep(_:)``).
///
/// One hostile certificate cannot blind the process to a CA: a failure is remembered per URL *and*
/// the issuer the asking certificate names (its issuer name and authority key identifier), so a
/// leaf that names a big CA's URL for an issuer the URL does not serve spoils nothing for the CA's
/// own leaves; a kept issuer is never dropped because some leaf it did not sign names its URL; and
/// a leaf whose lookup failed is remembered as such, so presenting it again costs no fetch.
///
/// Every reach is bounded: ``maximumBytes`` per answer, the fetcher's timeout, destinations and
/// proxy, ``maximumFetchesPerLeaf`` per leaf, the fetcher's `maximumFetchesInFlight` at once (more
/// wait for a free slot, up to ``queuedLookupLimit``; one fetch per URL however many connections
/// wait for it), ``keptLimit`` issuers kept, and a failure remembered for the fetcher's
/// `failureMemory` (at most `RevocationListFetcher.rememberedFailureLimit` of each kind).
package final class IssuerLookup: Sendable {
    /// The largest answer accepted from a caIssuers URL: a certificate, or a PKCS#7 bundle of a few.
    package static let maximumBytes = 64 << 10
    /// The most caIssuers fetches for one leaf (a path of four certificates below the anchor).
    package static let maximumFetchesPerLeaf = 3
    /// The most fetched issuers kept.
    package static let keptLimit = 64
    /// The most issuers kept for one URL (a CA that replaced what it publishes there).
    package static let keptPerURL = 4
    /// The most lookups waiting for a free fetch slot; past that one fails at once.
    package static let queuedLookupLimit = 256

    /// A GET of a URL; `publicOnly`: private networks refused for this fetch.
    typealias Transport = @Sendable (_ url: String, _ publicOnly: Bool) -> Answer

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

    private struct Remembered {
        let until: ContinuousClock.Instant
        let why: String
    }

    private struct State {
        var kept: [String: [Certificate]] = [:]
        var keptOrder: [(url: String, certificate: Certificate)] = []
        /// By URL and the issuer the asking certificate names (``failureKey(_:_:)``).
        var failures: [String: Remembered] = [:]
        /// By the leaf's fingerprint: the whole lookup failed.
        var leafFailures: [SHA256Digest: Remembered] = [:]
        /// By flight (``flight(_:publicOnly:)``).
        var waiting: [String: [CheckedContinuation<Answer?, Never>]] = [:]
        var queued: [CheckedContinuation<Void, Never>] = []
        var running = 0
        var fetches = 0
    }

    private let transport: Transport
    private let maximumInFlight: Int
    private let failureMemory: Duration
    private let state = Locked(State())

    init(transport: @escaping Transport, maximumInFlight: Int, failureMemory: Duration) {
        self.transport = transport
        self.maximumInFlight = max(1, maximumInFlight)
        self.failureMemory = failureMemory
    }

    /// How many caIssuers fetches have gone out.
    package var fetchCount: Int { state.withLock { $0.fetches } }

    /// How many lookups wait for the fetch of `url` under way.
    func waiters(for url: String, publicOnly: Bool = false) -> Int {
        state.withLock { $0.waiting[Self.flight(url, publicOnly: publicOnly)]?.count ?? 0 }
    }

    /// How many lookups wait for a free fetch slot.
    var queuedLookups: Int { state.withLock { $0.queued.count } }

    /// The certificates above `leaf` that a path to `anchors` needs and the policy does not hold,
    /// lowest first (empty when the policy holds them all); or why they could not be found.
    /// - Parameter publicFacing: The server is public (the policy's anchors are the system's): its
    ///   issuers are public, so no caIssuers URL of this unverified leaf is fetched from a private
    ///   network.
    package func certificates(
        above leaf: Certificate, anchors: [Certificate], intermediates: [Certificate],
        publicFacing: Bool = false
    ) async -> Result<[Fetched], Problem> {
        await certificates(above: leaf, intermediates: intermediates, publicFacing: publicFacing) { current in
            anchors.contains(where: { $0.handle.mayHaveIssued(current.handle) && $0.handle.signatureVerifies(on: current.handle) })
        }
    }

    /// The same, up to `anchors` as a policy holds them: the system store's roots are found in the
    /// store (its certificates list is empty), a caller's anchors by their signature.
    package func certificates(
        above leaf: Certificate, anchoredBy anchors: TrustAnchors, intermediates: [Certificate],
        publicFacing: Bool = false
    ) async -> Result<[Fetched], Problem> {
        await certificates(above: leaf, intermediates: intermediates, publicFacing: publicFacing) { anchors.mayHaveIssued($0) }
    }

    private func certificates(
        above leaf: Certificate, intermediates: [Certificate], publicFacing: Bool,
        anchored: (Certificate) -> Bool
    ) async -> Result<[Fetched], Problem> {
        if let remembered = state.withLock({ state -> Remembered? in
            guard let failure = state.leafFailures[leaf.fingerprint] else { return nil }
            if ContinuousClock.now < failure.until { return failure }
            state.leafFailures[leaf.fingerprint] = nil
            return nil
        }) {
            return .failure(Problem(remembered.why))
        }
        let result = await climb(from: leaf, anchored: anchored, intermediates: intermediates, publicOnly: publicFacing)
        if case .failure(let problem) = result {
            state.withLock { state in
                if state.leafFailures.count >= RevocationListFetcher.rememberedFailureLimit { state.leafFailures = [:] }
                state.leafFailures[leaf.fingerprint] = Remembered(
                    until: ContinuousClock.now + failureMemory,
                    why: "\(problem.text) (this leaf's lookup failed in the last \(failureMemory); not tried again yet)")
            }
        }
        return result
    }

    private func climb(from leaf: Certificate, anchored: (Certificate) -> Bool, intermediates: [Certificate], publicOnly: Bool) async -> Result<
        [Fetched], Problem
    > {
        var current = leaf
        var found: [Fetched] = []
        var fetched = 0
        // Each step climbs one certificate; the policy's intermediates count as steps too.
        for _ in 0...(Self.maximumFetchesPerLeaf + intermediates.count) {
            if anchored(current) { return .success(found) }
            if current.handle.isRoot { return .failure(Problem("\(current.subject) is a root that is not among the anchors")) }
            if let known = intermediates.first(where: { $0 != current && $0.handle.mayHaveIssued(current.handle) }) {
                current = known
                continue
            }
            let urls = current.handle.caIssuersURLs
            guard !urls.isEmpty else {
                return .failure(
                    Problem(
                        "\(current.subject) names no http caIssuers URL, and its issuer is neither an anchor nor one of the policy's additional intermediates"
                    ))
            }
            // Each URL of the certificate in turn, until one serves its issuer.
            var problems: [String] = []
            var issuer: Fetched? = nil
            for url in urls {
                switch kept(url, issuing: current) {
                case .some(let certificate): issuer = Fetched(url: url, certificate: certificate)
                case .none:
                    guard fetched < Self.maximumFetchesPerLeaf else {
                        return .failure(Problem("no anchor within \(Self.maximumFetchesPerLeaf) caIssuers fetches above the leaf"))
                    }
                    switch await fetch(url, issuing: current, publicOnly: publicOnly, counting: &fetched) {
                    case .success(let certificate): issuer = Fetched(url: url, certificate: certificate)
                    case .failure(let problem): problems.append(problem.text)
                    }
                }
                if issuer != nil { break }
            }
            guard let issuer else { return .failure(Problem(problems.joined(separator: "; "))) }
            found.append(issuer)
            current = issuer.certificate
        }
        return .failure(Problem("no anchor above the leaf within the certificates allowed"))
    }

    /// Keeps fetched issuers for later connections: call it only once a path through them verified.
    package func keep(_ issuers: [Fetched]) {
        state.withLock { state in
            for issuer in issuers {
                var list = state.kept[issuer.url] ?? []
                guard !list.contains(issuer.certificate) else { continue }
                if list.count >= Self.keptPerURL {
                    let dropped = list.removeFirst()
                    state.keptOrder.removeAll { $0.url == issuer.url && $0.certificate == dropped }
                }
                list.append(issuer.certificate)
                state.kept[issuer.url] = list
                state.keptOrder.append((issuer.url, issuer.certificate))
                if state.keptOrder.count > Self.keptLimit {
                    let oldest = state.keptOrder.removeFirst()
                    state.kept[oldest.url]?.removeAll { $0 == oldest.certificate }
                    if state.kept[oldest.url]?.isEmpty == true { state.kept[oldest.url] = nil }
                }
            }
        }
    }

    /// A kept issuer of `subject` from `url`: one whose key signed it. A kept issuer that did not
    /// sign it stays kept (the subject may be forged); the URL is then asked.
    private func kept(_ url: String, issuing subject: Certificate) -> Certificate? {
        let candidates = state.withLock { $0.kept[url] ?? [] }
        return candidates.first { $0.handle.mayHaveIssued(subject.handle) && $0.handle.signatureVerifies(on: subject.handle) }
    }

    /// What a failure is remembered by: the URL and the issuer the asking certificate names.
    private static func failureKey(_ url: String, _ subject: Certificate) -> String {
        let identifier =
            subject.handle.facts.authorityKeyIdentifier.map { bytes in bytes.map { String($0, radix: 16) }.joined(separator: ":") } ?? "-"
        return "\(url)\n\(subject.issuer)\n\(identifier)"
    }

    /// The key of one fetch under way: a public-only fetch is another fetch of the same URL.
    private static func flight(_ url: String, publicOnly: Bool) -> String { publicOnly ? "public \(url)" : url }

    /// The issuer of `subject` at `url`, fetched (once per URL at a time), or why not.
    private func fetch(_ url: String, issuing subject: Certificate, publicOnly: Bool, counting fetched: inout Int) async -> Result<
        Certificate, Problem
    > {
        let key = Self.failureKey(url, subject)
        var answer: Answer? = nil
        while answer == nil {
            switch state.withLock({ state in next(url, key: key, publicOnly: publicOnly, &state) }) {
            case .failed(let why): return .failure(Problem(why))
            case .queue: await waitForSlot()
            case .wait(let launch):
                if launch { fetched += 1 }
                answer = await wait(url, publicOnly: publicOnly, launch: launch)
            }
        }
        let (found, urlAtFault) = Self.issuer(of: subject, in: answer!, from: url)
        // A URL that served the issuer the certificate names, whose key did not sign it, is not at
        // fault (the certificate is forged): only the leaf is remembered, by the caller.
        if case .failure(let problem) = found, urlAtFault {
            state.withLock { state in
                if state.failures.count >= RevocationListFetcher.rememberedFailureLimit { state.failures = [:] }
                state.failures[key] = Remembered(
                    until: ContinuousClock.now + failureMemory,
                    why: "\(problem.text) (a failure of the last \(failureMemory), not asked again yet)")
            }
        }
        return found
    }

    private enum Next {
        case failed(String)
        /// Every fetch slot is taken: wait for one, then look again.
        case queue
        /// Wait for the fetch of the URL; `launch`: this caller starts it.
        case wait(launch: Bool)
    }

    private func next(_ url: String, key: String, publicOnly: Bool, _ state: inout State) -> Next {
        if let failure = state.failures[key] {
            if ContinuousClock.now < failure.until { return .failed(failure.why) }
            state.failures[key] = nil
        }
        let flight = Self.flight(url, publicOnly: publicOnly)
        if state.waiting[flight] != nil { return .wait(launch: false) }
        guard state.running < maximumInFlight else {
            guard state.queued.count < Self.queuedLookupLimit else {
                return .failed(
                    "\(maximumInFlight) caIssuers fetches are under way and \(Self.queuedLookupLimit) lookups wait; \(url) was not fetched")
            }
            return .queue
        }
        state.running += 1
        state.fetches += 1
        state.waiting[flight] = []
        return .wait(launch: true)
    }

    /// Waits until a fetch slot is free (``finish(_:_:)`` hands them on in order).
    private func waitForSlot() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = state.withLock { state -> Bool in
                guard state.running >= maximumInFlight else { return false }
                state.queued.append(continuation)
                return true
            }
            if !queued { continuation.resume() }
        }
    }

    /// The answer of the fetch of `url`, started here when `launch`; nil when that fetch ended
    /// before this caller waited (its result is then remembered: look again).
    private func wait(_ url: String, publicOnly: Bool, launch: Bool) async -> Answer? {
        let flight = Self.flight(url, publicOnly: publicOnly)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Answer?, Never>) in
            let waiting = state.withLock { state -> Bool in
                guard state.waiting[flight] != nil else { return false }
                state.waiting[flight]!.append(continuation)
                return true
            }
            guard waiting else { return continuation.resume(returning: nil) }
            guard launch else { return }
            if !DetachedThread.start({ [self] in finish(flight, transport(url, publicOnly)) }) {
                finish(flight, .failure(.unavailable("no thread to fetch on")))
            }
        }
    }

    /// The certificate in what `url` served whose key signed `subject`, or why there is none, and
    /// whether that is the URL's fault (no answer, or none of the issuer `subject` names) rather
    /// than the subject's (the issuer it names is there, and did not sign it).
    private static func issuer(of subject: Certificate, in answer: Answer, from url: String) -> (Result<Certificate, Problem>, urlAtFault: Bool) {
        switch answer {
        case .success(let bytes):
            let certificates: [Certificate]
            do {
                certificates = try Certificate.parseBundle(bytes, source: url)
            } catch {
                return (.failure(Problem("what \(url) served is not a certificate: \(error.message)")), true)
            }
            let named = certificates.filter { $0.handle.mayHaveIssued(subject.handle) }
            guard let issuer = named.first(where: { $0.handle.signatureVerifies(on: subject.handle) }) else {
                return (.failure(Problem("what \(url) served holds no certificate whose key signed \(subject.subject)")), named.isEmpty)
            }
            return (.success(issuer), false)
        case .failure(.tooLarge(let limit)): return (.failure(Problem("\(url) served more than the \(limit) bytes allowed for an issuer")), true)
        case .failure(.timedOut): return (.failure(Problem("fetching \(url) took too long")), true)
        case .failure(.notDER): return (.failure(Problem("what \(url) served is not a certificate")), true)
        case .failure(.unavailable(let why)): return (.failure(Problem("\(url) could not be fetched: \(why)")), true)
        case .failure(.refused(let why)): return (.failure(Problem("\(url) was not fetched: \(why)")), true)
        }
    }

    /// Hands a fetch's answer to everyone waiting for it, and its slot to the next lookup queued.
    private func finish(_ flight: String, _ answer: Answer) {
        let (waiting, next) = state.withLock { state -> ([CheckedContinuation<Answer?, Never>], CheckedContinuation<Void, Never>?) in
            state.running -= 1
            let next = state.queued.isEmpty ? nil : state.queued.removeFirst()
            return (state.waiting.removeValue(forKey: flight) ?? [], next)
        }
        for waiter in waiting { waiter.resume(returning: answer) }
        next?.resume()
    }
}
