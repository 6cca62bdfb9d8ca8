import Foundation
import Logging
import NIOConcurrencyHelpers
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// A SPIFFE bundle folder re-read under a running server (issue 44): rotations are picked up
/// without a restart or a failed handshake, and a bad write never empties the trust set.
@Suite("mTLS: trust bundles re-read under a running server", .serialized)
struct TrustBundleReloadTests {
    static let pki = SPIFFEDomainsPKI.files

    /// A bundle folder holding A's bundle only.
    static func folder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-bundles-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: pki.rootA, toPath: folder + "/a.test.trust-bundle.pem")
        return folder
    }

    /// Puts `contents` at `name` in `folder` as SPIRE does: written aside, then renamed over.
    static func install(_ contents: Data, as name: String, in folder: String) throws {
        let aside = folder + "/.\(name).tmp"
        try contents.write(to: URL(fileURLWithPath: aside))
        guard rename(aside, folder + "/\(name)") == 0 else { throw POSIXError(.EIO) }
    }

    static func verifier(_ folder: String, _ handler: RecordingLogHandler) throws -> PincheckClientCertificateVerifier {
        try PincheckClientCertificateVerifier(watchingBundleFolder: folder, interval: .milliseconds(50),
                                              logger: Logger(label: "test", factory: { _ in handler }),
                                              now: { TestPKI.time }, offloadEvaluation: false)
    }

    static func handshake(_ port: Int, _ client: SPIFFEDomainsPKI.Client) async -> Bool {
        (try? await ClientCertificateTests.connect(port: port, chain: [client.certificate], key: client.key).get()) != nil
    }

    @Test("a new domain's bundle is trusted within a poll, under 16 concurrent handshakes of which none fails")
    func swapUnderLoad() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let handler = RecordingLogHandler()
        let verifier = try Self.verifier(folder, handler)
        let server = try await MutualTLSServer.start(verifier)
        defer { Task { try? await server.channel.close() } }
        #expect(await Self.handshake(server.port, Self.pki.clientA))
        #expect(!(await Self.handshake(server.port, Self.pki.clientB)), "B has no bundle yet")
        #expect(verifier.trustGeneration == 0)

        let stop = NIOLockedValueBox(false)
        let counts = NIOLockedValueBox((succeeded: 0, failed: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    while !stop.withLockedValue({ $0 }) {
                        let accepted = await Self.handshake(server.port, Self.pki.clientA)
                        counts.withLockedValue { accepted ? ($0.succeeded += 1) : ($0.failed += 1) }
                    }
                }
            }
            // Let the load start, then add B's bundle under it.
            try await Task.sleep(for: .milliseconds(200))
            try Self.install(try Data(contentsOf: URL(fileURLWithPath: Self.pki.rootB)), as: "b.test.trust-bundle.pem", in: folder)
            let deadline = ContinuousClock.now + .seconds(10)
            while verifier.trustGeneration == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(verifier.trustGeneration == 1)
            #expect(await Self.handshake(server.port, Self.pki.clientB), "B is trusted once the new bundle is in force")
            try await Task.sleep(for: .milliseconds(200))
            stop.withLockedValue { $0 = true }
            try await group.waitForAll()
        }
        let (succeeded, failed) = counts.withLockedValue { $0 }
        #expect(failed == 0, "\(failed) of \(succeeded + failed) handshakes failed during the swap")
        #expect(succeeded >= 32, "the load ran: \(succeeded) handshakes")
        #expect(verifier.trustDomains.keys.sorted() == ["a.test", "b.test"])
        #expect(handler.all.contains { $0.level == .notice && $0.metadata["generation"] == "1" && $0.metadata["domains"]?.contains("b.test") == true })
    }

    @Test("a malformed bundle or an empty folder is refused with an error line and the bundles in force are kept; a removed domain is no longer trusted")
    func malformedAndRetired() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: Self.pki.rootB, toPath: folder + "/b.test.trust-bundle.pem")
        let handler = RecordingLogHandler()
        let verifier = try Self.verifier(folder, handler)
        let server = try await MutualTLSServer.start(verifier)
        defer { Task { try? await server.channel.close() } }
        #expect(await Self.handshake(server.port, Self.pki.clientA))

        // A truncated write of A's bundle: refused, A still trusted, the generation unchanged.
        try Self.install(Data("-----BEGIN CERTIFICATE-----\nMIIB".utf8), as: "a.test.trust-bundle.pem", in: folder)
        let deadline = ContinuousClock.now + .seconds(20)
        while !handler.all.contains(where: { $0.level == .error }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let refusal = try #require(handler.all.first { $0.level == .error })
        #expect(refusal.message.contains("the trust in force is kept"))
        #expect(refusal.metadata["error"]?.contains("a.test.trust-bundle.pem") == true, "\(refusal.metadata)")
        #expect(verifier.trustGeneration == 0)
        #expect(await Self.handshake(server.port, Self.pki.clientA))
        #expect(await Self.handshake(server.port, Self.pki.clientB))
        try await Task.sleep(for: .milliseconds(200))
        #expect(handler.all.filter { $0.level == .error }.count == 1, "a refused change is logged once, not at every poll")

        // A's bundle rewritten whole: in force again (generation 1). Then B's removed: B's CA is
        // retired, its clients refused from the next poll (generation 2).
        try Self.install(try Data(contentsOf: URL(fileURLWithPath: Self.pki.rootA)), as: "a.test.trust-bundle.pem", in: folder)
        while verifier.trustGeneration < 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(verifier.trustGeneration == 1)
        try FileManager.default.removeItem(atPath: folder + "/b.test.trust-bundle.pem")
        while verifier.trustGeneration < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(verifier.trustGeneration == 2)
        #expect(verifier.trustDomains.keys.sorted() == ["a.test"])
        #expect(await Self.handshake(server.port, Self.pki.clientA))
        #expect(!(await Self.handshake(server.port, Self.pki.clientB)), "a retired domain's clients are refused")

        // The last bundle removed: an empty trust set would refuse every client, so it is refused.
        try FileManager.default.removeItem(atPath: folder + "/a.test.trust-bundle.pem")
        while handler.all.filter({ $0.level == .error }).count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(handler.all.last { $0.level == .error }?.metadata["error"]?.contains("holds no DOMAIN.trust-bundle.pem") == true)
        #expect(verifier.trustGeneration == 2)
        #expect(await Self.handshake(server.port, Self.pki.clientA))
    }

    @Test("plain anchor files (no trust domains) are re-read too: a rotated CA file trusted, the old CA retired, a truncated write refused")
    func anchorFiles() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/clients-ca.pem"
        try FileManager.default.copyItem(atPath: Self.pki.rootA, toPath: file)
        let handler = RecordingLogHandler()
        let verifier = try PincheckClientCertificateVerifier(watchingAnchorFiles: [file], interval: .milliseconds(50),
                                                             logger: Logger(label: "test", factory: { _ in handler }),
                                                             now: { TestPKI.time }, offloadEvaluation: false)
        let server = try await MutualTLSServer.start(verifier)
        defer { Task { try? await server.channel.close() } }
        // No trust domains: any client of the file's CA, whatever its SPIFFE ID.
        #expect(await Self.handshake(server.port, Self.pki.clientA))
        #expect(await Self.handshake(server.port, Self.pki.noSPIFFEID))
        #expect(!(await Self.handshake(server.port, Self.pki.clientB)))
        try Self.install(try Data(contentsOf: URL(fileURLWithPath: Self.pki.rootB)), as: "clients-ca.pem", in: folder)
        let deadline = ContinuousClock.now + .seconds(20)
        while verifier.trustGeneration < 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(verifier.trustGeneration == 1)
        #expect(await Self.handshake(server.port, Self.pki.clientB))
        #expect(!(await Self.handshake(server.port, Self.pki.clientA)), "the retired CA's clients are refused")
        try Self.install(Data("-----BEGIN CERTIFICATE-----\nMIIB".utf8), as: "clients-ca.pem", in: folder)
        while !handler.all.contains(where: { $0.level == .error }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(handler.all.contains { $0.level == .error && $0.metadata["error"]?.contains("clients-ca.pem") == true })
        #expect(verifier.trustGeneration == 1)
        #expect(await Self.handshake(server.port, Self.pki.clientB), "the CA in force is kept")
    }

    @Test("a folder that cannot be read when the server starts is an error: no server without trust")
    func unreadableAtStart() {
        #expect(throws: PincheckError.self) {
            try Self.verifier("/nonexistent/pincheck-bundles", RecordingLogHandler())
        }
    }
}
