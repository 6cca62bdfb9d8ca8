import ArgumentParser
import FoundationEssentials
import TrustEvaluator

/// `pincheck keygen --out KEY`: an Ed25519 key pair for signing pin-set updates.
struct Keygen: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make an Ed25519 key pair for signing pin-set updates.",
        discussion: """
            Writes the private key (PKCS #8 PEM, mode 0600) to --out and prints the public key as \
            base64: the app embeds it (PinSetVerificationKey(base64:)). Refuses to overwrite a file.
            """)

    @Option(help: ArgumentHelp("Where the private key goes.", valueName: "file"))
    var out: String

    func execute(_ console: Console) throws -> ExitStatus {
        guard !FileManager.default.fileExists(atPath: out) else {
            throw PincheckError(.invalidPolicy, "\(out) exists; pincheck keygen never overwrites a key")
        }
        let pair = try Ed25519.generate()
        if let problem = PrivateFile.write(Array(pair.privateKeyPEM.utf8), to: out) {
            throw PincheckError(.unreadableFile, problem)
        }
        console.line(try PinSetVerificationKey(rawRepresentation: pair.publicKey).description)
        return .trusted
    }
}

/// `pincheck sign UPDATE --key KEY`: a detached signature over a pin-set update.
struct Sign: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign a pin-set update with an Ed25519 key (pincheck keygen).",
        discussion: """
            UPDATE is JSON: {"serial": N, "expires": TIME, "configuration": {…Pincheck JSON…}}. It is \
            checked first (the configuration must load, the serial be positive, the expiry be in the \
            future), then signed as it is, byte for byte. The signature (base64) goes to --out, \
            UPDATE.sig by default; the public key that verifies it is printed.
            """)

    @Argument(help: ArgumentHelp("The pin-set update to sign.", valueName: "update"))
    var update: String

    @Option(help: ArgumentHelp("The Ed25519 private key (PEM).", valueName: "file"))
    var key: String

    @Option(help: ArgumentHelp("Where the signature goes. Default: UPDATE.sig.", valueName: "file"))
    var out: String?

    @Option(help: ArgumentHelp("The time the expiry is checked against, ISO 8601. Default: now.", valueName: "time"))
    var at: String?

    func validate() throws {
        if let at, PolicyOptions.parseTime(at) == nil { throw ValidationError("--at \"\(at)\" is not an ISO 8601 date or time") }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let document = try InputFile.read(update, limit: InputFile.configurationLimit, what: "pin-set update")
        let keyBytes = try InputFile.read(key, limit: 64 << 10, what: "signing key")
        let (signature, publicKey) = try Ed25519.sign(document, privateKeyPEM: keyBytes)
        // What an app would do with it, before anything is written: a bad update is never signed.
        let verifier = try PinSetVerificationKey(rawRepresentation: publicKey)
        let manager = UpdatableTrustManager(compiledIn: TrustManager(), keys: [verifier], baseDirectory: FilePath.directory(of: update).isEmpty ? "." : FilePath.directory(of: update))
        do {
            try manager.apply(document: document, signature: signature, at: at.flatMap(PolicyOptions.parseTime) ?? Date())
        } catch {
            throw PincheckError(.invalidPolicy, "\(update): \(error)")
        }
        let destination = out ?? update + ".sig"
        do {
            try (Base64.encode(signature) + "\n").write(toFile: destination, atomically: true, encoding: .utf8)
        } catch {
            throw PincheckError(.unreadableFile, "cannot write \(destination): \(error)")
        }
        console.line("signed \(update) (serial \(manager.serial)) → \(destination)")
        console.line("verification key: \(verifier)")
        return .trusted
    }
}
