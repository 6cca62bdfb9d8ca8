import ArgumentParser
import FoundationEssentials
import ServerTrust
import TrustEvaluator

/// `pincheck verify CHAIN_FILE [policy options]`: evaluate a served chain offline.
struct Verify: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Evaluate a served chain (PEM bundle, leaf first, or one DER certificate) against a policy.",
        discussion: "Without --host no name is checked, and the report says so.")

    @Argument(help: ArgumentHelp("The chain as a server sends it: PEM bundle (leaf first) or DER.", valueName: "chain-file"))
    var chainFile: String

    @Option(help: ArgumentHelp("The OCSP response the server stapled (DER), judged with the chain.", valueName: "file"))
    var staple: String?

    @OptionGroup var policy: PolicyOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if policy.config != nil && policy.host == nil {
            throw ValidationError("--config needs --host: the configuration's policies are chosen by host name")
        }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let chain = try Certificate.load(contentsOf: chainFile)
        let stapled = try staple.map { path throws(PincheckError) in try InputFile.read(path, limit: InputFile.certificateLimit, what: "stapled OCSP response") }
        let verdict = try policy.makeJudge().judge(chain, host: policy.host, at: policy.time, stapledOCSPResponse: stapled)
        TrustLogging.log(verdict, host: policy.host ?? "(no host)", to: output.logger)
        if output.json {
            console.line(JSONLines.line(VerdictJSON(verdict, requestedHost: policy.host)))
        } else {
            VerdictReport(verdict: verdict, subject: chainFile, console: console).render()
        }
        return ExitStatus(verdict)
    }
}
