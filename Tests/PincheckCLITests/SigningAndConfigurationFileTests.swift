import Foundation
import Testing
@testable import PincheckCLI
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats
import PincheckTestSupport

/// The second hardening round: outputs that never replace inputs, empty configurations that
/// never unpin, updates that cannot unpin, no prompts, no echoed secrets, no lost verdicts.
@Suite("sign, keygen, configurations and updates: files never replaced, bad inputs refused", .serialized)
struct SigningAndConfigurationFileTests {
    typealias F = CLIFixtures

    /// A fresh folder, removed after `body`.
    static func inFolder<T>(_ body: (String) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-r2-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return try body(folder)
    }

    /// A key from keygen and a valid update beside it.
    static func keyAndUpdate(in folder: String, serial: Int = 3) throws -> (key: String, update: String) {
        let key = folder + "/k.pem"
        #expect(F.run(["keygen", "--out", key]).status == 0)
        let update = folder + "/u.json"
        let pin = try CheckCommandTests.pin("rsa-intermediate"), backup = try CheckCommandTests.pin("attacker-root")
        try #"{ "serial": \#(serial), "expires": "2031-01-01T00:00:00Z", "configuration": { "version": 1, "hosts": [ { "pattern": "www.example.test", "pins": ["\#(pin)", "\#(backup)"] } ] } }"#
            .write(toFile: update, atomically: true, encoding: .utf8)
        return (key, update)
    }

    // MARK: 1. Output files

    @Test("sign --out never replaces its key or its update, and needs --force for any other existing file")
    func signOutputs() throws {
        try Self.inFolder { folder in
            let (key, update) = try Self.keyAndUpdate(in: folder)
            let keyBefore = try Data(contentsOf: URL(fileURLWithPath: key))
            let updateBefore = try Data(contentsOf: URL(fileURLWithPath: update))
            for target in [key, update, folder + "/./k.pem"] {
                for force in [[], ["--force"]] {
                    let result = F.run(["sign", update, "--key", key, "--out", target, "--at", "2030-06-01"] + force)
                    #expect(result.status == 2, "\(target) \(force)")
                    #expect(result.errors.contains("input"), "\(result.errors)")
                }
            }
            // A hard link to the key is the key.
            #expect(link(key, folder + "/alias.pem") == 0)
            #expect(F.run(["sign", update, "--key", key, "--out", folder + "/alias.pem", "--force", "--at", "2030-06-01"]).status == 2)
            #expect(try Data(contentsOf: URL(fileURLWithPath: key)) == keyBefore)
            #expect(try Data(contentsOf: URL(fileURLWithPath: update)) == updateBefore)

            let existing = folder + "/old.sig"
            try "old\n".write(toFile: existing, atomically: true, encoding: .utf8)
            let refused = F.run(["sign", update, "--key", key, "--out", existing, "--at", "2030-06-01"])
            #expect(refused.status == 2)
            #expect(refused.errors.contains("--force"))
            #expect(try String(contentsOfFile: existing, encoding: .utf8) == "old\n")
            let forced = F.run(["sign", update, "--key", key, "--out", existing, "--force", "--at", "2030-06-01"])
            #expect(forced.status == 0, "\(forced.errors)")
            #expect(try String(contentsOfFile: existing, encoding: .utf8).count == 89)

            let directory = F.run(["sign", update, "--key", key, "--out", folder, "--at", "2030-06-01"])
            #expect(directory.status == 2)
            #expect(directory.errors.contains("is a folder"))
            #expect(!directory.errors.contains("Cocoa"))
            #expect(FileManager.default.fileExists(atPath: update))
        }
    }

    @Test("sign warns when its key can be read by others, and still signs")
    func worldReadableKey() throws {
        try Self.inFolder { folder in
            let (key, update) = try Self.keyAndUpdate(in: folder)
            let quiet = try F.runBinary(["sign", update, "--key", key, "--at", "2030-06-01"])
            #expect(quiet.status == 0)
            #expect(!quiet.errors.contains("can be read by others"))
            #expect(chmod(key, 0o644) == 0)
            let warned = try F.runBinary(["sign", update, "--key", key, "--at", "2030-06-01"])
            #expect(warned.status == 0)
            #expect(warned.errors.contains("can be read by others (mode 644)"), "\(warned.errors)")
        }
    }

    @Test("sign --out /dev/null is refused, and /dev/null stays a device")
    func signOntoDevice() throws {
        try Self.inFolder { folder in
            let (key, update) = try Self.keyAndUpdate(in: folder)
            let result = F.run(["sign", update, "--key", key, "--out", "/dev/null", "--force", "--at", "2030-06-01"])
            #expect(result.status == 2)
            #expect(result.errors.contains("not a regular file"))
            var status = stat()
            #expect(stat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)
        }
    }

    @Test("keygen never replaces a file, a symbolic link's target included")
    func keygenOutputs() throws {
        try Self.inFolder { folder in
            let victim = folder + "/victim"
            try "keep\n".write(toFile: victim, atomically: true, encoding: .utf8)
            #expect(symlink(victim, folder + "/link") == 0)
            #expect(F.run(["keygen", "--out", victim]).status == 2)
            #expect(F.run(["keygen", "--out", folder + "/link"]).status == 2)
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep\n")
            #expect(F.run(["keygen", "--out", folder]).status == 2)
        }
    }

    // MARK: 2. Empty configurations

    @Test("an empty configuration is policy.invalid in verify, lint and audit", arguments: ["", " \n\t\n", "# nothing\n", "\u{FEFF}"])
    func emptyConfiguration(text: String) throws {
        try Self.inFolder { folder in
            let config = folder + "/config"
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            let chain = F.path("chains/rsa-good.pem")
            let verify = F.run(["verify", chain, "--host", "www.example.test", "--config", config] + F.anchors + F.at)
            #expect(verify.status == 2)
            #expect(verify.errors.contains("policy.invalid"))
            #expect(F.run(["lint", config]).status == 2)
            #expect(F.run(["audit", config]).status == 2)
            // Named as OkHttp's empty pin list, it loads.
            let named = F.run(["verify", chain, "--host", "www.example.test", "--config", config, "--config-format", "okhttp"] + F.anchors + F.at)
            #expect(named.status == 0, "\(named.errors)")
        }
    }

    @Test("/dev/null and a FIFO without a writer are refused as configurations")
    func deviceConfigurations() throws {
        try Self.inFolder { folder in
            let fifo = folder + "/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            for config in ["/dev/null", fifo] {
                let result = F.run(["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test", "--config", config] + F.anchors + F.at)
                #expect(result.status == 2, "\(config)")
                #expect(!result.output.contains("TRUSTED"))
            }
        }
    }

    // MARK: 4. Signed updates

    static func signedUpdate(_ body: String, key: [UInt8]) throws -> (document: [UInt8], signature: [UInt8]) {
        let document = Array(body.utf8)
        return (document, try Ed25519.sign(document, privateKeyPEM: key).signature)
    }

    @Test("an update that unpins a compiled-in host or opens unlisted hosts needs removesPins and an app that accepts it")
    func updatesCannotUnpin() throws {
        let pair = try Ed25519.generate()
        let key = try PinSetVerificationKey(rawRepresentation: pair.publicKey)
        let pin = try CheckCommandTests.pin("rsa-intermediate"), backup = try CheckCommandTests.pin("attacker-root")
        let compiledIn = try Configuration.decode(Data(#"""
            { "version": 1, "allHostsMustBeEvaluated": true, "hosts": [ { "pattern": "www.example.test", "pins": ["\#(pin)", "\#(backup)"] } ] }
            """#.utf8), baseDirectory: ".").trustManager
        let unpinning = #"{ "serial": 2, "expires": "2031-01-01", "configuration": { "version": 1, "allHostsMustBeEvaluated": false, "hosts": [ { "pattern": "www.example.test", "mode": "none" } ] } }"#
        let marked = #"{ "serial": 3, "removesPins": true, "expires": "2031-01-01", "configuration": { "version": 1, "allHostsMustBeEvaluated": false, "hosts": [ { "pattern": "www.example.test", "mode": "none" } ] } }"#
        let moving = #"{ "serial": 4, "expires": "2031-01-01", "configuration": { "version": 1, "hosts": [ { "pattern": "www.example.test", "pins": ["\#(backup)", "\#(pin)"] } ] } }"#
        let keyBytes = Array(pair.privateKeyPEM.utf8)

        // Pins that expire before the update does are no pins for the rest of its life.
        let expiring = #"{ "serial": 5, "expires": "2031-01-01", "configuration": { "version": 1, "hosts": [ { "pattern": "www.example.test", "expires": "2030-07-01", "pins": ["\#(backup)", "\#(pin)"] } ] } }"#
        let strict = UpdatableTrustManager(compiledIn: compiledIn, keys: [key], at: TestPKI.time)
        for body in [unpinning, marked, expiring] {
            let (document, signature) = try Self.signedUpdate(body, key: keyBytes)
            let error = #expect(throws: PinSetUpdateError.self) { try strict.apply(document: document, signature: signature, at: TestPKI.time) }
            #expect(error?.code == .removesPins)
        }
        #expect(strict.serial == 0)
        let (moved, movedSignature) = try Self.signedUpdate(moving, key: keyBytes)
        #expect(try strict.apply(document: moved, signature: movedSignature, at: TestPKI.time) == 4, "moving pins is allowed")
        // Moving them to a pattern that covers the host is too; an exclusion below it is not.
        let wildcard = #"{ "serial": 6, "expires": "2031-01-01", "configuration": { "version": 1, "hosts": [ { "pattern": "*.example.test", "pins": ["\#(backup)", "\#(pin)"] } ] } }"#
        let (wide, wideSignature) = try Self.signedUpdate(wildcard, key: keyBytes)
        #expect(try strict.apply(document: wide, signature: wideSignature, at: TestPKI.time) == 6, "www.example.test stays pinned under *.example.test")
        let excluding = #"{ "serial": 7, "expires": "2031-01-01", "configuration": { "version": 1, "hosts": [ { "pattern": "**.example.test", "pins": ["\#(backup)", "\#(pin)"] }, { "pattern": "www.example.test", "mode": "none" } ] } }"#
        let (excluded, excludedSignature) = try Self.signedUpdate(excluding, key: keyBytes)
        let exclusion = #expect(throws: PinSetUpdateError.self) { try strict.apply(document: excluded, signature: excludedSignature, at: TestPKI.time) }
        #expect(exclusion?.code == .removesPins)

        let opted = UpdatableTrustManager(compiledIn: compiledIn, keys: [key], at: TestPKI.time, acceptsPinRemoval: true)
        let (document, signature) = try Self.signedUpdate(unpinning, key: keyBytes)
        #expect(throws: PinSetUpdateError.self) { try opted.apply(document: document, signature: signature, at: TestPKI.time) }
        let (markedDocument, markedSignature) = try Self.signedUpdate(marked, key: keyBytes)
        #expect(try opted.apply(document: markedDocument, signature: markedSignature, at: TestPKI.time) == 3)
    }

    @Test("a repeated key in an update or a configuration is refused, escapes resolved", arguments: [
        #"{ "serial": 9, "serial": 1, "expires": "2031-01-01", "configuration": { "version": 1, "hosts": [] } }"#,
        #"{ "serial": 9, "\u0073erial": 1, "expires": "2031-01-01", "configuration": { "version": 1, "hosts": [] } }"#,
        #"{ "serial": 9, "expires": "2031-01-01", "configuration": { "version": 1, "version": 1, "hosts": [] } }"#,
    ])
    func duplicateKeys(body: String) throws {
        let pair = try Ed25519.generate()
        let manager = UpdatableTrustManager(compiledIn: TrustManager(allHostsMustBeEvaluated: false),
                                            keys: [try PinSetVerificationKey(rawRepresentation: pair.publicKey)], at: TestPKI.time)
        let (document, signature) = try Self.signedUpdate(body, key: Array(pair.privateKeyPEM.utf8))
        let error = #expect(throws: PinSetUpdateError.self) { try manager.apply(document: document, signature: signature, at: TestPKI.time) }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("appears twice") == true)
    }

    @Test("a configuration repeating a key is policy.invalid, naming the key")
    func duplicateConfigurationKey() {
        let error = #expect(throws: PincheckError.self) {
            try Configuration.decode(Data(#"{ "version": 1, "hosts": [ { "pattern": "a.test", "mode": "none", "mode": "public-key" } ] }"#.utf8), baseDirectory: ".")
        }
        #expect(error?.message.contains("\"mode\" appears twice") == true)
    }

    @Test("a killed apply's temporary file is removed at the next start")
    func leftoverTemporaryFiles() throws {
        try Self.inFolder { folder in
            let leftover = folder + "/" + UpdatableTrustManager.storedName + ".tmp-AbC123"
            try "half".write(toFile: leftover, atomically: false, encoding: .utf8)
            _ = UpdatableTrustManager(compiledIn: TrustManager(), keys: [], storageDirectory: folder, at: TestPKI.time)
            #expect(!FileManager.default.fileExists(atPath: leftover))
        }
    }

    // MARK: 5. No prompts

    /// An encrypted copy of a keygen key (openssl pkcs8 -topk8 -v2 aes-256-cbc), passphrase "correct horse".
    static func encryptedKey(in folder: String) throws -> (plain: String, encrypted: String) {
        let plain = folder + "/plain.pem"
        #expect(F.run(["keygen", "--out", plain]).status == 0)
        let encrypted = folder + "/encrypted.pem"
        let status = try OpenSSLCLI.run(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", plain, "-out", encrypted, "-passout", "pass:correct horse"])
        #expect(status == 0)
        return (plain, encrypted)
    }

    @Test("sign with an encrypted key and no passphrase fails at once, naming how to give one; with it, signs")
    func encryptedSigningKey() throws {
        try Self.inFolder { folder in
            let (_, encrypted) = try Self.encryptedKey(in: folder)
            let (_, update) = try Self.keyAndUpdate(in: folder)
            // The binary, with a terminal-less standard input left open: a prompt would hang here.
            let started = Date()
            let refused = try F.runBinary(["sign", update, "--key", encrypted, "--at", "2030-06-01"], input: "")
            #expect(Date().timeIntervalSince(started) < 20)
            #expect(refused.status == 2)
            #expect(refused.errors.contains("--passphrase-file") && refused.errors.contains("PINCHECK_KEY_PASSPHRASE"))
            #expect(!refused.output.contains("Enter PEM pass phrase") && !refused.errors.contains("Enter PEM pass phrase"))
            let passphrase = folder + "/passphrase"
            try "correct horse\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
            let signed = F.run(["sign", update, "--key", encrypted, "--passphrase-file", passphrase, "--at", "2030-06-01"])
            #expect(signed.status == 0, "\(signed.errors)")
            try "wrong\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
            let wrong = F.run(["sign", update, "--key", encrypted, "--passphrase-file", passphrase, "--at", "2030-06-01"])
            #expect(wrong.status == 2)
            #expect(wrong.errors.contains("does not open it"))
        }
    }

    @Test("plan's key reader refuses an encrypted key without a passphrase, and reads it with one")
    func encryptedPlanKey() throws {
        try Self.inFolder { folder in
            let (plain, encrypted) = try Self.encryptedKey(in: folder)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: encrypted)))
            let error = #expect(throws: PincheckError.self) { try PublicKeyFile.read(bytes, source: encrypted) }
            #expect(error?.message.contains("--passphrase-file") == true)
            let opened = try PublicKeyFile.read(bytes, source: encrypted, passphrase: Array("correct horse".utf8))
            let direct = try PublicKeyFile.read(Array(try Data(contentsOf: URL(fileURLWithPath: plain))), source: plain)
            #expect(opened?.pin == direct?.pin)
        }
    }

    @Test("check --report-to a FIFO nobody reads, a folder, /dev/full: every verdict printed, a warning given; 1 when pins were enforced, 4 when only reported")
    func reportToUnreadFIFO() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        try Self.inFolder { folder in
            let config = folder + "/c.json"
            try """
                { "version": 1, "anchors": ["\(F.path("rsa-root.pem"))"],
                  "hosts": [ { "pattern": "www.example.test", "pins": ["\(try CheckCommandTests.pin("attacker-root"))", "\(try CheckCommandTests.pin("ec-root"))"],
                               "reportURIs": ["https://reports.example.test/pins"] } ] }
                """.write(toFile: config, atomically: true, encoding: .utf8)
            let fifo = folder + "/reports"
            #expect(mkfifo(fifo, 0o600) == 0)
            let started = Date()
            let result = try F.runBinary(["check", server.target, server.target, "--host", "www.example.test", "--config", config,
                                          "--report-to", fifo, "--timeout", "5"] + F.at)
            #expect(Date().timeIntervalSince(started) < 30)
            // Enforced pins failed: exit 1 survives the unwritten report, which is still said.
            #expect(result.status == 1, "\(result.output)\(result.errors)")
            #expect(result.output.components(separatedBy: "pin.mismatch").count > 2, "both hosts' verdicts are printed")
            #expect(result.errors.contains("warning") && result.errors.contains("no process is reading"))
            // A folder as the report file: the same.
            let folderResult = F.run(["check", server.target, "--host", "www.example.test", "--config", config, "--report-to", folder] + F.at)
            #expect(folderResult.status == 1)
            #expect(folderResult.output.contains("pin.mismatch"))
            // Report-only pins: the host is trusted, so the unwritten report is what the status says.
            let reportOnly = folder + "/report-only.json"
            try """
                { "version": 1, "anchors": ["\(F.path("rsa-root.pem"))"],
                  "hosts": [ { "pattern": "www.example.test", "pins": ["\(try CheckCommandTests.pin("attacker-root"))", "\(try CheckCommandTests.pin("ec-root"))"],
                               "enforce": false, "reportURIs": ["https://reports.example.test/pins"] } ] }
                """.write(toFile: reportOnly, atomically: true, encoding: .utf8)
            let trusted = try F.runBinary(["check", server.target, "--host", "www.example.test", "--config", reportOnly, "--report-to", folder] + F.at)
            #expect(trusted.status == 4, "\(trusted.output)\(trusted.errors)")
            #expect(trusted.errors.contains("was not written"))
            let full = try F.runBinary(["check", server.target, "--host", "www.example.test", "--config", config, "--report-to", "/dev/full"] + F.at)
            #expect(full.status == 1, "\(full.output)\(full.errors)")
            #expect(full.output.contains("NOT TRUSTED") && full.output.contains("pin.mismatch"))
            #expect(full.errors.contains("was not written"))
        }
    }

    // MARK: 6. No secrets echoed

    @Test("a private key given as a host list is refused without echoing a line of it")
    func keyAsHostList() throws {
        try Self.inFolder { folder in
            let key = folder + "/k.pem"
            #expect(F.run(["keygen", "--out", key]).status == 0)
            let secretLines = try String(contentsOfFile: key, encoding: .utf8).split(separator: "\n").map(String.init)
                .filter { !$0.hasPrefix("-----") }
            for json in [[], ["--json"]] {
                let scan = F.run(["scan", "--hosts", key] + json)
                #expect(scan.status == 2)
                for line in secretLines { #expect(!scan.output.contains(line) && !scan.errors.contains(line)) }
                #expect(scan.errors.contains("private key"))
            }
            let config = folder + "/c.json"
            try #"{ "version": 1, "hosts": [ { "pattern": "*.example.test", "mode": "none" } ] }"#.write(toFile: config, atomically: true, encoding: .utf8)
            let audit = F.run(["audit", config, "--hosts", key])
            #expect(audit.status == 2)
            for line in secretLines { #expect(!audit.output.contains(line) && !audit.errors.contains(line)) }
        }
    }

    // MARK: 7. Audit

    @Test("audit that has nothing to audit exits 2, after naming the patterns it could not audit")
    func auditNothing() throws {
        try Self.inFolder { folder in
            let config = folder + "/c.json"
            try #"{ "version": 1, "hosts": [ { "pattern": "*.example.test", "mode": "none" } ] }"#.write(toFile: config, atomically: true, encoding: .utf8)
            let result = F.run(["audit", config])
            #expect(result.status == 2)
            #expect(result.output.contains("*.example.test"))
            #expect(result.errors.contains("nothing was audited"))
        }
    }

    @Test("audit checks hosts concurrently: 16 unreachable names at a 2 s timeout take far less than 32 s")
    func auditConcurrently() throws {
        try Self.inFolder { folder in
            let config = folder + "/c.json"
            try #"{ "version": 1, "hosts": [ { "pattern": "*.example.test", "mode": "none" } ] }"#.write(toFile: config, atomically: true, encoding: .utf8)
            // 192.0.2.0/24 (TEST-NET-1) is never routed: each connection waits for the timeout.
            let hosts = folder + "/hosts"
            try (1...16).map { "h\($0).example.test 192.0.2.\($0):443" }.joined(separator: "\n").write(toFile: hosts, atomically: true, encoding: .utf8)
            let started = Date()
            let result = F.run(["audit", config, "--hosts", hosts, "--timeout", "2", "--concurrency", "16", "--json"])
            let elapsed = Date().timeIntervalSince(started)
            #expect(result.status == 3)
            #expect(result.output.split(separator: "\n").count == 16, "every host printed")
            #expect(elapsed < 16, "\(elapsed) s: hosts were audited one at a time")
        }
    }

    // MARK: 8. Smaller

    @Test("pins of a symbolic-link loop is the file's error, never a DNS lookup")
    func symlinkLoop() throws {
        try Self.inFolder { folder in
            #expect(symlink(folder + "/loop-b", folder + "/loop-a") == 0)
            #expect(symlink(folder + "/loop-a", folder + "/loop-b") == 0)
            let result = F.run(["pins", folder + "/loop-a"])
            #expect(result.status == 2)
            #expect(result.errors.contains("input.unreadable-file"))
            #expect(!result.errors.contains("network") && !result.errors.contains("resolve"))
        }
    }

    @Test("a host that decodes to U+FFFD (invalid UTF-8) is host.invalid, never an A-label")
    func replacementCharacter() {
        let error = #expect(throws: PincheckError.self) { try HostName.peerName(for: "b\u{FFFD}cher.example") }
        #expect(error?.code == .invalidHost)
        let verify = F.run(["verify", F.path("chains/rsa-good.pem"), "--host", "\u{FFFD}.example"] + F.anchors + F.at)
        #expect(verify.status == 2)
        #expect(verify.errors.contains("host.invalid"))
    }
}

/// `--at` is one option (`TimeOption`), parsed once, with one error for every command that takes it.
@Suite("--at: one option for every command")
struct TimeOptionTests {
    typealias F = CLIFixtures

    @Test("a time that is not ISO 8601 is a usage error (exit 2) naming the option, in every command",
          arguments: [
              ["verify", F.path("chains/rsa-good.pem")], ["check", "127.0.0.1:1"], ["pins", F.path("rsa-root.pem")],
              ["lint", F.path("rsa-root.pem")], ["audit", F.path("rsa-root.pem")],
          ])
    func invalid(command: [String]) {
        let result = F.run(command + ["--at", "yesterday"])
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.errors.contains("'--at <time>': not an ISO 8601 date or time"), "\(result.errors)")
    }

    @Test("a date alone is midnight UTC, as the time in full")
    func dateAlone() throws {
        #expect(try TimeOption.parse("2030-06-01") == TimeOption.parse("2030-06-01T00:00:00Z"))
    }
}
