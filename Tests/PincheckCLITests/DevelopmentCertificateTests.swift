import Foundation
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// What a developer with a development certificate meets first (the fixtures are the tools' own:
/// Certificates/private-pki/, made by scripts/make-private-pki-corpus.sh).
@Suite("Development certificates on the command line")
struct DevelopmentCertificateTests {
    typealias F = CLIFixtures

    static func verifyAt(_ fixture: String) throws -> [String] {
        let manifest = try String(contentsOfFile: F.path("private-pki/manifest.tsv"), encoding: .utf8)
        let line = try #require(manifest.split(separator: "\n").first { $0.hasPrefix(fixture + "\t") })
        return ["--at", String(line.split(separator: "\t")[3])]
    }

    @Test("keytool's CN=localhost chain verifies with its root listed second in a bundle of two same-named roots")
    func keytoolBundle() throws {
        let bundle = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-keytool-\(UUID().uuidString).pem").path
        defer { try? FileManager.default.removeItem(atPath: bundle) }
        let other = try String(contentsOfFile: F.path("private-pki/keytool/other-localhost-root.pem"), encoding: .utf8)
        let root = try String(contentsOfFile: F.path("private-pki/keytool/root.pem"), encoding: .utf8)
        try (other + root).write(toFile: bundle, atomically: true, encoding: .utf8)
        let result = F.run(["verify", F.path("private-pki/keytool/chain.pem"), "--host", "localhost", "--ca-file", bundle] + (try Self.verifyAt("keytool")))
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(result.output.hasPrefix("TRUSTED"))
    }

    @Test("a self-signed development certificate without --ca-file says what to do")
    func selfSignedHint() throws {
        let result = F.run(["verify", F.path("private-pki/openssl-one-liner/chain.pem"), "--host", "example.test"] + (try Self.verifyAt("openssl-one-liner")))
        #expect(result.status == 1)
        #expect(result.output.contains("chain.self-signed"))
        #expect(result.output.contains("hint: the chain ends at a self-signed certificate that is not an anchor: pass it with --ca-file FILE"))
    }

    @Test("a chain from a development CA without --ca-file names the CA file to pass")
    func privateCAHint() throws {
        let result = F.run(["verify", F.path("private-pki/mkcert/chain.pem"), "--host", "example.test"] + (try Self.verifyAt("mkcert")))
        #expect(result.status == 1)
        #expect(result.output.contains("hint: no anchor issued this chain"))
        #expect(result.output.contains("mkcert's rootCA.pem"))
    }

    @Test("pins of mkcert's rootCA.pem prints the pin to paste first")
    func mkcertRootPin() throws {
        let result = F.run(["pins", F.path("private-pki/mkcert/root.pem")])
        #expect(result.status == 0)
        let root = try Certificate.load(contentsOf: F.path("private-pki/mkcert/root.pem"))[0]
        #expect(result.output.split(separator: "\n").first.map(String.init) == root.publicKeyPin.description)
        // The pasted pin holds the chain mkcert made.
        let pinned = F.run(["verify", F.path("private-pki/mkcert/chain.pem"), "--host", "example.test", "--ca-file", F.path("private-pki/mkcert/root.pem"),
                            "--pin", root.publicKeyPin.description] + (try Self.verifyAt("mkcert")))
        #expect(pinned.status == 0, "\(pinned.output)")
    }
}
