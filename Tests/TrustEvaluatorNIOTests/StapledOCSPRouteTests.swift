import Foundation
import NIOCore
import NIOPosix
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// The NIO route and stapled OCSP. swift-nio-ssl neither asks the server for a stapled response
/// (no status_request extension) nor shows one to the verification callback (apple/swift-nio-ssl
/// issue 242), so a staple never reaches Pincheck on this route: the server below would staple a
/// *revoked* response and is never asked to. A policy that requires stapling therefore fails
/// closed here; one that does not cannot see the revocation. The second test says so, and will
/// fail the day swift-nio-ssl learns OCSP, which is the day to hand the staple to the evaluator.
@Suite("NIO: stapled OCSP never reaches the verifier, and a policy that requires it fails closed", .serialized)
struct StapledOCSPRouteTests {
    static let host = "www.example.test"

    static func server() throws -> TestTLSServer {
        try TestTLSServer(certificate: "revocation/rsa-direct-leaf",
                          extra: ["-status_file", TestPKI.path("revocation/ocsp-direct-revoked.der")])
    }

    static func manager(requireStapledOCSP: Bool) throws -> TrustManager {
        let anchors = try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")])
        let policy = HostPolicy(pattern: try HostPattern(host, publicSuffixes: PublicSuffixList.system), pinSets: [], validation: TrustPolicy(anchors: anchors),
                                revocation: RevocationPolicy(requireStapledOCSP: requireStapledOCSP))
        return TrustManager(policies: [policy], allHostsMustBeEvaluated: true, defaultValidation: TrustPolicy(anchors: anchors))
    }

    /// The decisions the verifier made, and whether the server's page came back over the connection.
    static func handshake(requireStapledOCSP: Bool) async throws -> ([ChallengeDecision], Bool) {
        let server = try server()
        defer { server.stop() }
        let verifier = PincheckNIOVerifier(trustManager: try manager(requireStapledOCSP: requireStapledOCSP), now: { TestPKI.time })
        let decisions = Decisions()
        let reply = await capture { try await exchange(group: MultiThreadedEventLoopGroup.singleton, port: Int(server.port), host: host,
                                                       verifier: verifier, decisions: decisions, message: "GET / HTTP/1.0\r\n\r\n") }
        return (decisions.all, (try? reply.get()) != nil)
    }

    @Test("requireStapledOCSP: the handshake is refused with revocation.staple-missing")
    func required() async throws {
        let (decisions, answered) = try await Self.handshake(requireStapledOCSP: true)
        #expect(!answered)
        #expect(decisions.count == 1)
        #expect(decisions.first?.disposition == .cancelAuthenticationChallenge)
        #expect(decisions.first?.verdict?.failures.map(\.code) == [.stapleMissing], "\(String(describing: decisions.first?.verdict?.failures))")
    }

    @Test("without the requirement the revoked staple is never seen: the chain alone decides")
    func notRequired() async throws {
        let (decisions, answered) = try await Self.handshake(requireStapledOCSP: false)
        #expect(answered)
        #expect(decisions.count == 1)
        #expect(decisions.first?.verdict?.isTrusted == true, "\(String(describing: decisions.first?.verdict?.failures))")
        #expect(decisions.first?.verdict?.failures.contains { $0.code == .revoked } == false)
    }
}
