import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PincheckTLS
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// The NIO route and stapled OCSP. swift-nio-ssl neither asks the server for a stapled response
/// nor shows one to the verification callback (apple/swift-nio-ssl issue 242), so the verifier
/// asks the server over a second connection (`StapleRetrieval`) and judges the response as every
/// other route does. The servers here staple when asked, and serve each connection on its own
/// thread, as real servers do.
@Suite("NIO: stapled OCSP over a second connection, judged as on every route", .serialized)
struct StapledOCSPRouteTests {
    static let host = "www.example.test"

    /// A server for the leaf rsa-root issued directly, stapling its *revoked* response (or nothing).
    static func directLeafServer(stapling: Bool = true) throws -> LocalTLSServer {
        try LocalTLSServer(chain: [TestPKI.certificate("revocation/rsa-direct-leaf")],
                           privateKeyPEM: try String(contentsOfFile: TestPKI.path("keys/revocation/rsa-direct-leaf.key"), encoding: .utf8),
                           stapledOCSPResponse: stapling ? try response("ocsp-direct-revoked") : nil)
    }

    /// A server for the must-staple leaf (under rsa-intermediate), stapling its good response (or nothing).
    static func mustStapleServer(stapling: Bool = true) throws -> LocalTLSServer {
        try LocalTLSServer(chain: try Certificate.load(contentsOf: TestPKI.path("revocation/must-staple-chain.pem")),
                           privateKeyPEM: try String(contentsOfFile: TestPKI.path("revocation/rsa-must-staple.key"), encoding: .utf8),
                           stapledOCSPResponse: stapling ? try response("ocsp-must-staple-good") : nil)
    }

    static func response(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: TestPKI.path("revocation/\(name).der"))))
    }

    static func manager(requireStapledOCSP: Bool) throws -> TrustManager {
        let anchors = try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")])
        let policy = HostPolicy(pattern: try HostPattern(host, publicSuffixes: PublicSuffixList.system), pinSets: [], validation: ValidationPolicy(anchors: anchors),
                                revocation: RevocationPolicy(requireStapledOCSP: requireStapledOCSP))
        return TrustManager(policies: [policy], allHostsMustBeEvaluated: true, defaultValidation: ValidationPolicy(anchors: anchors))
    }

    static func verifier(requireStapledOCSP: Bool, staples: StapleRetrieval) throws -> PincheckNIOVerifier {
        let adapter = ChallengeAdapter(trustManager: try manager(requireStapledOCSP: requireStapledOCSP), now: { TestPKI.time })
        // Evaluated on the event loop: with every suite running at once, a Task could wait for
        // the cooperative pool longer than the local server waits for the handshake (30 s).
        return PincheckNIOVerifier(adapter: adapter, offloadEvaluation: false, staples: staples)
    }

    /// A retrieval with a cache of its own, so tests neither share answers nor see each other's
    /// counts; its timeout is long, so a loaded machine's slow handshake is not taken for a failure.
    static func retrieval(_ scope: StapleRetrieval.Scope) -> StapleRetrieval {
        StapleRetrieval(scope, timeout: .seconds(30), cache: StapleCache())
    }

    /// One NIO handshake with 127.0.0.1:`port` for `host`: the decisions made, and whether it completed.
    static func handshake(port: UInt16, verifier: PincheckNIOVerifier) async throws -> ([ChallengeDecision], Bool) {
        let decisions = Decisions()
        let context = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        let handshake = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let done = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: context, host: host,
                                                              port: Int(port)) { decisions.append($0) }
                    done.cascade(to: handshake)
                }
            }
            .connect(host: "127.0.0.1", port: Int(port)).get()
        defer { channel.close(promise: nil) }
        let completed = (try? await handshake.futureResult.get()) != nil
        return (decisions.all, completed)
    }

    static func failures(_ decisions: [ChallengeDecision]) -> [Reason.Code] {
        decisions.first?.verdict?.failures.map(\.code) ?? []
    }

    @Test("by default a policy that requires stapling gets the staple: the revoked leaf is refused with revocation.revoked")
    func requiredRevoked() async throws {
        let server = try Self.directLeafServer()
        defer { server.stop() }
        let staples = Self.retrieval(.whenRequired)
        let (decisions, completed) = try await Self.handshake(port: server.port, verifier: try Self.verifier(requireStapledOCSP: true, staples: staples))
        #expect(!completed)
        #expect(decisions.count == 1)
        #expect(decisions.first?.disposition == .cancelAuthenticationChallenge)
        #expect(Self.failures(decisions) == [.revoked], "\(String(describing: decisions.first?.verdict?.failures))")
        #expect(staples.cache.statistics.fetches == 1)
    }

    @Test("the leaf certificate-pinned: the staple fetched with .always is judged on the anchors' path and refuses the handshake")
    func pinnedLeafRevoked() async throws {
        let server = try Self.directLeafServer()
        defer { server.stop() }
        let anchors = try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")])
        let leaf = TestPKI.certificate("revocation/rsa-direct-leaf")
        let pinned = TrustPolicy(pinning: .certificates(try PinnedCertificates([leaf])), anchors: anchors)
        let adapter = ChallengeAdapter(trustManager: TrustManager(policies: [try HostPolicy(Self.host, policy: pinned)],
                                                                  defaultValidation: ValidationPolicy(anchors: anchors)),
                                       now: { TestPKI.time })
        let verifier = PincheckNIOVerifier(adapter: adapter, offloadEvaluation: false, staples: Self.retrieval(.always))
        let (decisions, completed) = try await Self.handshake(port: server.port, verifier: verifier)
        #expect(!completed)
        #expect(decisions.first?.disposition == .cancelAuthenticationChallenge)
        #expect(Self.failures(decisions).contains(.revoked), "\(String(describing: decisions.first?.verdict?.failures))")
    }

    @Test("by default a policy that does not require stapling makes no second connection: the chain alone decides")
    func notRequiredByDefault() async throws {
        let server = try Self.directLeafServer()
        defer { server.stop() }
        let staples = Self.retrieval(.whenRequired)
        let (decisions, completed) = try await Self.handshake(port: server.port, verifier: try Self.verifier(requireStapledOCSP: false, staples: staples))
        #expect(completed)
        #expect(decisions.first?.verdict?.isTrusted == true, "\(String(describing: decisions.first?.verdict?.failures))")
        #expect(staples.cache.statistics.fetches == 0)
    }

    @Test(".always: a revoked staple refuses the connection without any requirement, and the answer is cached")
    func alwaysRevoked() async throws {
        let server = try Self.directLeafServer()
        defer { server.stop() }
        let staples = Self.retrieval(.always)
        let verifier = try Self.verifier(requireStapledOCSP: false, staples: staples)
        for round in 1...2 {
            let (decisions, completed) = try await Self.handshake(port: server.port, verifier: verifier)
            #expect(!completed, "round \(round)")
            #expect(Self.failures(decisions) == [.revoked], "round \(round): \(String(describing: decisions.first?.verdict?.failures))")
        }
        #expect(staples.cache.statistics.fetches == 1)
        #expect(staples.cache.statistics.hits == 1)
    }

    @Test(".always against a server that staples nothing: the chain decides, unless stapling is required")
    func alwaysNothingStapled() async throws {
        let server = try Self.directLeafServer(stapling: false)
        defer { server.stop() }
        let (lenient, lenientCompleted) = try await Self.handshake(port: server.port, verifier: try Self.verifier(requireStapledOCSP: false, staples: Self.retrieval(.always)))
        #expect(lenientCompleted)
        #expect(lenient.first?.verdict?.isTrusted == true)
        let (strict, strictCompleted) = try await Self.handshake(port: server.port, verifier: try Self.verifier(requireStapledOCSP: true, staples: Self.retrieval(.always)))
        #expect(!strictCompleted)
        #expect(Self.failures(strict) == [.stapleMissing])
    }

    @Test("a must-staple leaf with a good staple is trusted by default; without retrieval it cannot be")
    func mustStaple() async throws {
        let server = try Self.mustStapleServer()
        defer { server.stop() }
        let (decisions, completed) = try await Self.handshake(port: server.port, verifier: try Self.verifier(requireStapledOCSP: false, staples: Self.retrieval(.whenRequired)))
        #expect(completed)
        #expect(decisions.first?.verdict?.isTrusted == true, "\(String(describing: decisions.first?.verdict?.failures))")
        let (never, neverCompleted) = try await Self.handshake(port: server.port, verifier: try Self.verifier(requireStapledOCSP: false, staples: Self.retrieval(.never)))
        #expect(!neverCompleted)
        #expect(Self.failures(never) == [.stapleMissing])
    }

    @Test(".never: a policy that requires stapling fails closed, and a revoked staple goes unseen otherwise")
    func never() async throws {
        let server = try Self.directLeafServer()
        defer { server.stop() }
        let (strict, strictCompleted) = try await Self.handshake(port: server.port, verifier: try Self.verifier(requireStapledOCSP: true, staples: Self.retrieval(.never)))
        #expect(!strictCompleted)
        #expect(Self.failures(strict) == [.stapleMissing])
        let (lenient, lenientCompleted) = try await Self.handshake(port: server.port, verifier: try Self.verifier(requireStapledOCSP: false, staples: Self.retrieval(.never)))
        #expect(lenientCompleted)
        #expect(lenient.first?.verdict?.isTrusted == true)
    }

    @Test("a second connection served another leaf gives no staple: its response is not used for this leaf")
    func anotherLeaf() async throws {
        // The must-staple chain is judged, but the second connection reaches the direct leaf's server.
        let other = try Self.directLeafServer()
        defer { other.stop() }
        let chain = try Certificate.load(contentsOf: TestPKI.path("revocation/must-staple-chain.pem")).map(\.derBytes)
        let staples = Self.retrieval(.always)
        let decision = try await Self.verifier(requireStapledOCSP: false, staples: staples)
            .decide(derChain: chain, host: Self.host, port: Int(other.port), address: "127.0.0.1")
        #expect(decision.verdict?.failures.map(\.code) == [.stapleMissing], "\(String(describing: decision.verdict?.failures))")
        #expect(staples.cache.statistics.fetches == 1)
    }

    @Test("a second connection that fails gives no staple")
    func unreachable() async throws {
        // A port nothing listens on: bind one, note it, close it.
        let server = try Self.directLeafServer()
        let port = server.port
        server.stop()
        let chain = try Certificate.load(contentsOf: TestPKI.path("revocation/must-staple-chain.pem")).map(\.derBytes)
        let decision = try await Self.verifier(requireStapledOCSP: false, staples: StapleRetrieval(.always, timeout: .seconds(30), cache: StapleCache()))
            .decide(derChain: chain, host: Self.host, port: Int(port), address: "127.0.0.1")
        #expect(decision.verdict?.failures.map(\.code) == [.stapleMissing])
    }
}
