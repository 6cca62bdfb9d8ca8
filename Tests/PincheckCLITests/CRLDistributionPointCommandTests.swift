import Foundation
import PincheckTestSupport
import Testing

/// `check` and `verify` with CRLs from distribution points: the CRLs (Certificates/crl-fetch) are
/// served by a local HTTP server that the binary reaches as its http_proxy.
@Suite("pincheck: CRLs from distribution points", .serialized)
struct CRLDistributionPointCommandTests {
    typealias F = CLIFixtures
    static let rsaRoot = ["--ca-file", F.path("rsa-root.pem")]

    static func crlServer() throws -> TestCRLServer {
        let crl = Array(FileManager.default.contents(atPath: TestCertificates.path("crl-fetch/intermediate.crl")) ?? Data())
        return try TestCRLServer(["/intermediate.crl": .bytes(crl), "/unreachable.crl": .hangUp])
    }

    static func proxy(_ server: TestCRLServer) -> [String: String] {
        ["http_proxy": server.proxyURL, "HTTP_PROXY": server.proxyURL, "no_proxy": "", "NO_PROXY": ""]
    }

    @Test("check: a leaf listed in the CRL at its distribution point exits 1 with revocation.revoked and the CRL's URL")
    func checkRevoked() throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let server = try CheckTLSServer(certificate: "crl-fetch/revoked", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let human = try F.runBinary(["check", server.target, "--host", "www.example.test"] + Self.rsaRoot + F.at,
                                    environment: Self.proxy(crls))
        #expect(human.status == 1, "\(human.output)\(human.errors)")
        #expect(human.output.contains("revocation.revoked"))
        #expect(human.output.contains("0  revoked  http://crl.pincheck.test/intermediate.crl"))
        let json = try F.runBinary(["check", server.target, "--host", "www.example.test", "--json"] + Self.rsaRoot + F.at,
                                   environment: Self.proxy(crls))
        let object = try F.json(json.output)
        let verdict = object
        let reasons = try #require(verdict["reasons"] as? [[String: Any]], "\(json.output)")
        let evidence = try #require(reasons.first?["evidence"] as? [String: Any])
        #expect(reasons.first?["code"] as? String == "revocation.revoked")
        #expect(evidence["crlURL"] as? String == "http://crl.pincheck.test/intermediate.crl")
        let statuses = try #require(verdict["revocation"] as? [[String: Any]])
        #expect(statuses.first?["outcome"] as? String == "revoked")
    }

    @Test("check: a good leaf is trusted and its revocation status is shown; --revocation staple fetches nothing")
    func checkGood() throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let server = try CheckTLSServer(certificate: "crl-fetch/good", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let result = try F.runBinary(["check", server.target, "--host", "www.example.test"] + Self.rsaRoot + F.at,
                                     environment: Self.proxy(crls))
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("0  good  http://crl.pincheck.test/intermediate.crl (CRL of 2030-01-01T00:00:00Z, next 2031-01-01T00:00:00Z)"))
        #expect(crls.requests(for: "/intermediate.crl") == 1)
        let staple = try F.runBinary(["check", server.target, "--host", "www.example.test", "--revocation", "staple"] + Self.rsaRoot + F.at,
                                     environment: Self.proxy(crls))
        #expect(staple.status == 0)
        #expect(!staple.output.contains("Revocation (CRL"))
        #expect(crls.requests(for: "/intermediate.crl") == 1)
    }

    @Test("verify fetches nothing unless asked; --revocation crl refuses the revoked leaf; hard failure refuses an unreachable CRL")
    func verify() throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let revoked = TestCertificates.path("crl-fetch/revoked-chain.pem")
        let plain = try F.runBinary(["verify", revoked, "--host", "www.example.test"] + Self.rsaRoot + F.at, environment: Self.proxy(crls))
        #expect(plain.status == 0)
        #expect(crls.requests(for: "/intermediate.crl") == 0)
        let fetched = try F.runBinary(["verify", revoked, "--host", "www.example.test", "--revocation", "crl"] + Self.rsaRoot + F.at,
                                      environment: Self.proxy(crls))
        #expect(fetched.status == 1)
        #expect(fetched.output.contains("revocation.revoked"))
        let unreachable = TestCertificates.path("crl-fetch/unreachable-chain.pem")
        let soft = try F.runBinary(["verify", unreachable, "--host", "www.example.test", "--revocation", "crl"] + Self.rsaRoot + F.at,
                                   environment: Self.proxy(crls))
        #expect(soft.status == 0)
        #expect(soft.output.contains("revocation.crl-unavailable"))
        let hard = try F.runBinary(["verify", unreachable, "--host", "www.example.test", "--revocation", "crl", "--revocation-failure", "hard"]
                                   + Self.rsaRoot + F.at, environment: Self.proxy(crls))
        #expect(hard.status == 1)
    }

    @Test("a configuration's \"distributionPoints\": hard refuses an unreachable CRL; a value it does not know is bad input")
    func configuration() throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-dp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func config(_ value: String) throws -> String {
            let path = directory.appendingPathComponent("\(value).json").path
            try """
                {"version": 1, "anchors": "system", "hosts": [{"pattern": "www.example.test", "mode": "none",
                 "revocation": {"distributionPoints": "\(value)"}}]}
                """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let unreachable = TestCertificates.path("crl-fetch/unreachable-chain.pem")
        let hard = try F.runBinary(["verify", unreachable, "--host", "www.example.test", "--config", try config("hard")] + Self.rsaRoot + F.at,
                                   environment: Self.proxy(crls))
        #expect(hard.status == 1, "\(hard.output)\(hard.errors)")
        #expect(hard.output.contains("revocation.crl-unavailable"))
        let revoked = TestCertificates.path("crl-fetch/revoked-chain.pem")
        let soft = try F.runBinary(["verify", revoked, "--host", "www.example.test", "--config", try config("soft")] + Self.rsaRoot + F.at,
                                   environment: Self.proxy(crls))
        #expect(soft.status == 1)
        #expect(soft.output.contains("revocation.revoked"))
        let bad = try F.runBinary(["verify", revoked, "--host", "www.example.test", "--config", try config("maybe")] + Self.rsaRoot + F.at)
        #expect(bad.status == 2)
        #expect(bad.errors.contains("distributionPoints"))
    }

    @Test("--crl-cache: a folder that is missing, not a folder or writable by others is bad input, said before anything is fetched")
    func crlCacheFolder() throws {
        let crls = try Self.crlServer()
        defer { crls.stop() }
        let revoked = TestCertificates.path("crl-fetch/revoked-chain.pem")
        let open = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-crl-cache-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: open) }
        chmod(open, 0o777)
        for (folder, words) in [("/dev/null", "must be a folder"), ("\(open)/missing", "does not exist"), (open, "written by its group or by others")] {
            let result = try F.runBinary(["verify", revoked, "--host", "www.example.test", "--revocation", "crl", "--crl-cache", folder]
                                         + Self.rsaRoot + F.at, environment: Self.proxy(crls))
            #expect(result.status == 2, "\(folder): \(result.output)\(result.errors)")
            #expect(result.errors.contains(words), "\(result.errors)")
        }
        #expect(crls.requests(for: "/intermediate.crl") == 0)
        chmod(open, 0o700)
        let kept = try F.runBinary(["verify", revoked, "--host", "www.example.test", "--revocation", "crl", "--crl-cache", open]
                                   + Self.rsaRoot + F.at, environment: Self.proxy(crls))
        #expect(kept.status == 1)
        #expect(kept.output.contains("revocation.revoked"))
    }
}
