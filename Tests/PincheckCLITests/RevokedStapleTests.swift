import Foundation
import Testing
import TrustEvaluator

/// A server staples a *revoked* OCSP response for a leaf issued directly by the root: the
/// response's issuer is the trust anchor, which the server never sends. Every route that has the
/// staple judges it against the verified path and refuses the chain (exit 1).
@Suite("A revoked stapled OCSP response refuses the chain on every route")
struct RevokedStapleTests {
    typealias F = CLIFixtures

    static func server() throws -> CheckTLSServer {
        try CheckTLSServer(certificate: "revocation/rsa-direct-leaf",
                           extra: ["-status_file", F.path("revocation/ocsp-direct-revoked.der")])
    }

    static var rootPin: String {
        get throws { try Certificate.load(contentsOf: F.path("rsa-root.pem"))[0].publicKeyPin.description }
    }

    @Test("command-line policy, no pinning and public-key pinning: exit 1 with revocation.revoked", arguments: [false, true])
    func commandLine(pinned: Bool) throws {
        let server = try Self.server()
        defer { server.stop() }
        let pins = pinned ? ["--mode", "public-key", "--pin", try Self.rootPin] : []
        let result = F.run(["check", server.target, "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem"), "--json"] + pins + F.at)
        #expect(result.status == 1, "\(result.output)\(result.errors)")
        let json = try F.json(result.output)
        #expect(json["trusted"] as? Bool == false)
        let codes = (json["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
        #expect(codes.contains("revocation.revoked"), "\(codes)")
    }

    /// The issue's reproduction: AFNetworking's most common configuration, the leaf itself pinned
    /// as a certificate. The pin re-anchors the path on the leaf; the staple is still judged on
    /// the path to the anchors.
    @Test("certificate mode with the leaf pinned: exit 1 with revocation.revoked, as in the other modes")
    func certificatePinnedLeaf() throws {
        let server = try Self.server()
        defer { server.stop() }
        let result = F.run(["check", server.target, "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem"),
                            "--mode", "certificate", "--pin-cert", F.path("revocation/rsa-direct-leaf.pem"), "--json"] + F.at)
        #expect(result.status == 1, "\(result.output)\(result.errors)")
        let codes = ((try F.json(result.output))["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
        #expect(codes.contains("revocation.revoked"), "\(codes)")
    }

    /// `verify` takes the staple and CRLs as files: the same answer per row as `check`.
    @Test("verify: every pinning mode × revoked staple, must-staple without staple, CRL listing the leaf → exit 1", arguments: [
        ["--mode", "none"], ["--mode", "public-key", "--pin-cert", "LEAF"], ["--mode", "public-key", "--pin-cert", "rsa-root.pem"],
        ["--mode", "certificate", "--pin-cert", "LEAF"], ["--mode", "certificate", "--pin-cert", "rsa-intermediate.pem"],
        ["--mode", "certificate", "--pin-cert", "LEAF", "--allow-invalid-certificates"],
    ])
    func verifyEveryMode(mode: [String]) throws {
        let rows: [(chain: String, leaf: String, extra: [String], code: String)] = [
            ("chains/rsa-good.pem", "rsa-leaf.pem", ["--staple", F.path("revocation/ocsp-revoked.der")], "revocation.revoked"),
            ("revocation/must-staple-chain.pem", "revocation/rsa-must-staple.pem", [], "revocation.staple-missing"),
            ("chains/rsa-good.pem", "rsa-leaf.pem", ["--crl", F.path("revocation/crl-intermediate-revokes-leaf.pem")], "revocation.revoked"),
        ]
        for row in rows {
            let policy = mode.map { $0 == "LEAF" ? F.path(row.leaf) : ($0.hasSuffix(".pem") ? F.path($0) : $0) }
            let result = F.run(["verify", F.path(row.chain), "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem"), "--json"]
                               + policy + row.extra + F.at)
            #expect(result.status == 1, "\(row.chain) \(row.extra) \(mode): \(result.output)\(result.errors)")
            let codes = ((try? F.json(result.output))?["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
            #expect(codes.contains(row.code), "\(row.chain) \(mode): \(codes)")
        }
    }

    @Test("the report names the revoked status on the connection line and shows the path that was built and refused")
    func report() throws {
        let server = try Self.server()
        defer { server.stop() }
        let leafPin = try Certificate.load(contentsOf: F.path("revocation/rsa-direct-leaf.pem"))[0].publicKeyPin.description
        let result = F.run(["check", server.target, "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem"), "--pin", leafPin] + F.at)
        #expect(result.status == 1, "\(result.output)\(result.errors)")
        // The root that issued the leaf is not served: the claim is found by the leaf's serial number.
        #expect(result.output.contains("OCSP stapled (revoked (by the leaf's serial number; its issuer was not served)"), "\(result.output)")
        #expect(!result.output.contains("cannot be looked up"))
        #expect(result.output.contains("Path built (ends at a trust anchor), refused for the reasons above:"))
        #expect(result.output.contains("\(leafPin) ✓ pinned"), "the pin matched the path; the staple refused it")
        #expect(!result.output.contains("none could be built"))
    }

    @Test("--config: exit 1 with revocation.revoked")
    func configuration() throws {
        let server = try Self.server()
        defer { server.stop() }
        let path = try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["CERTS/rsa-root.pem"],
              "hosts": [ { "pattern": "www.example.test", "pins": ["\(try Self.rootPin)", "sha256/\(String(repeating: "A", count: 43))="] } ] }
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = F.run(["check", server.target, "--host", "www.example.test", "--config", path] + F.at)
        #expect(result.status == 1, "\(result.output)\(result.errors)")
        #expect(result.output.contains("revocation.revoked"))
    }

    @Test("the same leaf without a staple is trusted: the refusal is the staple's")
    func withoutStaple() throws {
        let server = try CheckTLSServer(certificate: "revocation/rsa-direct-leaf")
        defer { server.stop() }
        let result = F.run(["check", server.target, "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem")] + F.at)
        #expect(result.status == 0, "\(result.output)\(result.errors)")
    }

    @Test("the library: Evaluator judges the staple against the path it verified")
    func library() throws {
        let leaf = try Certificate.load(contentsOf: F.path("revocation/rsa-direct-leaf.pem"))
        let root = try Certificate.load(contentsOf: F.path("rsa-root.pem"))
        let staple = Array(try Data(contentsOf: URL(fileURLWithPath: F.path("revocation/ocsp-direct-revoked.der"))))
        let evaluator = Evaluator(policy: TrustPolicy(anchors: try TrustAnchors(certificates: root)))
        let at = Date(timeIntervalSince1970: 1_906_502_400)
        let verdict = try evaluator.evaluate(leaf, host: "www.example.test", at: at, stapledOCSPResponse: staple)
        #expect(verdict.failures.map(\.code) == [.revoked])
        #expect(try evaluator.evaluate(leaf, host: "www.example.test", at: at, stapledOCSPResponse: nil).isTrusted)
    }
}
