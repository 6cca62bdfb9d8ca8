import Foundation
import PincheckTestSupport
import Testing
@testable import PincheckCLI

/// `pincheck verify --ct`, on a real Let's Encrypt chain of 2024 and the log lists in ../shared/ct.
@Suite("pincheck verify --ct", SharedData.requires("ct", "realworld"))
struct CertificateTransparencyCommandTests {
    static let shared = SharedData.root
    static let chain = shared.appendingPathComponent("realworld/chains/rpv-letsencrypt_org_valid-04e9d2d4.pem").path
    static let root = shared.appendingPathComponent("realworld/roots/ISRG-Root-X1-96bcec06.pem").path
    static let google = shared.appendingPathComponent("ct/google-all_logs_list.json").path
    static let apple = shared.appendingPathComponent("ct/apple-current_log_list.json").path
    static let base = ["verify", chain, "--host", "lencr.org", "--ca-file", root, "--web-pki-roots", "--at", "2024-07-15",
                       "--ct-log-list-date", "2024-07-01"]

    @Test("with both lists each SCT is printed verified and counted, with its log, operator and time, and the chain is compliant")
    func compliant() {
        let result = CLIFixtures.run(Self.base + ["--ct", "chrome", "--ct-log-list", Self.google, "--ct-log-list", Self.apple])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(result.output.contains("Certificate Transparency (chrome policy): compliant"))
        let lines = result.output.split(separator: "\n").filter { $0.hasPrefix("  certificate  ") }
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.contains("verified") && $0.contains("counted") && $0.contains("2024-06-10T18:12:26Z") })
        #expect(lines.contains { $0.contains("Let's Encrypt 'Oak2024H2' log (Let's Encrypt)") })
    }

    @Test("with Google's list alone the logs are unknown: ct.not-compliant, exit 1, and the report says why")
    func unknownLogs() {
        let result = CLIFixtures.run(Self.base + ["--ct", "chrome", "--ct-log-list", Self.google])
        #expect(result.status == 1)
        #expect(result.output.contains("ct.not-compliant"))
        #expect(result.output.contains("2 from logs in none of the given lists"))
        #expect(result.output.contains("unknown-log"))
    }

    @Test("report-only turns the failure into a warning, exit 0")
    func reportOnly() {
        let result = CLIFixtures.run(Self.base + ["--ct", "chrome", "--ct-log-list", Self.google, "--ct-enforcement", "report-only"])
        #expect(result.status == 0)
        #expect(result.output.contains("ct.not-compliant"))
        #expect(result.output.contains("(report-only)"))
    }

    @Test("--json carries the policy's answer and every SCT")
    func json() throws {
        let result = CLIFixtures.run(Self.base + ["--ct", "apple", "--ct-log-list", Self.apple, "--json"])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let transparency = try #require(object["certificateTransparency"] as? [String: Any])
        #expect(transparency["policy"] as? String == "apple")
        #expect(transparency["compliance"] as? String == "compliant")
        let scts = try #require(transparency["scts"] as? [[String: Any]])
        #expect(scts.count == 2)
        #expect(scts.allSatisfy { $0["status"] as? String == "verified" && $0["counted"] as? Bool == true && $0["source"] as? String == "certificate" })
    }

    @Test("a list older than 70 days makes Chrome's policy unenforceable: refused by default, a warning with --ct-when-unenforceable allow")
    func staleList() {
        let stale = ["verify", Self.chain, "--host", "lencr.org", "--ca-file", Self.root, "--web-pki-roots", "--at", "2024-07-15",
                     "--ct-log-list-date", "2024-04-01", "--ct", "chrome", "--ct-log-list", Self.google, "--ct-log-list", Self.apple]
        let refused = CLIFixtures.run(stale)
        #expect(refused.status == 1)
        #expect(refused.output.contains("ct.unenforceable"))
        let allowed = CLIFixtures.run(stale + ["--ct-when-unenforceable", "allow"])
        #expect(allowed.status == 0)
        #expect(allowed.output.contains("ct.unenforceable"))
    }

    @Test("--config: a host's \"certificateTransparency\" takes its logs from --ct-log-list; without lists the file is refused; --ct itself is not combined with --config")
    func configuration() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-ct-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("pincheck.json").path
        try #"{ "version": 1, "hosts": [ { "pattern": "lencr.org", "mode": "none", "certificateTransparency": { "policy": "chrome" } } ] }"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let withConfig = ["verify", Self.chain, "--host", "lencr.org", "--ca-file", Self.root, "--web-pki-roots", "--at", "2024-07-15",
                          "--config", config, "--ct-log-list-date", "2024-07-01"]
        let compliant = CLIFixtures.run(withConfig + ["--ct-log-list", Self.google, "--ct-log-list", Self.apple])
        #expect(compliant.status == 0, "\(compliant.output)\(compliant.errors)")
        #expect(compliant.output.contains("Certificate Transparency (chrome policy): compliant"))
        let unknown = CLIFixtures.run(withConfig + ["--ct-log-list", Self.google])
        #expect(unknown.status == 1)
        #expect(unknown.output.contains("ct.not-compliant"))
        let noLists = CLIFixtures.run(withConfig)
        #expect(noLists.status == 2)
        #expect(noLists.errors.contains("hosts[0].certificateTransparency: a Certificate Transparency policy needs log lists"))
        #expect(CLIFixtures.run(withConfig + ["--ct", "chrome", "--ct-log-list", Self.google]).status == 2)
    }

    @Test("--ct-log-list-signature: lists signed with an RSA key (openssl dgst -sha256 -sign, as Google signs log_list.json) are read; a list that does not match its signature is refused, exit 2")
    func signedLists() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-ct-sig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func file(_ name: String) -> String { folder.appendingPathComponent(name).path }
        try #require(try OpenSSLCLI.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", file("publisher.key")]) == 0)
        try #require(try OpenSSLCLI.run(["pkey", "-in", file("publisher.key"), "-pubout", "-out", file("publisher.pem")]) == 0)
        for (list, name) in [(Self.google, "google.sig"), (Self.apple, "apple.sig"), (Self.chain, "wrong.sig")] {
            try #require(try OpenSSLCLI.run(["dgst", "-sha256", "-sign", file("publisher.key"), "-out", file(name), list]) == 0)
        }
        let signed = Self.base + ["--ct", "chrome", "--ct-log-list", Self.google, "--ct-log-list", Self.apple, "--ct-log-list-key", file("publisher.pem")]
        let good = CLIFixtures.run(signed + ["--ct-log-list-signature", file("google.sig"), "--ct-log-list-signature", file("apple.sig")])
        #expect(good.status == 0, "\(good.output)\(good.errors)")
        #expect(good.output.contains("Certificate Transparency (chrome policy): compliant"))
        let wrong = CLIFixtures.run(signed + ["--ct-log-list-signature", file("google.sig"), "--ct-log-list-signature", file("wrong.sig")])
        #expect(wrong.status == 2)
        #expect(wrong.errors.contains("signature does not verify"))
        #expect(wrong.errors.contains("apple-current_log_list.json"))
        #expect(CLIFixtures.run(signed + ["--ct-log-list-signature", file("google.sig")]).status == 2)
    }

    @Test("usage errors: --ct without a list, a list without --ct, an unknown policy, a list that is not one")
    func usage() throws {
        #expect(CLIFixtures.run(["verify", Self.chain, "--ct", "chrome"]).status == 2)
        #expect(CLIFixtures.run(["verify", Self.chain, "--ct-log-list", Self.google]).status == 2)
        #expect(CLIFixtures.run(["verify", Self.chain, "--ct", "firefox", "--ct-log-list", Self.google]).status == 2)
        let notAList = CLIFixtures.run(["verify", Self.chain, "--ct", "chrome", "--ct-log-list", Self.chain])
        #expect(notAList.status == 2)
        #expect(notAList.errors.contains("policy.invalid"))
    }
}
