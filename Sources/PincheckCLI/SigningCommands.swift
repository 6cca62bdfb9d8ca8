import ArgumentParser
import FoundationEssentials
import TrustEvaluator

/// Where an encrypted private key's passphrase comes from: a file, or the environment. Never a
/// prompt: the command runs in scripts and CI, where a prompt waits for ever.
struct KeyPassphraseOptions: ParsableArguments {
    @Option(
        name: .customLong("passphrase-file"),
        help: ArgumentHelp(
            "The passphrase of an encrypted private key: the file's first line. Default: the PINCHECK_KEY_PASSPHRASE environment variable, if set.",
            valueName: "file"))
    var passphraseFile: String?

    /// The passphrase, if one was given.
    func passphrase() throws(PincheckError) -> [UInt8]? {
        if let passphraseFile {
            let bytes = try InputFile.read(passphraseFile, limit: 4 << 10, what: "passphrase file")
            return Array(bytes.prefix { $0 != 0x0A && $0 != 0x0D })
        }
        return ProcessInfo.processInfo.environment["PINCHECK_KEY_PASSPHRASE"].map { Array($0.utf8) }
    }
}

/// `pincheck keygen --out KEY`: an Ed25519 key pair for signing pin-set updates.
struct Keygen: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        _superCommandName: Pincheck.name,
        abstract: "Make an Ed25519 key pair for signing pin-set updates.",
        discussion: """
            Writes the private key (PKCS #8 PEM, mode 0600) to --out and prints the public key as \
            base64: the app embeds it (PinSetVerificationKey(base64:)). Never replaces an existing \
            file, even one made while the key was being generated.
            """)

    @Option(help: ArgumentHelp("Where the private key goes (a new file).", valueName: "file"))
    var out: String

    func execute(_ console: Console) throws -> ExitStatus {
        let pair = try Ed25519.generate()
        try OutputFile.write(
            Array(pair.privateKeyPEM.utf8), to: out, mode: 0o600, replacing: false,
            advice: "pincheck keygen never overwrites a key")
        console.line(try PinSetVerificationKey(rawRepresentation: pair.publicKey).description)
        return .trusted
    }
}

/// `pincheck sign UPDATE --key KEY`: a detached signature over a pin-set update.
struct Sign: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        _superCommandName: Pincheck.name,
        abstract: "Sign a pin-set update with an Ed25519 key (pincheck keygen).",
        discussion: """
            UPDATE is JSON: {"serial": N, "expires": TIME, "configuration": {…Pincheck JSON…}}. It is \
            checked first (the configuration must load, the serial be positive, the expiry be in the \
            future, no key repeated; with --app-config, that it removes no pin the app's compiled-in \
            configuration has unless it says "removesPins": true), then signed as it is, byte for \
            byte. The signature (base64) goes to standard output, or to --out: a new file, or an \
            existing one with --force, but never the key, the update or anything that is not a \
            regular file. An encrypted key needs --passphrase-file or PINCHECK_KEY_PASSPHRASE; \
            there is never a prompt.
            """)

    @Argument(help: ArgumentHelp("The pin-set update to sign.", valueName: "update"))
    var update: String

    @Option(help: ArgumentHelp("The Ed25519 private key (PEM).", valueName: "file"))
    var key: String

    @Option(help: ArgumentHelp("Where the signature goes; - or absent: standard output.", valueName: "file"))
    var out: String?

    @Flag(help: "Replace an existing --out file (never the key or the update).")
    var force = false

    @Option(
        name: .customLong("app-config"),
        help: ArgumentHelp("The app's compiled-in configuration: the update is checked against it as the app will check it.", valueName: "file"))
    var appConfig: String?

    @OptionGroup var keyPassphrase: KeyPassphraseOptions

    @OptionGroup var when: TimeOption

    func execute(_ console: Console) throws -> ExitStatus {
        let destination = out == "-" ? nil : out
        let inputs = [update, key] + (appConfig.map { [$0] } ?? []) + (keyPassphrase.passphraseFile.map { [$0] } ?? [])
        // Refused before the key is even read: the output may not be an input, a device or a folder.
        if let destination { try OutputFile.checkDestination(destination, replacing: force, inputs: inputs) }
        let document = try InputFile.read(update, limit: InputFile.configurationLimit, what: "pin-set update")
        let keyBytes = try InputFile.read(key, limit: 64 << 10, what: "signing key")
        if PEM.containsPrivateKey(keyBytes), let mode = OutputFile.mode(of: key), mode & 0o077 != 0 {
            Console.standardError.line("pincheck: warning: \(key) can be read by others (mode \(String(mode & 0o777, radix: 8))); chmod 600 it")
        }
        let (signature, publicKey) = try Ed25519.sign(document, privateKeyPEM: keyBytes, passphrase: try keyPassphrase.passphrase())
        // What an app would do with it, before anything is written: a bad update is never signed.
        let verifier = try PinSetVerificationKey(rawRepresentation: publicKey)
        let directory = FilePath.directory(of: update).isEmpty ? "." : FilePath.directory(of: update)
        let compiledIn = try appConfig.map { path throws(PincheckError) in try Configuration.load(contentsOf: path).trustManager }
        let manager = UpdatableTrustManager(
            compiledIn: compiledIn ?? TrustManager(allHostsMustBeEvaluated: false), keys: [verifier],
            baseDirectory: directory, acceptsPinRemoval: true)
        do {
            try manager.apply(document: document, signature: signature, at: when.time)
        } catch {
            throw PincheckError(.invalidPolicy, "\(update): \(error)")
        }
        let text = Base64.encode(signature)
        if let destination {
            try OutputFile.write(Array((text + "\n").utf8), to: destination, mode: 0o644, replacing: force, inputs: inputs)
            console.line("signed \(update) (serial \(manager.serial)) → \(destination)")
            console.line("verification key: \(verifier)")
        } else {
            console.line(text)
            Console.standardError.line("signed \(update) (serial \(manager.serial)); verification key: \(verifier)")
        }
        return .trusted
    }
}
