import Foundation
import NIOConcurrencyHelpers
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// The NIO road reads the trust manager in force once per handshake: the staple's question and
/// the verdict are answered by the same manager, so an update between them cannot split them.
@Suite("NIO verifier: one read of the trust source per handshake")
struct TrustSourceReadTests {
    /// A source that counts how often it is asked.
    final class CountingSource: TrustManagerSource {
        let manager: TrustManager
        let reads = NIOLockedValueBox(0)
        init(_ manager: TrustManager) { self.manager = manager }
        func trustManager(at time: Date) -> TrustManager {
            reads.withLockedValue { $0 += 1 }
            return manager
        }
    }

    static func manager() throws -> TrustManager {
        let anchors = try TrustAnchors(certificates: [PKI.certificate("rsa-root")])
        let pins = PinSet(.publicKeys(try PinnedPublicKeys(certificates: [PKI.certificate("rsa-intermediate")])), enforcement: .enforce)
        return TrustManager(policies: [HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [pins],
                                                  validation: ValidationPolicy(anchors: anchors))])
    }

    @Test("a trusted and a refused handshake each read the source once, staple question included")
    func oneRead() async throws {
        let source = CountingSource(try Self.manager())
        let verifier = PincheckNIOVerifier(trustManagerSource: source, now: { PKI.time })
        let initialReads = source.reads.withLockedValue { $0 }   // the adapter's own start-up read
        let good = PKI.chain("rsa-good").map(\.derBytes)
        let trusted = await verifier.decide(derChain: good, host: "www.example.test", port: 443)
        #expect(trusted.disposition == .useCredential)
        #expect(source.reads.withLockedValue { $0 } - initialReads == 1)
        let refused = await verifier.decide(derChain: PKI.chain("attacker").map(\.derBytes), host: "www.example.test", port: 443)
        #expect(refused.disposition == .cancelAuthenticationChallenge)
        #expect(source.reads.withLockedValue { $0 } - initialReads == 2)
    }
}
