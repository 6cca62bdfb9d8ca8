import Foundation
import PincheckTestSupport
import Testing
import TrustEvaluator

/// The recipes of the README and the guides as programs (`Examples/`), run against servers on 127.0.0.1 with the
/// right and a wrong pin (or anchor). The gRPC client is run in TrustEvaluatorGRPCTests and the
/// URLSession router in ServerTrustTests, beside their servers.
@Suite("example programs do what the README and the guides say", .serialized)
struct ExampleProgramTests {
    static func path(_ name: String) -> String { TestCertificates.path(name) }
    /// The SPKI pin of a test certificate (`NAME.pem`), as a program takes it.
    static func pin(_ name: String) throws -> String { try Certificate.load(contentsOf: path("\(name).pem"))[0].publicKeyPin.description }
    static let intermediatePin = "sha256/0/Kfq9agxMXTZjiCfrXawIsoOKbW2BBcM89zptGOzbU="
    static let attackerRootPin = "sha256/PfPNdZQ+3Faqdsl3dUcAsgNWn+4FwLY+yrh2n9xFrEQ="
    static let attackerLeafPin = "sha256/mRexJLY7kEZscS2W5ZTNZpwY1iIwwe+iCQJOAmW3lJg="

    @Test("evaluate-chain (the library in ten lines): right pin → trusted; wrong pin → pin.mismatch; bad pin → exit 2")
    func evaluateChain() throws {
        let chain = Self.path("chains/rsa-good.pem"), root = Self.path("rsa-root.pem")
        let right = try ExampleProgram.run("evaluate-chain", [chain, "www.example.test", Self.intermediatePin, root])
        #expect(right.status == 0 && right.output.contains("trusted: www.example.test"), "\(right.output)")
        let wrong = try ExampleProgram.run("evaluate-chain", [chain, "www.example.test", Self.attackerRootPin, root])
        #expect(wrong.status == 1 && wrong.output.hasPrefix("pin.mismatch "), "\(wrong.output)")
        let bad = try ExampleProgram.run("evaluate-chain", [chain, "www.example.test", "sha256/not-a-pin", root])
        #expect(bad.status == 2 && bad.output.contains("is not valid base64"), "\(bad.output)")
    }

    @Test("afnetworking-port: the pinned certificate in the folder → trusted; another → pin.mismatch; no anchor step → the private CA is unknown")
    func afnetworkingPort() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-afn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, certificate) in [("right", "rsa-intermediate"), ("wrong", "attacker-root")] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.path("\(certificate).pem"), toPath: folder.appendingPathComponent("\(name)/\(certificate).cer").path)
        }
        let chain = Self.path("chains/rsa-good.pem")
        let right = try ExampleProgram.run("afnetworking-port", [chain, "www.example.test", folder.appendingPathComponent("right").path, Self.path("rsa-root.pem")])
        #expect(right.status == 0, "\(right.output)")
        #expect(right.output.contains("trusted: www.example.test, pinned certificate at depth 1"))
        let wrong = try ExampleProgram.run("afnetworking-port", [chain, "www.example.test", folder.appendingPathComponent("wrong").path, Self.path("rsa-root.pem")])
        #expect(wrong.status == 1)
        #expect(wrong.output.contains("pin.mismatch"), "\(wrong.output)")
        // Without the anchor step the system store judges, as iOS's would: a private CA is unknown.
        let unanchored = try ExampleProgram.run("afnetworking-port", [chain, "www.example.test", folder.appendingPathComponent("right").path])
        #expect(unanchored.status == 1)
        #expect(unanchored.output.contains("chain.unknown-issuer") || unanchored.output.contains("chain.untrusted-root"), "\(unanchored.output)")
        let wrongHost = try ExampleProgram.run("afnetworking-port", [chain, "evil.example.test", folder.appendingPathComponent("right").path, Self.path("rsa-root.pem")])
        #expect(wrongHost.status == 1)
        #expect(wrongHost.output.contains("host.mismatch"), "\(wrongHost.output)")
    }

    @Test("nio-pinned-client: right pin → connected; wrong pin → refused with pin.mismatch")
    func nioPinnedClient() throws {
        let server = try TestTLSServer(certificate: "rsa-ip", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let port = String(server.port)
        let right = try ExampleProgram.run("nio-pinned-client", ["localhost", port, Self.intermediatePin, Self.path("rsa-root.pem")])
        #expect(right.status == 0, "\(right.output)")
        #expect(right.output.contains("useCredential") && right.output.contains("pinned connection to localhost:\(port) succeeded"))
        let wrong = try ExampleProgram.run("nio-pinned-client", ["localhost", port, Self.attackerRootPin, Self.path("rsa-root.pem")])
        #expect(wrong.status == 1, "\(wrong.output)")
        #expect(wrong.output.contains("cancelAuthenticationChallenge") && wrong.output.contains("pin.mismatch"))
    }

    @Test("trust-manager-client: the host's pins decide; a wrong pin and an unlisted host are refused with their reasons, and the report is written")
    func trustManagerClient() throws {
        let server = try TestTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-tm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func configuration(_ name: String, pins: [String], reportURI: Bool = false) throws -> String {
            let path = folder.appendingPathComponent(name).path
            let reports = reportURI ? #", "reportURIs": ["https://reports.example.test/pins"]"# : ""
            let pinList = pins.map { "\"\($0)\"" }.joined(separator: ", ")
            try #"{ "version": 1, "anchors": ["\#(Self.path("rsa-root.pem"))"], "hosts": [ { "pattern": "www.example.test", "pins": [\#(pinList)]\#(reports) } ] }"#
                .write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let good = try configuration("good.json", pins: [Self.intermediatePin, Self.attackerRootPin])
        let bad = try configuration("bad.json", pins: [Self.attackerLeafPin, Self.attackerRootPin], reportURI: true)
        let port = String(server.port)

        let right = try ExampleProgram.run("trust-manager-client", [good, "www.example.test", port, "127.0.0.1"], in: folder)
        #expect(right.status == 0, "\(right.output)")
        #expect(right.output.contains("useCredential (hostPolicy, policy www.example.test)"))
        let wrong = try ExampleProgram.run("trust-manager-client", [bad, "www.example.test", port, "127.0.0.1"], in: folder)
        #expect(wrong.status == 1, "\(wrong.output)")
        #expect(wrong.output.contains("refused: pin.mismatch"))
        let report = try String(contentsOfFile: folder.appendingPathComponent("pin-reports.jsonl").path, encoding: .utf8)
        #expect(report.contains("\"hostname\":\"www.example.test\"") && report.contains(Self.attackerLeafPin.dropFirst(7)), "\(report)")
        let unlisted = try ExampleProgram.run("trust-manager-client", [good, "example.test", port, "127.0.0.1"], in: folder)
        #expect(unlisted.status == 1, "\(unlisted.output)")
        #expect(unlisted.output.contains("refused: policy.host-not-listed"))
    }

    #if AsyncHTTPClient  // the examples on AsyncHTTPClient need the trait (scripts/test.sh enables all)
    @Test("ahc-pinned-client: the right leaf pin → HTTP 200; a wrong pin → refused with pin.mismatch; another root → the handshake fails; an intermediate's pin with the root's → refused before connecting")
    func asyncHTTPClientPinned() throws {
        let server = try TestTLSServer(certificate: "rsa-ip", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let url = "https://localhost:\(server.port)/", root = Self.path("rsa-root.pem")
        let right = try ExampleProgram.run("ahc-pinned-client", [url, root, try Self.pin("rsa-ip")])
        #expect(right.status == 0, "\(right.output)")
        #expect(right.output.contains("HTTP 200"))
        let wrong = try ExampleProgram.run("ahc-pinned-client", [url, root, try Self.pin("rsa-leaf-rotated")])
        #expect(wrong.status == 1, "\(wrong.output)")
        #expect(wrong.output.contains("refused: pin.mismatch"))
        let otherRoot = try ExampleProgram.run("ahc-pinned-client", [url, Self.path("attacker-root.pem")])
        #expect(otherRoot.status == 1, "\(otherRoot.output)")
        #expect(otherRoot.output.contains("CERTIFICATE_VERIFY_FAILED"))
        let mixed = try ExampleProgram.run("ahc-pinned-client", [url, root, try Self.pin("rsa-intermediate"), try Self.pin("rsa-root")])
        #expect(mixed.status == 2, "\(mixed.output)")
        #expect(mixed.output.contains("pins-at-several-depths"))
    }

    @Test("openapi-pinned-client (generated client, AsyncHTTPClientTransport): the right pin → HTTP 200; a wrong pin → ClientError carrying pin.mismatch")
    func openAPIPinned() throws {
        let server = try TestTLSServer(certificate: "rsa-ip", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let url = "https://localhost:\(server.port)/", root = Self.path("rsa-root.pem")
        let right = try ExampleProgram.run("openapi-pinned-client", [url, root, try Self.pin("rsa-ip")])
        #expect(right.status == 0, "\(right.output)")
        #expect(right.output.contains("HTTP 200"))
        let wrong = try ExampleProgram.run("openapi-pinned-client", [url, root, try Self.pin("rsa-leaf-rotated")])
        #expect(wrong.status == 1, "\(wrong.output)")
        #expect(wrong.output.contains("refused: pin.mismatch"))
    }
    #endif
}
