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

    private struct State {
        var kept: [String: [Certificate]] = [:]
        var keptOrder: [(url: String, certificate: Certificate)] = []
        /// By URL and the issuer the asking certificate names (``failureKey(_:_:)``).
        var failures = ExpiringMemory<String, String>(limit: RevocationListFetcher.rememberedFailureLimit)
        /// By the leaf's fingerprint: the whole lookup failed.
        var leafFailures = ExpiringMemory<SHA256Digest, String>(limit: RevocationListFetcher.rememberedFailureLimit)
        var fetches = 0
    }

    private let transport: Transport
    private let maximumInFlight: Int
    private let failureMemory: Duration
    private let state = Locked(State())
    /// One fetch per URL (``flight(_:publicOnly:)``) at a time, at most `maximumInFlight` at once;
    /// its failures are remembered here by the asking issuer instead (``State/failures``).
    private let flights: SingleFlight<String, Answer>

    init(transport: @escaping Transport, maximumInFlight: Int, failureMemory: Duration) {
        self.transport = transport
        self.maximumInFlight = max(1, maximumInFlight)
        self.failureMemory = failureMemory
        self.flights = SingleFlight(memoryLimit: 0, maximumInFlight: maximumInFlight, queueLimit: Self.queuedLookupLimit)
    }

    /// How many caIssuers fetches have gone out.
    package var fetchCount: Int { state.withLock { $0.fetches } }

    /// How many lookups wait for the fetch of `url` under way.
    func waiters(for url: String, publicOnly: Bool = false) -> Int { flights.waiters(for: Self.flight(url, publicOnly: publicOnly)) }

    /// How many fetches wait for a free slot.
    var queuedLookups: Int { flights.queuedFlights }

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
        if let remembered = state.withLock({ $0.leafFailures.value(for: leaf.fingerprint) }) { return .failure(Problem(remembered)) }
        let result = await climb(from: leaf, anchored: anchored, intermediates: intermediates, publicOnly: publicFacing)
        if case .failure(let problem) = result {
            state.withLock { state in
                state.leafFailures.remember(
                    "\(problem.text) (this leaf's lookup failed in the last \(failureMemory); not tried again yet)", for: leaf.fingerprint,
                    until: .now + failureMemory)
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
        if let why = state.withLock({ $0.failures.value(for: key) }) { return .failure(Problem(why)) }
        let flight = Self.flight(url, publicOnly: publicOnly)
        let busy = "\(maximumInFlight) caIssuers fetches are under way and \(Self.queuedLookupLimit) wait; \(url) was not fetched"
        let ask = SingleFlight<String, Answer>.Ask(flight, refused: .failure(.refused(busy))) { [self] in
            state.withLock { $0.fetches += 1 }
            if !DetachedThread.start({ [self] in flights.land(flight, transport(url, publicOnly)) }) {
                flights.land(flight, .failure(.unavailable("no thread to fetch on")))
            }
        }
        let (answer, how) = await flights.value(ask)
        if how == .launched { fetched += 1 }
        // A full queue is no fault of the URL's: not remembered.
        if how == .refused { return .failure(Problem(busy)) }
        let (found, urlAtFault) = Self.issuer(of: subject, in: answer, from: url)
        // A URL that served the issuer the certificate names, whose key did not sign it, is not at
        // fault (the certificate is forged): only the leaf is remembered, by the caller.
        if case .failure(let problem) = found, urlAtFault {
            state.withLock { state in
                state.failures.remember(
                    "\(problem.text) (a failure of the last \(failureMemory), not asked again yet)", for: key, until: .now + failureMemory)
            }
        }
        return found
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
}
