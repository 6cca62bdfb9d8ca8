import ArgumentParser
import FoundationEssentials
import ServerTrust
import TrustEvaluator

/// `pincheck verify CHAIN_FILE [policy options]`: evaluate a served chain offline.
struct Verify: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        _superCommandName: Pincheck.name,
        abstract: "Evaluate a served chain (PEM bundle, leaf first, or one DER certificate) against a policy.",
        discussion: """
            Without --host no name is checked, and the report says so. With --purpose client the chain is a \
            client's, judged as an mTLS server judges it: purpose sslclient, no host name, and a warning \
            (anchor.public-client-root) when the anchors are public roots, whose client certificates ended in 2026.
            """)

    enum PurposeArgument: String, RawValueArgument {
        case server, client
    }

    @Argument(help: ArgumentHelp("The chain as a server sends it: PEM bundle (leaf first) or DER.", valueName: "chain-file"))
    var chainFile: String

    @Option(help: ArgumentHelp("The OCSP response the server stapled (DER), judged with the chain.", valueName: "file"))
    var staple: String?

    // Optional, with the default applied below (each default is named in its help): an option
    // declared with a default value makes argument-parser ask at every start whether the type is
    // CaseIterable and RawRepresentable, two runtime scans of the binary's conformance table.
    @Option(
        name: .customLong("purpose"),
        help: ArgumentHelp(
            "Whose chain this is: server (the default) or client (judged as an mTLS server judges its clients: purpose sslclient, no host).",
            valueName: "purpose"))
    var purposeArgument: PurposeArgument?
    var purpose: PurposeArgument { purposeArgument ?? .server }

    @OptionGroup var policy: PolicyOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if policy.config != nil && policy.host == nil {
            throw ValidationError("--config needs --host: the configuration's policies are chosen by host name")
        }
        if purpose == .client && (policy.config != nil || policy.host != nil) {
            throw ValidationError("--purpose client takes neither --host nor --config: a client certificate names no host it is reached at")
        }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let chain = try Certificate.load(contentsOf: chainFile)
        let stapled = try staple.map { path throws(PincheckError) in
            try InputFile.read(path, limit: InputFile.certificateLimit, what: "stapled OCSP response")
        }
        let verdict: Verdict
        if purpose == .client {
            var clients = try policy.makePolicy().judgingClients
            clients.validation.advisories = .clientAnchors
            verdict = try Evaluator(policy: clients).evaluate(chain, host: nil, at: policy.time, stapledOCSPResponse: stapled)
        } else {
            verdict = try policy.makeJudge().judge(chain, host: policy.host, at: policy.time, stapledOCSPResponse: stapled)
        }
        TrustLogging.log(verdict, host: policy.host ?? "(no host)", to: output.logger)
        if output.json {
            console.line(JSONLines.line(VerdictJSON(verdict, requestedHost: policy.host)))
        } else {
            VerdictReport(verdict: verdict, subject: chainFile, console: console).render()
        }
        return ExitStatus(verdict)
    }
}
