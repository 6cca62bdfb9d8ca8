import Foundation
import PincheckTestSupport
import Testing
@testable import PincheckCLI
@testable import PincheckTLS
import TrustEvaluator
@testable import TrustEvaluatorCore

/// `pincheck check` shows the SCTs a server presented (Certificates/sct, scripts/make-sct-fixtures.sh):
/// one line each in the report, an `scts` array in the JSON; captured, never judged.
@Suite("pincheck check: signed certificate timestamps", .serialized)
struct CheckSCTTests {
    typealias F = CLIFixtures

    static let logIDs: [String: String] = {
        let text = (try? String(contentsOfFile: F.path("sct/log-ids.txt"), encoding: .utf8)) ?? ""
        return Dictionary(text.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: " ", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { first, _ in first })
    }()

    /// rsa-embedded-sct (an SCT from log-rsa inside) with serverinfo-tls (an SCT from log-ec in the TLS extension).
    static func serverWithBoth() throws -> CheckTLSServer {
        // The test server takes NAME.pem and keys/NAME.key; a later -cert/-key replaces them.
        try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"], extra: [
            "-serverinfo", F.path("sct/serverinfo-tls.pem"),
            "-cert", F.path("sct/rsa-embedded-sct.pem"), "-key", F.path("sct/rsa-embedded-sct.key")])
    }

    static let arguments = ["--host", "www.example.test", "--ca-file", F.path("rsa-root.pem")] + F.at

    @Test("the report lists each SCT: source, shortened log ID, time to the millisecond, algorithm; and says they are not verified")
    func report() throws {
        let server = try Self.serverWithBoth()
        defer { server.stop() }
        let result = F.run(["check", server.target] + Self.arguments)
        #expect(result.status == 0, "SCTs change nothing about the verdict")
        let ec = try #require(Self.logIDs["log-ec"])
        let rsa = try #require(Self.logIDs["log-rsa"])
        let expected = """

            Signed certificate timestamps (captured, not verified):
              tls-extension  log \(ec.prefix(12))…  2024-03-01T12:00:00.123Z  ecdsa-with-SHA256
              certificate    log \(rsa.prefix(12))…  2024-01-01T00:00:00.456Z  sha256WithRSAEncryption

            Connection: 127.0.0.1 port \(server.port),
            """
        #expect(result.output.contains(expected), "\(result.output)")
    }

    @Test("--json: an scts array with source, version, base64 log ID and the timestamp both ways; the other fields unchanged")
    func json() throws {
        let server = try Self.serverWithBoth()
        defer { server.stop() }
        let result = F.run(["check", server.target, "--json"] + Self.arguments)
        #expect(result.status == 0)
        let json = try F.json(result.output)
        let scts = try #require(json["scts"] as? [[String: Any]])
        #expect(scts.count == 2)
        #expect(scts.map { $0["source"] as? String } == ["tls-extension", "certificate"])
        #expect(scts.map { $0["version"] as? String } == ["v1", "v1"])
        #expect(scts.map { $0["logID"] as? String } == [Self.logIDs["log-ec"], Self.logIDs["log-rsa"]])
        #expect(scts.map { $0["timestamp"] as? String } == ["2024-03-01T12:00:00.123Z", "2024-01-01T00:00:00.456Z"])
        #expect(scts.map { ($0["timestampMilliseconds"] as? NSNumber)?.uint64Value } == [1_709_294_400_123, 1_704_067_200_456])
        #expect(scts.map { $0["signatureAlgorithm"] as? String } == ["ecdsa-with-SHA256", "sha256WithRSAEncryption"])
        #expect(scts.allSatisfy { Set($0.keys) == ["source", "version", "logID", "timestamp", "timestampMilliseconds", "signatureAlgorithm"] })
        for key in ["trusted", "disposition", "reasons", "warnings", "chain", "served", "matchedPins", "connection", "status", "target"] {
            #expect(json[key] != nil, "\(key) is still there")
        }
    }

    @Test("no SCTs: no section in the report, an empty array in the JSON")
    func none() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let report = F.run(["check", server.target] + Self.arguments)
        #expect(report.status == 0)
        #expect(!report.output.contains("Signed certificate timestamps"))
        let json = try F.json(F.run(["check", server.target, "--json"] + Self.arguments).output)
        #expect((json["scts"] as? [Any])?.isEmpty == true)
    }

    @Test("a network failure has an empty scts array too")
    func networkFailure() throws {
        let refused = try CheckRawServer(.refuse)
        defer { refused.stop() }
        let result = F.run(["check", refused.target, "--json", "--timeout", "1"] + Self.arguments)
        #expect(result.status == 3)
        #expect((try F.json(result.output)["scts"] as? [Any])?.isEmpty == true)
    }

    @Test("an SCT of a version other than v1: only its source and version in the JSON; milliseconds kept exactly")
    func unknownVersion() {
        let sct = SignedCertificateTimestamp(source: .tlsExtension, version: 1, logID: [], timestampMilliseconds: 0, signatureAlgorithm: nil)
        let json = SignedCertificateTimestampJSON(sct)
        #expect(json.version == "unknown-1")
        #expect(json.logID == nil && json.timestamp == nil && json.timestampMilliseconds == nil)
        #expect(Format.timestamp(milliseconds: 1_709_294_400_007) == "2024-03-01T12:00:00.007Z")
    }

    // MARK: Judged under a CT policy (--ct): the TLS extension's SCTs reach the evaluation

    /// Two test logs of two operators, a Google v3 list of them, and a serverinfo file in which each
    /// signs rsa-leaf (x509_entry) for the TLS extension; `count` of them are sent.
    struct ExtensionSCTs {
        let folder: URL
        var list: String { folder.appendingPathComponent("logs.json").path }
        var serverinfo: String { folder.appendingPathComponent("serverinfo.pem").path }

        init(count: Int) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-check-ct-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let logs = [try TestCTLog(name: "Alpha", operatorName: "Alpha"), try TestCTLog(name: "Beta", operatorName: "Beta")]
            let day = TimeInterval(86_400)
            try TestCT.logListJSON(logs, since: TestPKI.time.addingTimeInterval(-365 * day), timestamp: TestPKI.time)
                .write(to: URL(fileURLWithPath: list))
            let leaf = TestPKI.certificate("rsa-leaf").derBytes
            let scts = try logs.prefix(count).map { try $0.sct(for: .certificate(leaf), at: TestPKI.time.addingTimeInterval(-day), source: .tlsExtension) }
            // serverinfo V2: context 0x11C0 (ClientHello, TLS 1.2 ServerHello, TLS 1.3 Certificate, not on
            // resumption), extension type 18, length, data.
            let list = SignedCertificateTimestamp.encodeList(scts)
            let entry: [UInt8] = [0x00, 0x00, 0x11, 0xC0, 0x00, 0x12, UInt8(list.count >> 8), UInt8(list.count & 0xFF)] + list
            try PEM.encode(entry, label: "SERVERINFOV2 FOR SIGNED CERTIFICATE TIMESTAMPS").write(toFile: serverinfo, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }

        /// check's arguments for Chrome's policy on the test PKI (a private anchor, so every-anchor).
        var arguments: [String] { CheckSCTTests.arguments + ["--ct", "chrome", "--ct-log-list", list, "--ct-scope", "every-anchor"] }
    }

    @Test("--ct: two verified SCTs of two operators in the TLS extension make rsa-leaf compliant; the report lists them instead of the captured table")
    func extensionSCTsCompliant() throws {
        let scts = try ExtensionSCTs(count: 2)
        defer { scts.remove() }
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"], extra: ["-serverinfo", scts.serverinfo])
        defer { server.stop() }
        let result = F.run(["check", server.target] + scts.arguments)
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(result.output.contains("Certificate Transparency (chrome policy): compliant"))
        let lines = result.output.split(separator: "\n").filter { $0.hasPrefix("  tls-extension  ") }
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.contains("verified") && $0.contains("counted") })
        #expect(!result.output.contains("captured, not verified"))
        let json = try F.json(F.run(["check", server.target, "--json"] + scts.arguments).output)
        let transparency = try #require(json["certificateTransparency"] as? [String: Any])
        #expect(transparency["compliance"] as? String == "compliant")
    }

    @Test("--ct: one SCT in the TLS extension is too few (two operators needed): ct.not-compliant, exit 1")
    func extensionSCTsTooFew() throws {
        let scts = try ExtensionSCTs(count: 1)
        defer { scts.remove() }
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"], extra: ["-serverinfo", scts.serverinfo])
        defer { server.stop() }
        let result = F.run(["check", server.target] + scts.arguments)
        #expect(result.status == 1)
        #expect(result.output.contains("ct.not-compliant"))
        #expect(result.output.split(separator: "\n").contains { $0.hasPrefix("  tls-extension  ") && $0.contains("verified") })
    }
}
