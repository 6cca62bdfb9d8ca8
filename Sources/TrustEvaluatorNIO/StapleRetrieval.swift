import Dispatch
import Foundation
import Logging
import PincheckTLS
import TrustEvaluator

/// How ``PincheckNIOVerifier`` obtains the OCSP response a server staples for its leaf.
///
/// swift-nio-ssl neither sends the status_request extension nor shows a stapled response to the
/// verification callback (apple/swift-nio-ssl issue 242). So the verifier asks the server itself,
/// over a second connection of its own: one TLS handshake with libssl to the same host and port,
/// sending status_request, whose only product is the stapled response. Nothing else about that
/// connection is used, and nothing is fetched from anyone but the server being connected to.
///
/// The response proves itself, whatever carried it: the evaluator uses it only when it is about
/// the leaf *this* connection served, signed by that leaf's issuer on the verified path (or a
/// responder the issuer delegated to), and fresh — the check every other route makes. A second
/// connection that fails, times out, or is served another leaf (a server with several
/// certificates) yields no staple, and the connection is judged as if none had been stapled.
///
/// An attacker who holds a revoked certificate's key can keep a staple from the client on this
/// route as on any other (by stapling nothing); what stapling adds against that is its
/// requirement, by the policy (`requireStapledOCSP`) or by a must-staple leaf.
public struct StapleRetrieval: Sendable {
    /// For which connections the staple is asked for.
    public enum Scope: Sendable, Hashable {
        /// Never: the verifier has no staple. A must-staple leaf, or a host whose policy requires
        /// stapling, then always fails (`revocation.staple-missing`); elsewhere the chain alone decides.
        case never
        /// Only where the connection cannot succeed without one: the leaf is must-staple, or the
        /// host's policy sets `requireStapledOCSP`. Every other connection makes no second handshake.
        case whenRequired
        /// For every connection that is evaluated: a *revoked* staple refuses the connection on this
        /// route as on every other, at the cost of a second handshake per server and leaf, once per
        /// cache lifetime.
        case always
    }

    /// For which connections the staple is asked for.
    public var scope: Scope
    /// The bound on the second connection: name resolution, connect and handshake.
    public var timeout: Duration
    /// Where answers are kept, so a client does not ask again on every connection.
    public var cache: StapleCache

    /// - Parameters:
    ///   - scope: For which connections the staple is asked for.
    ///   - timeout: The bound on the second connection; 5 seconds by default.
    ///   - cache: Where answers are kept; one cache for the process by default.
    public init(_ scope: Scope, timeout: Duration = .seconds(5), cache: StapleCache = .shared) {
        self.scope = scope
        self.timeout = timeout
        self.cache = cache
    }

    /// No second connection, ever.
    public static let never = StapleRetrieval(.never)
    /// The default: a second connection only where the connection cannot succeed without a staple.
    public static let whenRequired = StapleRetrieval(.whenRequired)
    /// A second connection for every evaluated leaf (once per cache lifetime).
    public static let always = StapleRetrieval(.always)

    /// Whether a connection to `host` that served `leaf` needs the staple, under `manager`.
    func wanted(leaf: Certificate, host: String, manager: TrustManager) -> Bool {
        switch scope {
        case .never: false
        case .always: true
        case .whenRequired: leaf.requiresStapledOCSP || manager.requiresStapledOCSP(for: host)
        }
    }

    /// Obtains the staple `host:port` sends with `leaf`, from the cache or over a second
    /// connection on a dispatch queue (it blocks for at most ``timeout``). Connections to the same
    /// server and leaf that ask at the same time share one second connection.
    /// - Parameters:
    ///   - address: The numeric address the first connection went to, where the second one goes
    ///     too (with `host` as SNI); nil looks `host` up.
    ///   - completion: Receives the staple, or nil when there is none; called exactly once,
    ///     possibly on the calling thread.
    func staple(
        for leaf: Certificate, host: String, port: Int, address: String?, logger: Logger,
        completion: @escaping @Sendable ([UInt8]?) -> Void
    ) {
        guard let port = UInt16(exactly: port) else {
            completion(nil)
            return
        }
        let key = StapleCache.Key(host: host, port: port, leaf: leaf.sha256Fingerprint)
        guard cache.claim(key, waiter: completion) else { return }
        let timeout = timeout, cache = cache
        DispatchQueue.global().async {
            let staple: [UInt8]?
            var failed = false
            do {
                let result = try TLSProbe(timeout: timeout).probe(ProbeTarget(host: address ?? host, port: port), serverName: host)
                if result.servedChain.first?.sha256Fingerprint != leaf.sha256Fingerprint {
                    logger.warning(
                        "the second connection to \(host):\(port) for its stapled OCSP response was served another leaf; no staple is used",
                        metadata: ["pincheck.host": "\(host)"])
                    staple = nil
                } else {
                    staple = result.stapledOCSPResponse
                    logger.debug(
                        "\(host):\(port) \(staple == nil ? "staples no OCSP response" : "stapled an OCSP response") (second connection)",
                        metadata: ["pincheck.host": "\(host)"])
                }
            } catch {
                logger.warning(
                    "no stapled OCSP response from \(host):\(port): the second connection failed: \(error)",
                    metadata: ["pincheck.host": "\(host)"])
                staple = nil
                failed = true
            }
            cache.finish(key, staple: staple, failed: failed, leaf: leaf)
        }
    }
}

/// The staples ``StapleRetrieval`` obtained, by server and leaf, each kept for a while:
/// - a staple for ``lifetime``, but never past its `nextUpdate`;
/// - the answer "the server staples nothing" (or it served another leaf) for ``lifetimeWithoutStaple``;
/// - a second connection that failed for ``lifetimeAfterFailure``, so a server that refuses it
///   does not cost every connection a timeout, and a passing failure does not last.
///
/// Freshness is still the evaluator's to judge on every handshake.
public final class StapleCache: Sendable {
    /// What the cache has done, for monitoring and tests.
    public struct Statistics: Sendable, Hashable {
        /// Second connections made.
        public var fetches = 0
        /// Answers given from the cache, or by joining a second connection already under way.
        public var hits = 0
    }

    struct Key: Hashable {
        let host: String
        let port: UInt16
        let leaf: [UInt8]
    }

    /// One cache for the process.
    public static let shared = StapleCache()

    /// How long a staple is kept.
    public let lifetime: Duration
    /// How long "the server staples nothing" is kept.
    public let lifetimeWithoutStaple: Duration
    /// How long a failed second connection is remembered.
    public let lifetimeAfterFailure: Duration
    /// How many answers are kept; past it the oldest go first.
    public let capacity: Int
    /// One second connection per server and leaf at a time; the answers, kept as ``keep(_:about:failed:now:)`` says.
    private let flights: SingleFlight<Key, [UInt8]?>
    private let counts = Locked(Statistics())

    /// - Parameters:
    ///   - lifetime: How long a staple is kept at most; one hour by default (servers refresh theirs
    ///     well before `nextUpdate`, typically days away). A staple is never kept past its `nextUpdate`.
    ///   - lifetimeWithoutStaple: How long "the server staples nothing" is kept; ten minutes by default.
    ///   - lifetimeAfterFailure: How long a failed second connection is remembered; 30 seconds by default.
    ///   - capacity: How many answers are kept; 1,024 by default.
    public init(
        lifetime: Duration = .seconds(3600), lifetimeWithoutStaple: Duration = .seconds(600),
        lifetimeAfterFailure: Duration = .seconds(30), capacity: Int = 1024
    ) {
        self.lifetime = lifetime
        self.lifetimeWithoutStaple = lifetimeWithoutStaple
        self.lifetimeAfterFailure = lifetimeAfterFailure
        self.capacity = max(1, capacity)
        self.flights = SingleFlight(memoryLimit: self.capacity)
    }

    /// What the cache has done so far.
    public var statistics: Statistics { counts.withLock { $0 } }

    /// Forgets every answer (second connections under way still complete).
    public func removeAll() {
        flights.forgetAll()
    }

    /// Answers `waiter` from the cache, or adds it to a second connection under way (both: false),
    /// or registers the first waiter of a new one (true: the caller makes the connection and calls
    /// ``finish(_:staple:failed:leaf:)``).
    func claim(_ key: Key, waiter: @escaping @Sendable ([UInt8]?) -> Void) -> Bool {
        // The caller makes the connection itself (``finish(_:staple:failed:leaf:)``): nothing to start here.
        let answer = flights.ask(SingleFlight.Ask(key, refused: nil, start: {}), waiter: waiter)
        counts.withLock { answer == .launched ? ($0.fetches += 1) : ($0.hits += 1) }
        return answer == .launched
    }

    /// How long an answer is kept. A staple is kept for ``lifetime`` but never past its
    /// `nextUpdate`: the server has a newer response by then, and a kept copy would be refused as
    /// stale (for a must-staple leaf, the connection with it). One already stale when fetched is
    /// kept only as long as a failure, so the server is asked again soon.
    func keep(_ staple: [UInt8]?, about leaf: Certificate, failed: Bool, now: Date) -> Duration {
        if failed { return lifetimeAfterFailure }
        guard let staple else { return lifetimeWithoutStaple }
        guard let freshUntil = StapledOCSP.freshUntil(staple, for: leaf) else { return lifetime }
        let remaining = freshUntil.timeIntervalSince(now)
        guard remaining > 0 else { return lifetimeAfterFailure }
        return min(lifetime, .milliseconds(Int64(min(remaining, 1e12) * 1000)))
    }

    /// Records the answer of a second connection and hands it to everyone waiting for it.
    /// - Parameter failed: True when the connection failed (no answer), rather than the server stapling nothing.
    func finish(_ key: Key, staple: [UInt8]?, failed: Bool, leaf: Certificate) {
        flights.land(key, staple, remembering: (staple, keep(staple, about: leaf, failed: failed, now: Date())))
    }
}
