// Built with the Vapor or Hummingbird trait, whose suites use it.
#if Vapor || Hummingbird
import Foundation
import Logging
import PincheckTestSupport
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// The framework servers' trust-domain scenario (issue 44): a server judging clients by the two
/// trust domains of a SPIFFE bundle folder refuses a client whose CA belongs to the other domain,
/// accepts the right ones, and trusts a domain added to the folder without a restart.
public enum TrustDomainScenario {
    /// A bundle folder with `a.test`'s bundle only, and a verifier watching it every 50 ms.
    public static func start() throws -> (folder: String, verifier: PincheckClientCertificateVerifier) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-framework-bundles-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: SPIFFEDomainsPKI.files.rootA, toPath: folder + "/a.test.trust-bundle.pem")
        let verifier = try PincheckClientCertificateVerifier(watchingBundleFolder: folder, interval: .milliseconds(50),
                                                             logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
                                                             now: { TestPKI.time })
        return (folder, verifier)
    }

    static func ask(_ port: Int, _ client: SPIFFEDomainsPKI.Client) async -> String? {
        try? await MTLSClient.get(port: port, chain: [client.certificate], key: client.key).get()
    }

    /// Runs the scenario against a server on `port` judging with `verifier` (from ``start()``).
    public static func run(port: Int, folder: String, verifier: PincheckClientCertificateVerifier) async throws {
        let pki = SPIFFEDomainsPKI.files
        let a = await ask(port, pki.clientA)
        #expect(a?.hasPrefix("200 ") == true && a?.contains("URI:\(SPIFFEDomainsPKI.identityA)") == true, "\(a ?? "refused")")
        #expect(await ask(port, pki.bClaimingA) == nil, "B's CA issuing A's identity is refused")
        #expect(await ask(port, pki.clientB) == nil, "b.test has no bundle yet")
        // b.test's bundle arrives as SPIRE writes it: aside, then renamed into the folder.
        try FileManager.default.copyItem(atPath: pki.rootB, toPath: folder + "/.b.tmp")
        #expect(rename(folder + "/.b.tmp", folder + "/b.test.trust-bundle.pem") == 0)
        let deadline = ContinuousClock.now + .seconds(10)
        while verifier.trustGeneration == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let b = await ask(port, pki.clientB)
        #expect(b?.hasPrefix("200 ") == true && b?.contains("URI:\(SPIFFEDomainsPKI.identityB)") == true, "no restart needed: \(b ?? "refused")")
        #expect(await ask(port, pki.bClaimingA) == nil, "still refused with both domains trusted")
        try? FileManager.default.removeItem(atPath: folder)
    }
}
#endif
