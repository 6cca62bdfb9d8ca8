import ArgumentParser
import Foundation
import TrustEvaluator

/// `pincheck pins FILE`: the sha256/ pin of every certificate in a file.
struct Pins: ConsoleCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the sha256/ public-key pin of every certificate in a file, with subject, issuer and expiry.")

    @Argument(help: ArgumentHelp("A PEM bundle or DER certificate.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The time days-left is counted from, ISO 8601. Default: now.", valueName: "time"))
    var at: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let at, PolicyOptions.parseTime(at) == nil {
            throw ValidationError("--at \"\(at)\" is not an ISO 8601 date or time")
        }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let certificates = try Certificate.load(contentsOf: file)
        let time = at.flatMap(PolicyOptions.parseTime) ?? Date()
        if output.json {
            console.line(Format.json(certificates.map { CertificateJSON($0, at: time) }))
            return .trusted
        }
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
        return .trusted
    }
}
