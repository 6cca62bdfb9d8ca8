import Foundation
import PincheckTestSupport
import Testing
@testable import PincheckCLI

/// `verify --purpose client` and `lint --client-ca`: client certificates judged from the command
/// line, and client anchors that are public roots named (issue 44).
@Suite("pincheck verify --purpose client, lint --client-ca")
struct ClientPurposeCommandTests {
    typealias F = CLIFixtures

    @Test("a client chain of a private CA: trusted, no warning; a server-only leaf: refused, naming the missing clientAuth")
    func verifyClient() throws {
        let client = F.run(["verify", F.path("chains/rsa-client-only.pem"), "--purpose", "client"] + F.anchors + F.at)
        #expect(client.status == 0, "\(client.output)\(client.errors)")
        #expect(!client.output.contains("anchor.public-client-root"))
        #expect(client.output.contains("a client certificate names no host to check"), "why no name was checked: \(client.output)")
        let server = F.run(["verify", F.path("chains/rsa-good.pem"), "--purpose", "client"] + F.anchors + F.at)
        #expect(server.status == 1)
        #expect(server.output.contains("chain.wrong-purpose"))
        #expect(server.output.contains("has no clientAuth (serverAuth only)"), "\(server.output)")
        // The same server chain as a server's: trusted, as before.
        #expect(F.run(["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test"] + F.anchors + F.at).status == 0)
    }

    @Test("client anchors from the system store: the JSON warns anchor.public-client-root")
    func systemStoreWarned() throws {
        let result = F.run(["verify", F.path("chains/rsa-client-only.pem"), "--purpose", "client", "--json"] + F.at)
        let object = try F.json(result.output)
        let warnings = try #require(object["warnings"] as? [[String: Any]])
        #expect(warnings.contains { $0["code"] as? String == "anchor.public-client-root" && ($0["message"] as? String)?.contains("system store") == true },
                "\(warnings)")
    }

    @Test("--purpose client takes no host: exit 2")
    func clientWithHost() {
        let result = F.run(["verify", F.path("chains/rsa-client-only.pem"), "--purpose", "client", "--host", "www.example.test"] + F.anchors)
        #expect(result.status == 2)
        #expect(result.errors.contains("names no host"))
    }

    @Test("lint --client-ca: a private CA has no finding; a public root is client-anchor-public-root", SharedData.requires("realworld"))
    func lintClientAnchors() throws {
        let privateCA = F.run(["lint", "--client-ca", F.path("rsa-root.pem")])
        #expect(privateCA.status == 0)
        #expect(privateCA.output.contains("1 client CA file, no findings."), "\(privateCA.output)")
        let isrg = SharedData.url("realworld/roots/ISRG-Root-X1-96bcec06.pem").path
        let publicRoot = F.run(["lint", "--client-ca", isrg, "--client-ca", F.path("rsa-root.pem"), "--json"])
        #expect(publicRoot.status == 0, "a warning, not an error")
        let findings = try #require(try F.json(publicRoot.output)["findings"] as? [[String: Any]])
        #expect(findings.count == 1)
        #expect(findings.first?["code"] as? String == "client-anchor-public-root")
        #expect((findings.first?["message"] as? String)?.contains("ISRG Root X1") == true)
        #expect(findings.first?["path"] as? String == isrg)
    }

    @Test("lint needs a configuration or --client-ca")
    func lintNeedsSomething() {
        #expect(F.run(["lint"]).status == 2)
    }
}
