import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// The README's NIO snippet, compiled and run against a local server so it cannot drift.
@Suite("README: pinning a host with SwiftNIO", .serialized)
struct ReadmeNIOExampleTests {
    /// The README's snippet, verbatim between the markers; returns what the caller sees.
    static func snippet(group: any EventLoopGroup, port: Int, pin: String, anchors: TrustAnchors) async throws -> String {
        let host = "www.example.test"
        // --- README snippet ---
        let verifier = PincheckNIOVerifier(policy: TrustPolicy(
            pinning: .publicKeys(try PinnedPublicKeys(parsing: [pin])), anchors: anchors))
        let tls = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        let (channel, handshake) = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                let handshake = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: tls, host: host, port: port)
                return (channel, handshake)
            }
        }
        defer { channel.close(promise: nil) }
        do {
            try await handshake.get()                   // really waits for the handshake
        } catch let refused as PincheckTrustError {
            print(refused.codes)                         // [pin.mismatch]; refused.verdict (optional: nil when
                                                         // no chain could be judged) has the evidence
            throw refused
        }
        // --- end of snippet ---
        return "connected"
    }

    /// The snippet against a fresh local server, pinned to `pin`'s key.
    static func run(pinning pin: String) async throws -> Result<String, any Error> {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let port = server.port
        let anchors = try TrustAnchors(certificates: [PKI.certificate("rsa-root")])
        let result = await capture {
            try await snippet(group: group, port: port, pin: PKI.certificate(pin).publicKeyPin.description, anchors: anchors)
        }
        try await server.stop()
        try await group.shutdownGracefully()
        return result
    }

    @Test("the snippet run here is the README's, line for line")
    func sameAsTheReadme() throws {
        let here = URL(fileURLWithPath: #filePath)
        let readme = try String(contentsOf: here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        func lines(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let start = try #require(source.range(of: "// --- README snippet ---\n"))
        let end = try #require(source.range(of: "// --- end of snippet ---", range: start.upperBound..<source.endIndex))
        let snippet = lines(source[start.upperBound..<end.lowerBound])
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let block = try #require(blocks.first { $0.contains(snippet[0]) }, "no swift block of the README starts the snippet")
        // The README shows the imports first; the function here has them at the top of the file.
        #expect(lines(block).filter { !$0.hasPrefix("import ") } == snippet)
    }

    @Test("the snippet completes a pinned handshake")
    func rightPin() async throws {
        #expect(try await Self.run(pinning: "rsa-intermediate").get() == "connected")
    }

    @Test("with a wrong pin the snippet's caller catches PincheckTrustError with pin.mismatch")
    func wrongPin() async throws {
        let result = try await Self.run(pinning: "attacker-root")
        let error = #expect(throws: PincheckTrustError.self) { try result.get() }
        #expect(error?.codes == [.pinMismatch])
    }
}
