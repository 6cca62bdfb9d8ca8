import Foundation
import PincheckTestSupport
import Testing
@testable import PincheckCLI

/// The wrong answers of the third hardening round: repeated audit names, key material in host
/// lists, encrypted keys for plan.
@Suite("host lists and keys: never printed, read once, bounded", .serialized)
struct HostListAndKeyHandlingTests {
    typealias F = CLIFixtures

    static func inFolder<T>(_ body: (String) throws -> T) throws -> T { try SigningAndConfigurationFileTests.inFolder(body) }

    /// A key's text in the shapes an accident produces, none with a clean PEM header at the start
    /// of a line.
    static func keyShapes(in folder: String) throws -> [(name: String, text: String, secrets: [String])] {
        let key = folder + "/k.pem"
        #expect(F.run(["keygen", "--out", key]).status == 0)
        let rsa = folder + "/rsa.pem"
        #expect(try OpenSSLCLI.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsa]) == 0)
        let pem = try String(contentsOfFile: rsa, encoding: .utf8)
        let body = pem.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") }
        let oneLine = body.joined()
        // Any 20 characters of the key's base64 would give part of it away.
        let secrets = body.map { String($0.prefix(20)) } + [String(oneLine.suffix(20))]
        let small = try String(contentsOfFile: key, encoding: .utf8)
        let smallSecrets = small.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") }
        return [
            ("a PEM key after a byte order mark", "\u{FEFF}" + pem, secrets),
            ("a key as one base64 line", oneLine + "\n", secrets),
            ("a key's body without its header", body.joined(separator: "\n") + "\n", secrets),
            ("a near-miss header", pem.replacingOccurrences(of: "-----BEGIN PRIVATE KEY-----", with: "-----BEGIN RSA PRIVATE KEY"), secrets),
            ("an Ed25519 key after a BOM", "\u{FEFF}" + small, smallSecrets),
        ]
    }

    @Test("scan and audit --hosts never print any part of a key, whatever its shape, in text or JSON")
    func keyShapesNeverEchoed() throws {
        try Self.inFolder { folder in
            let config = folder + "/c.json"
            try #"{ "version": 1, "hosts": [ { "pattern": "*.example.test", "mode": "none" } ] }"#.write(toFile: config, atomically: true, encoding: .utf8)
            for (index, shape) in try Self.keyShapes(in: folder).enumerated() {
                let list = folder + "/hosts-\(index)"
                try shape.text.write(toFile: list, atomically: true, encoding: .utf8)
                for json in [[], ["--json"]] {
                    let scan = F.run(["scan", "--hosts", list, "--timeout", "1"] + json)
                    #expect(scan.status == 2, "\(shape.name): \(scan.output)\(scan.errors)")
                    let audit = F.run(["audit", config, "--hosts", list, "--timeout", "1"] + json)
                    #expect(audit.status == 2, "\(shape.name): \(audit.output)\(audit.errors)")
                    for secret in shape.secrets {
                        #expect(!scan.output.contains(secret) && !scan.errors.contains(secret), "scan echoed \(shape.name)")
                        #expect(!audit.output.contains(secret) && !audit.errors.contains(secret), "audit echoed \(shape.name)")
                    }
                }
            }
        }
    }

    @Test("a host list with a byte order mark and a comment first is read as a host list")
    func byteOrderMarkThenComment() throws {
        try Self.inFolder { folder in
            let config = folder + "/c.json"
            try #"{ "version": 1, "hosts": [ { "pattern": "*.example.test", "mode": "none" } ] }"#.write(toFile: config, atomically: true, encoding: .utf8)
            let list = folder + "/hosts"
            try "\u{FEFF}# audited hosts\nwww.example.test 127.0.0.1:1\n".write(toFile: list, atomically: true, encoding: .utf8)
            let audit = F.run(["audit", config, "--hosts", list, "--timeout", "1"])
            #expect(!audit.errors.contains("host name is empty"), "\(audit.errors)")
            #expect(audit.status == 3, "the one host is audited (and unreachable): \(audit.output)\(audit.errors)")
        }
    }

    @Test("audit --hosts: a name listed twice with two addresses is audited at both, whatever the order")
    func repeatedName() throws {
        let good = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { good.stop() }
        let expired = try CheckTLSServer(certificate: "rsa-expired", chain: ["rsa-intermediate"])
        defer { expired.stop() }
        try Self.inFolder { folder in
            let config = folder + "/c.json"
            try """
                { "version": 1, "anchors": ["\(F.path("rsa-root.pem"))"],
                  "hosts": [ { "pattern": "www.example.test", "pins": ["\(try CheckCommandTests.pin("rsa-intermediate"))", "\(try CheckCommandTests.pin("attacker-root"))"] } ] }
                """.write(toFile: config, atomically: true, encoding: .utf8)
            for order in [[good, expired], [expired, good]] {
                let list = folder + "/hosts"
                try order.map { "www.example.test \($0.target)" }.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
                let result = F.run(["audit", config, "--hosts", list, "--json", "--revocation", "staple"] + F.at)
                #expect(result.status == 1, "\(result.output)\(result.errors)")
                let lines = result.output.split(separator: "\n").filter { $0.contains("\"host\"") }
                #expect(lines.count == 2, "\(result.output)")
            }
        }
    }

    @Test("plan opens an encrypted key with --passphrase-file or PINCHECK_KEY_PASSPHRASE")
    func planEncryptedKey() throws {
        try Self.inFolder { folder in
            let encrypted = folder + "/next.key"
            #expect(try OpenSSLCLI.run(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", F.path("keys/rsa-leaf-rotated.key"),
                                        "-out", encrypted, "-passout", "pass:correct horse"]) == 0)
            let config = try PlanCommandTests.configuration([try PlanCommandTests.pin("rsa-leaf"), try PlanCommandTests.pin("attacker-root")])
            defer { try? FileManager.default.removeItem(atPath: config) }
            let locked = PlanCommandTests.plan(config, next: [encrypted])
            #expect(locked.status == 2)
            #expect(locked.errors.contains("--passphrase-file"))
            let passphrase = folder + "/passphrase"
            try "correct horse\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
            let opened = PlanCommandTests.plan(config, next: [encrypted], extra: ["--passphrase-file", passphrase])
            #expect(opened.status == 1, "\(opened.output)\(opened.errors)")
            #expect(opened.output.contains("BREAKS — only the leaf key is pinned and the next leaf has a new key"))
            let environment = try F.runBinary(["plan", config, "--current", F.path("chains/rsa-good.pem"), "--next", encrypted, "--at", "2030-06-01"],
                                              environment: ["PINCHECK_KEY_PASSPHRASE": "correct horse"])
            #expect(environment.status == 1, "\(environment.output)\(environment.errors)")
            #expect(environment.output.contains("BREAKS"))
        }
    }

    @Test("keygen killed at any moment leaves no temporary file behind: the key has no name until it is whole")
    func keygenKilledLeavesNothing() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pincheck")
        try Self.inFolder { folder in
            for index in 0..<30 {
                let process = Process()
                process.executableURL = binary
                process.arguments = ["keygen", "--out", folder + "/key-\(index).pem"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                usleep(UInt32(index % 10) * 2_000)
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(!names.contains { $0.contains(".tmp-") }, "\(names)")
            // Whatever was written is a whole key.
            for name in names where name.hasSuffix(".pem") {
                let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
                #expect(text.hasPrefix("-----BEGIN PRIVATE KEY-----") && text.hasSuffix("-----END PRIVATE KEY-----\n"), "\(name)")
            }
        }
    }

    @Test("scan --concurrency 64 under a 50 MB address-space limit: a typed error or fewer workers, never a crash")
    func scanUnderAddressSpaceLimit() throws {
        try Self.inFolder { folder in
            let list = folder + "/hosts"
            try Array(repeating: "127.0.0.1:1", count: 100).joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
            let tight = try F.runBinary(["scan", "--hosts", list, "--concurrency", "64", "--timeout", "1"], addressSpaceKiB: 51_200)
            #expect([2, 3].contains(tight.status), "exit \(tight.status): \(tight.errors.suffix(400))")
            #expect(tight.errors.contains("input.too-large") || tight.errors.contains("does not fit the address-space limit"), "\(tight.errors.suffix(400))")
            let roomier = try F.runBinary(["scan", "--hosts", list, "--concurrency", "64", "--timeout", "1"], addressSpaceKiB: 120_000)
            #expect(roomier.status == 3, "every host refused the connection: \(roomier.errors.suffix(400))")
            #expect(roomier.errors.contains("does not fit the address-space limit; scanning with"))
        }
    }
}
