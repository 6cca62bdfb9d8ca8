import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PincheckTestSupport
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// CT on the NIO road: a real handshake with a leaf carrying SCTs of logs made here.
@Suite("NIO: Certificate Transparency in the handshake", .serialized)
struct CertificateTransparencyHandshakeTests {
    static let logs: [TestCTLog] = [("Alpha 1", "Alpha"), ("Alpha 2", "Alpha"), ("Beta 1", "Beta")].map { try! TestCTLog(name: $0.0, operatorName: $0.1) }
    static let issued = PKI.time.addingTimeInterval(-86_400)

    /// A TLS echo server on 127.0.0.1 serving `leaf` (the rsa-leaf key) and rsa-intermediate.
    static func withServer<T: Sendable>(leaf: Certificate, _ body: (any EventLoopGroup, Int) async throws -> T) async throws -> T {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, chain: [try NIOSSLCertificate(bytes: leaf.derBytes, format: .der)], key: "rsa-leaf")
        let result = await capture { try await body(group, server.port) }
        try await server.stop()
        try await group.shutdownGracefully()
        return try result.get()
    }

    static func verifier() throws -> PincheckNIOVerifier {
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [PKI.certificate("rsa-root")], classification: .webPKI))
        let list = try TestCT.logList(logs, since: issued.addingTimeInterval(-86_400 * 365), timestamp: PKI.time)
        policy.validation.certificateTransparency = CertificateTransparency.Requirement(policy: .chrome, logs: CertificateTransparency.Logs([list]))
        return PincheckNIOVerifier(policy: policy, now: { PKI.time })
    }

    static func leaf(with logs: [TestCTLog]) throws -> Certificate {
        let key = Array(try Data(contentsOf: URL(fileURLWithPath: PKI.path("keys/rsa-intermediate.key"))))
        return try TestCT.embedding(logs, in: PKI.certificate("rsa-leaf"), issuer: PKI.certificate("rsa-intermediate"), issuerKeyPEM: key, at: issued)
    }

    @Test("three SCTs of two operators: the handshake completes and the echo comes back")
    func compliant() async throws {
        let leaf = try Self.leaf(with: Self.logs)
        let verifier = try Self.verifier()
        let reply = try await Self.withServer(leaf: leaf) { group, port in
            try await TrustFailureTests.exchange(group: group, port: port, host: "www.example.test", verifier: verifier)
        }
        #expect(reply == "ping")
    }

    @Test("one SCT: the handshake fails with PincheckTrustError carrying ct.not-compliant and the SCTs in the verdict")
    func notCompliant() async throws {
        let leaf = try Self.leaf(with: [Self.logs[2]])
        let verifier = try Self.verifier()
        let result = try await Self.withServer(leaf: leaf) { group, port in
            await capture { try await TrustFailureTests.exchange(group: group, port: port, host: "www.example.test", verifier: verifier) }
        }
        let error = #expect(throws: PincheckTrustError.self) { try result.get() }
        #expect(error?.codes == [.ctNotCompliant])
        #expect(error?.verdict?.certificateTransparency?.timestamps.count == 1)
        #expect(error?.verdict?.certificateTransparency?.timestamps.first?.status == .verified)
    }
}
