import Foundation
import Testing
import PincheckOpenSSL
@testable import PincheckCLI
import TrustEvaluator

/// `pincheck check` end to end against `openssl s_server` and raw sockets on loopback.
@Suite("pincheck check", .serialized)
struct CheckCommandTests {
    typealias F = CLIFixtures

    static let rsaRoot = ["--ca-file", F.path("rsa-root.pem")]
    static let intermediate = ["rsa-intermediate"]

    static func pin(_ name: String) throws -> String {
        try #require(try PinsCommandTests.referencePins()[name])
    }

    @Test("a good chain with its intermediate is trusted, and the report shows both paths with pins")
    func trusted() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate)
        defer { server.stop() }
        let result = F.run(["check", server.target, "--host", "www.example.test"] + Self.rsaRoot + F.at)
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("TRUSTED  \(server.target) for www.example.test at 2030-06-01T00:00:00Z"))
        #expect(result.output.contains("Verified path (ends at a trust anchor):"))
        #expect(result.output.contains("Served chain (2 certificates, as sent):"))
        #expect(result.output.contains(try Self.pin("rsa-leaf")))
        #expect(result.output.contains("issuer: CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests"))
        #expect(result.output.contains("25415 days left"))
        #expect(result.output.contains("ocsp.not-stapled"))
        #expect(!result.output.contains("served.incomplete-chain"))
        #expect(!result.output.contains("\u{1B}["), "no colour when not on a terminal")
    }

    @Test("--config: the host's pins decide, report-only allows, unlisted hosts are rejected")
    func config() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate)
        defer { server.stop() }
        let path = try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["CERTS/rsa-root.pem"],
              "hosts": [ { "pattern": "www.example.test", "pins": ["\(try Self.pin("rsa-intermediate"))", "\(try Self.pin("ec-intermediate"))"] },
                         { "pattern": "example.test", "enforce": false, "pins": ["\(try Self.pin("attacker-root"))"] } ] }
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let pinned = F.run(["check", server.target, "--host", "www.example.test", "--config", path] + F.at)
        #expect(pinned.status == 0, "\(pinned.output)\(pinned.errors)")
        let reportOnly = F.run(["check", server.target, "--host", "example.test", "--config", path, "--json"] + F.at)
        #expect(reportOnly.status == 0)
        let json = try F.json(reportOnly.output)
        #expect(json["trusted"] as? Bool == true)
        #expect((json["reasons"] as? [[String: Any]])?.isEmpty == true, "report-only failures do not count")
        #expect((json["reportOnly"] as? [[String: Any]])?.first?["code"] as? String == "pin.mismatch")
        #expect(json["disposition"] as? String == "useCredential")
        #expect(json["coverage"] as? String == "hostPolicy")
        // The human headline says a report-only set failed (it could never print before).
        let human = F.run(["check", server.target, "--host", "example.test", "--config", path] + F.at)
        #expect(human.output.hasPrefix("TRUSTED (report-only pin failure)  "), "\(human.output)")
        // verify and check print through one report: the failure that did not count is shown too.
        #expect(human.output.contains("Recorded failures (report-only):\n  pin.mismatch  "), "\(human.output)")
        let unlisted = F.run(["check", server.target, "--host", "api.example.test", "--config", path] + F.at)
        #expect(unlisted.status == 1)
        #expect(unlisted.output.contains("policy.host-not-listed"))
    }

    @Test("--report-to: a report-only mismatch is written as one RFC 7469 JSON line; a match writes nothing")
    func reportTo() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate)
        defer { server.stop() }
        let path = try ConfigAndLintCommandTests.write("""
            { "version": 1, "anchors": ["CERTS/rsa-root.pem"],
              "hosts": [ { "pattern": "www.example.test", "pins": ["\(try Self.pin("rsa-intermediate"))", "\(try Self.pin("ec-intermediate"))"],
                           "reportURIs": ["https://reports.example.test/pins"] },
                         { "pattern": "example.test", "enforce": false, "pins": ["\(try Self.pin("attacker-root"))"],
                           "reportURIs": ["https://reports.example.test/pins"] } ] }
            """)
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-reports-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: reports) }
        let matched = F.run(["check", server.target, "--host", "www.example.test", "--config", path, "--report-to", reports] + F.at)
        #expect(matched.status == 0, "\(matched.output)\(matched.errors)")
        #expect(!FileManager.default.fileExists(atPath: reports), "a match is not reported")
        let reportOnly = F.run(["check", server.target, "--host", "example.test", "--config", path, "--report-to", reports] + F.at)
        #expect(reportOnly.status == 0, "\(reportOnly.output)\(reportOnly.errors)")
        let lines = try String(contentsOfFile: reports, encoding: .utf8).split(separator: "\n")
        try #require(lines.count == 1)
        let report = try F.json(String(lines[0]))
        #expect(report["hostname"] as? String == "example.test")
        #expect(report["port"] as? Int == Int(server.port))
        #expect(report["known-pins"] as? [String] == ["pin-sha256=\"\(try Self.pin("attacker-root").dropFirst("sha256/".count))\""])
    }

    @Test("a pin that matches the intermediate is reported as matched at depth 1")
    func pinMatched() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate)
        defer { server.stop() }
        let pin = try Self.pin("rsa-intermediate")
        let result = F.run(["check", server.target, "--host", "www.example.test", "--pin", pin] + Self.rsaRoot + F.at)
        #expect(result.status == 0)
        #expect(result.output.contains("Pins matched:\n  \(pin)  depth 1"))
        #expect(result.output.contains("\(pin) ✓ pinned"))
        #expect(result.output.contains("pin.no-backup"))
    }

    @Test("a pin mismatch exits 1 with pin.mismatch and the pins seen, in JSON")
    func pinMismatch() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate)
        defer { server.stop() }
        let wrong = try Self.pin("attacker-leaf")
        let result = F.run(["check", server.target, "--host", "www.example.test", "--pin", wrong, "--json"] + Self.rsaRoot + F.at)
        #expect(result.status == 1)
        let json = try F.json(result.output)
        #expect(json["trusted"] as? Bool == false)
        #expect(json["status"] as? String == "not-trusted")
        #expect(json["disposition"] as? String == "cancelAuthenticationChallenge")
        let reasons = try #require(json["reasons"] as? [[String: Any]])
        #expect(reasons.map { $0["code"] as? String } == ["pin.mismatch"])
        let served = try #require(json["served"] as? [[String: Any]])
        #expect(served.map { $0["spkiSHA256"] as? String } == [try Self.pin("rsa-leaf"), try Self.pin("rsa-intermediate")])
        let connection = try #require(json["connection"] as? [String: Any])
        #expect(connection["port"] as? Int == Int(server.port))
        #expect((connection["protocol"] as? String)?.hasPrefix("TLSv1.") == true)
        #expect(connection["serverName"] as? String == "www.example.test")
        #expect(connection["stapledOCSP"] as? Bool == false)
        // The group both ends prefer, by their defaults: x25519 on 3.0; on 3.5 (both ends, in the
        // Debian 13 leg) the hybrid X25519MLKEM768.
        #expect(connection["keyExchangeGroup"] as? String == Self.defaultGroup, "\(connection)")
    }

    @Test("wrong host, expired and self-signed servers are not trusted, each for its own reason",
          arguments: [
              ("rsa-wrong-host", ["rsa-intermediate"], "host.mismatch"),
              ("rsa-expired", ["rsa-intermediate"], "chain.expired"),
              ("self-signed", [], "chain.self-signed"),
          ])
    func rejected(certificate: String, chain: [String], code: String) throws {
        let server = try CheckTLSServer(certificate: certificate, chain: chain)
        defer { server.stop() }
        let result = F.run(["check", server.target, "--host", "www.example.test"] + Self.rsaRoot + F.at)
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("NOT TRUSTED"))
        #expect(result.output.contains("Reasons:\n  \(code)"))
    }

    @Test("a server that sends only its leaf is an unknown issuer, and the report says the chain was served incomplete")
    func incompleteChain() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf")
        defer { server.stop() }
        let result = F.run(["check", server.target, "--host", "www.example.test", "--json"] + Self.rsaRoot + F.at)
        #expect(result.status == 1)
        let json = try F.json(result.output)
        let reasons = try #require(json["reasons"] as? [[String: Any]])
        #expect(reasons.contains { $0["code"] as? String == "chain.unknown-issuer" })
        let warnings = try #require(json["warnings"] as? [[String: Any]])
        #expect(warnings.contains { $0["code"] as? String == "served.incomplete-chain" })
        #expect((json["served"] as? [Any])?.count == 1)
    }

    @Test("IPv6 loopback: [::1]:PORT connects over IPv6 and the IP SAN ::1 is checked")
    func ipv6() throws {
        let server = try CheckTLSServer(certificate: "rsa-ip", chain: Self.intermediate, ipv6: true)
        defer { server.stop() }
        let result = F.run(["check", server.target, "--json"] + Self.rsaRoot + F.at)
        #expect(result.status == 0)
        let json = try F.json(result.output)
        #expect(json["host"] as? String == "::1")
        #expect(json["hostChecked"] as? Bool == true)
        let connection = try #require(json["connection"] as? [String: Any])
        #expect(connection["address"] as? String == "::1")
        #expect(connection["serverName"] == nil, "an IP address is never sent as SNI")
    }

    @Test("SNI selects between two certificates on one port")
    func sni() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate,
            extra: ["-servername", "other.example.test", "-cert2", F.path("rsa-wrong-host.pem"), "-key2", F.path("keys/rsa-wrong-host.key")])
        defer { server.stop() }
        let plain = F.run(["check", server.target, "--host", "www.example.test", "--json"] + Self.rsaRoot + F.at)
        let other = F.run(["check", server.target, "--host", "www.example.test", "--servername", "other.example.test", "--json"] + Self.rsaRoot + F.at)
        let plainServed = try #require(try F.json(plain.output)["served"] as? [[String: Any]])
        let otherServed = try #require(try F.json(other.output)["served"] as? [[String: Any]])
        #expect(plainServed.first?["subject"] as? String == "CN=www.example.test,O=Pincheck Tests")
        #expect(otherServed.first?["subject"] as? String == "CN=other.example.test,O=Pincheck Tests")
        #expect(plain.status == 0)
        #expect(other.status == 1, "the certificate chosen for other.example.test does not carry www.example.test")
    }

    @Test("network failures exit 3 with distinct codes, and never hang",
          arguments: [(CheckRawServer.Behaviour.refuse, "network.refused"),
                      (.silent, "network.timeout"),
                      (.plainHTTP, "tls.not-tls")])
    func networkFailures(behaviour: CheckRawServer.Behaviour, code: String) throws {
        let server = try CheckRawServer(behaviour)
        defer { server.stop() }
        let started = ContinuousClock.now
        let result = F.run(["check", server.target, "--timeout", "1", "--json"] + Self.rsaRoot)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(result.status == 3)
        let json = try F.json(result.output)
        #expect(json["status"] as? String == "network-error")
        #expect(json["trusted"] as? Bool == false)
        let reasons = try #require(json["reasons"] as? [[String: Any]])
        #expect(reasons.first?["code"] as? String == code)
    }

    @Test("a host name that does not resolve is a DNS failure, exit 3")
    func dns() {
        let result = F.run(["check", "no-such-host.invalid:443", "--timeout", "2"] + Self.rsaRoot)
        #expect(result.status == 3)
        #expect(result.output.contains("network.dns-failure"))
    }

    @Test("several hosts: the exit code is the worst (3 over 1 over 0)")
    func worst() throws {
        let good = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate)
        defer { good.stop() }
        let refused = try CheckRawServer(.refuse)
        defer { refused.stop() }
        let result = F.run(["check", good.target, refused.target, "--host", "www.example.test", "--timeout", "1"] + Self.rsaRoot + F.at)
        #expect(result.status == 3)
        #expect(result.output.contains("TRUSTED  \(good.target)"))
        #expect(result.output.contains("NETWORK ERROR  \(refused.target)"))
    }

    @Test("bad input exits 2: no host, a bad port, a bad timeout", arguments: [
        ["check"], ["check", "example.test:0"], ["check", "example.test:99999"], ["check", "[::1"], ["check", "a.test", "--timeout", "0"],
    ])
    func badInput(arguments: [String]) {
        #expect(F.run(arguments).status == 2)
    }

    /// The TLS 1.3 group that the linked OpenSSL's client and the same system's `openssl s_server`
    /// agree on by default: OpenSSL 3.5 offers and prefers the hybrid post-quantum group.
    static let defaultGroup = OpenSSLLibrary.isAtLeast(3, 5) ? "X25519MLKEM768" : "x25519"

    /// The whole human report for a fixed scenario, with the port and the pins (which change when the
    /// test PKI is regenerated) replaced by names.
    @Test("golden: the human report of a trusted check with a matching pin")
    func golden() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate)
        defer { server.stop() }
        let result = F.run(["check", server.target, "--host", "www.example.test", "--pin", try Self.pin("rsa-intermediate"),
                            "--pin", try Self.pin("rsa-leaf-rotated")] + Self.rsaRoot + F.at)
        #expect(result.status == 0)
        var text = result.output
            .replacingOccurrences(of: ":\(server.port) ", with: ":PORT ")
            .replacingOccurrences(of: "port \(server.port),", with: "port PORT,")
        for (name, pin) in try PinsCommandTests.referencePins() {
            text = text.replacingOccurrences(of: pin, with: "<\(name)>")
        }
        let expected = """
            TRUSTED  127.0.0.1:PORT for www.example.test at 2030-06-01T00:00:00Z

            Warnings:
              revocation.crl-not-covered  no revocation status for the certificate at depth 0 (CN=www.example.test,O=Pincheck Tests) from its CRL distribution points: the certificate names no http CRL distribution point (soft failure: accepted without a revocation status)
              ocsp.not-stapled  no stapled OCSP response: clients must fetch revocation status themselves, or go without

            Revocation (CRL distribution points):
              0  not-covered  no distribution point: the certificate names no http CRL distribution point

            Pins matched:
              <rsa-intermediate>  depth 1  CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests

            Verified path (ends at a trust anchor):
              0  CN=www.example.test,O=Pincheck Tests                           RSA 2048 key, expires 2099-12-31 (25415 days left)
                 issuer: CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests  <rsa-leaf>
              1  CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests          RSA 2048 key, expires 2100-01-01 (25416 days left)
                 issuer: CN=Pincheck Test RSA Root CA,O=Pincheck Tests          <rsa-intermediate> ✓ pinned
              2  CN=Pincheck Test RSA Root CA,O=Pincheck Tests                  RSA 4096 key, expires 2100-01-01 (25416 days left)
                 issuer: CN=Pincheck Test RSA Root CA,O=Pincheck Tests          <rsa-root>
            Anchor: private, in no root program
              root-program data: \(RootPrograms.bundled.sources.map(\.description).joined(separator: "; "))

            Served chain (2 certificates, as sent):
              0  CN=www.example.test,O=Pincheck Tests                           RSA 2048 key, expires 2099-12-31 (25415 days left)
                 issuer: CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests  <rsa-leaf>
              1  CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests          RSA 2048 key, expires 2100-01-01 (25416 days left)
                 issuer: CN=Pincheck Test RSA Root CA,O=Pincheck Tests          <rsa-intermediate>

            Connection: 127.0.0.1 port PORT, SNI www.example.test, TLSv1.3 TLS_AES_256_GCM_SHA384, group \(Self.defaultGroup), ALPN none, OCSP not stapled

            """
        #expect(text == expected)
    }

    @Test("the binary: check exits 0 on a trusted server and 3 on a refused port")
    func binary() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: Self.intermediate)
        defer { server.stop() }
        let trusted = try F.runBinary(["check", server.target, "--host", "www.example.test"] + Self.rsaRoot + F.at)
        #expect(trusted.status == 0)
        #expect(trusted.output.hasPrefix("TRUSTED"))
        let refused = try CheckRawServer(.refuse)
        defer { refused.stop() }
        let failed = try F.runBinary(["check", refused.target, "--timeout", "1"] + Self.rsaRoot)
        #expect(failed.status == 3)
    }
}

/// Stapled OCSP: a "good" response made with `openssl ocsp` for the leaf, and its absence.
@Suite("pincheck check: stapled OCSP", .serialized)
struct CheckOCSPTests {
    typealias F = CLIFixtures

    /// Signs a response for `rsa-leaf` with the intermediate's key, as its issuer would.
    static func goodResponse() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-ocsp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let leaf = try Certificate.load(contentsOf: F.path("rsa-leaf.pem"))[0]
        let index = "V\t991231235959Z\t\t\(leaf.serialNumber.uppercased())\tunknown\t/O=Pincheck Tests/CN=www.example.test\n"
        try index.write(to: directory.appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
        let response = directory.appendingPathComponent("response.der")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "ocsp", "-index", directory.appendingPathComponent("index.txt").path,
                             "-rsigner", F.path("rsa-intermediate.pem"), "-rkey", F.path("keys/rsa-intermediate.key"),
                             "-CA", F.path("rsa-intermediate.pem"), "-issuer", F.path("rsa-intermediate.pem"),
                             "-cert", F.path("rsa-leaf.pem"), "-respout", response.path, "-ndays", "1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return response
    }

    @Test("a stapled good response is shown, and the not-stapled warning goes away")
    func stapled() throws {
        let response = try Self.goodResponse()
        defer { try? FileManager.default.removeItem(at: response.deletingLastPathComponent()) }
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"], extra: ["-status_file", response.path])
        defer { server.stop() }
        let result = F.run(["check", server.target, "--host", "www.example.test", "--ca-file", F.path("rsa-root.pem")] + F.at)
        #expect(result.status == 0)
        #expect(result.output.contains("OCSP stapled (good, "))
        #expect(!result.output.contains("ocsp.not-stapled"))
        let json = try F.json(F.run(["check", server.target, "--host", "www.example.test", "--json", "--ca-file", F.path("rsa-root.pem")] + F.at).output)
        let connection = try #require(json["connection"] as? [String: Any])
        #expect(connection["stapledOCSP"] as? Bool == true)
        #expect(connection["stapledOCSPStatus"] as? String == "good")
    }
}
