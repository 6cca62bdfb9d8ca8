import ArgumentParser
import FoundationEssentials
import ServerTrust
import TrustEvaluator
import PincheckTLS

/// `pincheck check HOST[:PORT]… [policy options]`: handshake with each host, evaluate what it served, report.
struct Check: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        _superCommandName: Pincheck.name,
        abstract: "Connect to hosts, take the chain they serve, and evaluate it against a policy.",
        discussion: """
            The handshake does not decide trust: Pincheck's evaluator does, with the same options as verify.
            --host (the name the certificate must carry) defaults to HOST; --servername (the SNI sent) to --host.
            Exit codes: 0 trusted · 1 not trusted · 2 bad input · 3 network or handshake failure (the worst over all hosts).
            """)

    @Argument(
        help: ArgumentHelp("HOST, HOST:PORT or [IPV6]:PORT (default port 443).", valueName: "host"),
        transform: HostArgument.init(parsing:))
    var targets: [HostArgument] = []

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var policy: PolicyOptions
    @OptionGroup var output: OutputOptions

    @Option(
        name: .customLong("report-to"),
        help: ArgumentHelp(
            "Append the RFC 7469 pin failure reports that --config's report URIs are due to FILE, one JSON line each.", valueName: "file"))
    var reportTo: String?

    func validate() throws {
        guard !targets.isEmpty else { throw ValidationError("give at least one HOST[:PORT] to check") }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let runner = HostCheck(
            judge: try policy.makeJudge(defaultRevocation: .crl, fetchTimeout: connection.timeout, advisories: .liveCheck), connection: connection,
            policy: policy)
        var worst = ExitStatus.trusted
        for (index, target) in targets.enumerated() {
            let outcome = try runner.run(connection.target(target))
            if case .evaluated(_, let verdict) = outcome.result { TrustLogging.log(verdict, host: outcome.host, to: output.logger) }
            if output.json {
                console.line(outcome.json)
            } else {
                if index > 0 { console.line(); console.line(String(repeating: "─", count: 60)); console.line() }
                CheckReport(outcome: outcome, console: console).render()
            }
            worst = ExitStatus.worst(worst, outcome.status)
            // After the verdict is printed: a report that cannot be written is a warning and exit
            // 4 at the end, never a lost verdict or an unchecked host.
            if let reportTo, case .evaluated(_, let verdict) = outcome.result {
                for report in verdict.reports {
                    do { try FileReporter(path: reportTo, timeout: connection.timeout).append(report) } catch {
                        Console.standardError.line(
                            "pincheck: warning[\(error.code)]: the failure report for \(outcome.host) was not written: \(error)")
                        worst = ExitStatus.worst(worst, .reportNotWritten)
                    }
                }
            }
        }
        return worst
    }
}

/// A `HOST[:PORT]` argument, parsed once, when the command line is; a port it does not give is
/// `--port`'s (``ConnectionOptions/target(_:)``), which is parsed after it.
struct HostArgument: Sendable {
    let host: String
    let port: UInt16?

    init(parsing text: String) throws {
        // Port 0 is never a given port (ProbeTarget refuses it), so it marks "none given".
        do {
            let parsed = try ProbeTarget(parsing: text, defaultPort: 0)
            (host, port) = (parsed.host, parsed.port == 0 ? nil : parsed.port)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

/// Connection options of `check`, `scan` and `pins HOST`.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The SNI to send. Default: --host, else HOST (never an IP address).", valueName: "name"))
    var servername: String?

    @Option(help: ArgumentHelp("Seconds allowed for name resolution, connect and handshake, per host.", valueName: "seconds"))
    var timeout: Double = 10

    @Option(help: ArgumentHelp("The port for hosts given without one.", valueName: "port"))
    var port: UInt16 = 443

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be between 0 and 3600 seconds") }
        guard port > 0 else { throw ValidationError("--port must be 1–65535") }
    }

    /// The host to connect to: the argument's port, else `--port`.
    func target(_ argument: HostArgument) -> ProbeTarget {
        argument.port.map { ProbeTarget(host: argument.host, port: $0) } ?? ProbeTarget(host: argument.host, port: port)
    }

    var probe: TLSProbe { TLSProbe(timeout: .milliseconds(Int64(timeout * 1000))) }
}

/// One host: probe, then evaluate. Shared by `check` and `scan`.
struct HostCheck: Sendable {
    let judge: Judge
    let probe: TLSProbe
    let host: String?
    let servername: String?
    let time: Date

    init(judge: Judge, connection: ConnectionOptions, policy: PolicyOptions) {
        self.judge = judge
        self.probe = connection.probe
        self.host = policy.host
        self.servername = connection.servername
        self.time = policy.time
    }

    /// - Throws: `PincheckError` when the host name cannot be a certificate name (bad input).
    func run(_ target: ProbeTarget) throws(PincheckError) -> CheckOutcome {
        let name = host ?? target.host
        let sni = servername ?? name
        do {
            let result = try probe.probe(target, serverName: sni)
            // The embedded SCTs and the staple's are read by the engine from the chain and the
            // staple; those libssl saw in the TLS extension reach it only from here.
            let verdict = try judge.judge(
                result.servedChain, host: name, port: Int(target.port), at: time,
                stapledOCSPResponse: result.stapledOCSPResponse,
                presentedSCTs: result.signedCertificateTimestamps.filter { $0.source == .tlsExtension })
            return CheckOutcome(target: target, host: name, result: .evaluated(result, verdict))
        } catch let error as ProbeError {
            return CheckOutcome(target: target, host: name, result: .networkFailure(error))
        } catch let error as PincheckError {
            throw error
        } catch {
            throw PincheckError(.network, "\(error)")
        }
    }
}

/// The result of checking one host.
struct CheckOutcome: Sendable {
    enum Result: Sendable {
        case evaluated(ProbeResult, Verdict)
        case networkFailure(ProbeError)
    }

    let target: ProbeTarget
    let host: String
    let result: Result

    var status: ExitStatus {
        switch result {
        case .evaluated(_, let verdict): ExitStatus(verdict)
        case .networkFailure: .networkFailure
        }
    }

    var statusName: String {
        switch status {
        case .trusted: "trusted"
        case .notTrusted: "not-trusted"
        case .networkFailure: "network-error"
        case .badInput: "bad-input"
        case .reportNotWritten: "report-not-written"
        }
    }

    /// The `check --json` line of this host: the evaluation's JSON (VerdictJSON's fields) plus
    /// what the connection showed.
    var json: String { json(run: nil) }

    /// The `--json` line of this host; `scan` adds when and by what it was judged (`run`).
    func json(run: RunJSON?) -> String {
        var document: CheckJSON
        switch result {
        case .evaluated(let probe, let verdict):
            let evaluation = VerdictJSON(verdict, requestedHost: host)
            document = CheckJSON(
                target: target.description, status: statusName,
                body: .evaluated(
                    evaluation, ConnectionJSON(probe), probe.signedCertificateTimestamps.map(SignedCertificateTimestampJSON.init)))
        case .networkFailure(let error):
            document = CheckJSON(
                target: target.description, status: statusName,
                body: .networkFailure(
                    host: host, reason: ReasonJSON(code: error.code.description, message: error.message, evidence: nil)))
        }
        document.run = run
        return JSONLines.line(document)
    }
}

/// One `check --json` document: the evaluation's fields and the connection's, in one object.
struct CheckJSON: Encodable {
    enum Body {
        case evaluated(VerdictJSON, ConnectionJSON, [SignedCertificateTimestampJSON])
        case networkFailure(host: String?, reason: ReasonJSON)
    }

    let target: String
    let status: String
    let body: Body
    var run: RunJSON?

    private enum Keys: String, CodingKey {
        case target, status, connection, scts, trusted, disposition, host, reasons, warnings, chain, served, matchedPins
    }

    func encode(to encoder: any Encoder) throws {
        switch body {
        case .evaluated(let evaluation, let connection, let scts):
            // The evaluation's own fields first; JSONEncoder merges the keyed containers.
            try evaluation.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(connection, forKey: .connection)
            try container.encode(scts, forKey: .scts)
        case .networkFailure(let host, let reason):
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(false, forKey: .trusted)
            try container.encode(Disposition.cancelAuthenticationChallenge.name, forKey: .disposition)
            try container.encodeIfPresent(host, forKey: .host)
            try container.encode([reason], forKey: .reasons)
            for key in [Keys.warnings, .chain, .served, .matchedPins, .scts] { try container.encode([String](), forKey: key) }
        }
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(target, forKey: .target)
        try container.encode(status, forKey: .status)
        try run?.encode(to: encoder)
    }
}

/// What a `scan` record adds, so a fleet's records can be read later without scanning again:
/// when the host was checked, how long it took, and which build and data judged it.
struct RunJSON: Encodable, Sendable {
    struct JudgedBy: Encodable, Sendable {
        let pincheck = PincheckVersion.current
        let rootPrograms = RootPrograms.bundledProvenance
    }

    let checkedAt: String
    /// Resolution, connection, handshake and evaluation, in milliseconds.
    let elapsedMilliseconds: Int
    let judgedBy = JudgedBy()

    init(checkedAt: Date, elapsed: Duration) {
        self.checkedAt = Format.timestamp(checkedAt)
        let (seconds, attoseconds) = elapsed.components
        elapsedMilliseconds = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}

/// What the handshake showed, in `check --json`.
struct ConnectionJSON: Encodable {
    let address: String
    let port: Int
    let `protocol`: String
    let cipher: String
    let keyExchangeGroup: String?
    let stapledOCSP: Bool
    let alpn: String?
    let serverName: String?
    let stapledOCSPBytes: Int?
    let stapledOCSPStatus: String?

    init(_ probe: ProbeResult) {
        address = probe.peerAddress
        port = Int(probe.port)
        `protocol` = probe.protocolVersion
        cipher = probe.cipher
        keyExchangeGroup = probe.keyExchangeGroup
        stapledOCSP = probe.stapledOCSPResponse != nil
        alpn = probe.alpn
        serverName = probe.serverName
        stapledOCSPBytes = probe.stapledOCSPResponse?.count
        stapledOCSPStatus = probe.stapledOCSPStatus
    }
}

/// The human report of one `check`: the verdict's report, with the connection it came from, or
/// the network failure that left nothing to evaluate.
struct CheckReport {
    let outcome: CheckOutcome
    let console: Console

    func render() {
        switch outcome.result {
        case .networkFailure(let error):
            console.line("\(console.paint(console.paint("NETWORK ERROR", .red), .bold))  \(outcome.target) for \(outcome.host)")
            console.line()
            console.line("  \(console.paint(error.code.description, .red))  \(Terminal.printable(error.message))")
        case .evaluated(let probe, let verdict):
            var report = VerdictReport(verdict: verdict, subject: "\(outcome.target)", console: console)
            report.connection = probe
            report.render()
        }
    }
}
