import ArgumentParser
import FoundationEssentials
import TrustEvaluator
import PincheckTLS
#if canImport(Glibc)
import Glibc
#endif

/// `pincheck pins FILE|HOST[:PORT]`: the sha256/ pin of every certificate in a file, or of the
/// chain a server sends and the path it verifies to.
struct Pins: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        _superCommandName: Pincheck.name,
        abstract: "Print the sha256/ public-key pin of every certificate in a file or served by a host, with subject, issuer and expiry.",
        discussion: """
            An argument that names an existing file is read as a PEM bundle or DER certificate; anything else is \
            HOST[:PORT]: Pincheck connects, lists the served chain, and the verified path built against --ca-file \
            (or the system store). Exit 3 when the host cannot be reached.
            """)

    @Argument(help: ArgumentHelp("A PEM bundle or DER certificate, or HOST[:PORT] to connect to.", valueName: "file|host"))
    var file: String

    @OptionGroup var anchorFiles: AnchorFileOptions
    var caFiles: [String] { anchorFiles.files }

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var when: TimeOption

    @OptionGroup var output: OutputOptions

    func execute(_ console: Console) throws -> ExitStatus {
        let time = when.time
        // lstat, not fileExists: a dangling link or a link loop is a file the user named, whose
        // error is the file's, never a DNS lookup of its name.
        var status = stat()
        if lstat(file, &status) != 0 {
            // A missing file is not a host to look up: `pins chian.pem` says so, without DNS.
            guard Self.looksLikeHost(file), let target = try? ProbeTarget(parsing: file, defaultPort: connection.port) else {
                throw PincheckError(.unreadableFile, "no such file (HOST[:PORT] is read as a host only when it looks like one)", source: file)
            }
            return try HostPins(target: target, caFiles: caFiles, connection: connection, time: time, json: output.json).run(console)
        }
        let certificates = try Certificate.load(contentsOf: file)
        if output.json {
            console.line(JSONLines.line(["certificates": certificates.map { CertificateJSON($0, at: time) }]))
            return .trusted
        }
        Self.render(certificates, at: time, console)
        return .trusted
    }

    /// File name endings that say "a file", never a host (`chain.pem` is a valid DNS name).
    static let fileExtensions: Set<String> = [
        "pem", "crt", "cer", "der", "key", "csr", "p7b", "p7c", "p12", "pfx", "txt", "json", "plist", "xml", "conf",
    ]

    /// Whether a missing file's name reads as HOST[:PORT]: no path separator, and an IP literal, an
    /// explicit port, or a last label that is not a certificate file's extension.
    static func looksLikeHost(_ argument: String) -> Bool {
        guard !argument.contains("/") else { return false }
        if argument.hasPrefix("[") || argument.filter({ $0 == ":" }).count > 1 { return true }  // IPv6
        if argument.contains(":") { return true }  // HOST:PORT
        guard let last = argument.split(separator: ".").last else { return false }
        if argument.allSatisfy({ $0.isNumber || $0 == "." }) { return true }  // IPv4
        return !fileExtensions.contains(last.lowercased())
    }

    static func render(_ certificates: [Certificate], at time: Date, _ console: Console) {
        for (index, certificate) in certificates.enumerated() {
            if index > 0 { console.line() }
            let days = Format.daysLeft(certificate, at: time)
            var table = Table()
            table.add(["subject", certificate.subject])
            table.add(["issuer", certificate.issuer])
            table.add(["expires", "\(Format.day(certificate.notAfter)) (\(days < 0 ? "expired" : "\(days) days left"))"])
            table.add(["key", certificate.publicKey.description])
            console.line("\(certificate.publicKeyPin)")
            table.render(indent: "  ").forEach(console.line)
        }
    }
}

/// `pins HOST[:PORT]`: the served chain's pins, and the verified path's, ready for a config.
struct HostPins {
    let target: ProbeTarget
    let caFiles: [String]
    let connection: ConnectionOptions
    let time: Date
    let json: Bool

    func run(_ console: Console) throws -> ExitStatus {
        let anchors = caFiles.isEmpty ? TrustAnchors.system : try TrustAnchors(contentsOf: caFiles)
        let result: ProbeResult
        do {
            result = try connection.probe.probe(target, serverName: connection.servername ?? target.host)
        } catch {
            if json {
                console.line(
                    JSONLines.line(
                        HostPinsJSON(target: target.description, error: ReasonJSONLite(code: error.code.description, message: error.message))))
            } else {
                console.line("\(console.paint("NETWORK ERROR", .red))  \(target)")
                console.line("  \(error.code)  \(error.message)")
            }
            return .networkFailure
        }
        // Only the path matters here, so no name is required; the pins are the same for any name.
        let policy = TrustPolicy(anchors: anchors, nameValidation: .disabled(because: "pins lists keys, it does not judge the host"))
        let verdict = try Evaluator(policy: policy).evaluate(result.servedChain, host: nil, at: time)
        let path = verdict.verifiedPath?.certificates ?? []
        if json {
            console.line(
                JSONLines.line(
                    HostPinsJSON(
                        target: target.description,
                        served: result.servedChain.map { CertificateJSON($0, at: time) },
                        verifiedPath: path.map { CertificateJSON($0, at: time) },
                        verifiedPathError: verdict.verifiedPath == nil ? verdict.failures.map(\.code.description).joined(separator: ", ") : nil)))
            return .trusted
        }
        console.line(
            console.paint("Served by \(target) (\(result.servedChain.count) certificate\(result.servedChain.count == 1 ? "" : "s"), as sent):", .bold)
        )
        console.line()
        Pins.render(result.servedChain, at: time, console)
        console.line()
        if path.isEmpty {
            let why = verdict.failures.map(\.code.description).joined(separator: ", ")
            console.line(console.paint("Verified path: none could be built (\(why)).", .bold))
        } else {
            console.line(console.paint("Verified path (leaf first), to paste as --pin or into a config:", .bold))
            var table = Table()
            for (depth, certificate) in path.enumerated() {
                table.add(["  \(certificate.publicKeyPin)", "# \(depth)", certificate.subject])
            }
            table.render().forEach(console.line)
        }
        return .trusted
    }
}

struct ReasonJSONLite: Encodable {
    let code: String
    let message: String
}

struct HostPinsJSON: Encodable {
    var target: String
    var served: [CertificateJSON] = []
    var verifiedPath: [CertificateJSON] = []
    var verifiedPathError: String? = nil
    var error: ReasonJSONLite? = nil
}
