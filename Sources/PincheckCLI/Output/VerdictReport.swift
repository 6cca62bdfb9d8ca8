import FoundationEssentials
import ServerTrust
import TrustEvaluator
import PincheckTLS

/// The human report of one evaluation, for every command that prints one (`verify`, `check`):
/// verdict first, then reasons, warnings, revocation, pins, paths, and for a connection what it
/// carried.
struct VerdictReport {
    let verdict: Verdict
    /// What was evaluated: a chain file, or the target connected to.
    let subject: String
    let console: Console
    /// Whether the verdict lets the connection go on (``Disposition``'s answer unless the command's differs).
    let allowed: Bool
    /// The connection the chain came from, when there was one: its SCTs and parameters are shown.
    var connection: ProbeResult? = nil

    init(verdict: Verdict, subject: String, console: Console) {
        self.verdict = verdict
        self.subject = subject
        self.console = console
        self.allowed = Disposition(serverTrust: verdict).allowsConnection
    }

    /// What to do about the refusals a development certificate meets first.
    static func hints(for verdict: Verdict) -> [String] {
        let codes = Set(verdict.failures.map(\.code))
        var hints: [String] = []
        if codes.contains(.selfSigned) {
            hints.append(
                "the chain ends at a self-signed certificate that is not an anchor: pass it with --ca-file FILE if you trust it, or pin it (--mode certificate --pin-cert FILE)"
            )
        }
        if codes.contains(.untrustedRoot) || codes.contains(.unknownIssuer) {
            hints.append(
                "no anchor issued this chain: a private or development CA (mkcert's rootCA.pem, easy-rsa's ca.crt) must be passed with --ca-file FILE; a missing intermediate must be served or given in the bundle"
            )
        }
        return hints
    }

    /// The first word of every human report: `TRUSTED`, with the report-only pin failures that
    /// did not count when there are some, or `NOT TRUSTED`.
    static func headline(_ verdict: Verdict, allowed: Bool, console: Console) -> String {
        allowed
            ? console.paint(verdict.reportOnlyFailures.isEmpty ? "TRUSTED" : "TRUSTED (report-only pin failure)", .green)
            : console.paint("NOT TRUSTED", .red)
    }

    func render() {
        let headline = Self.headline(verdict, allowed: allowed, console: console)
        let name = verdict.checkedHost.map { "for \($0)" } ?? "(no host name checked)"
        console.line("\(console.paint(headline, .bold))  \(subject) \(name) at \(Format.timestamp(verdict.evaluationTime))")

        if !verdict.failures.isEmpty {
            console.line()
            console.line("Reasons:")
            for reason in verdict.failures { reasonLines(reason.code.description, reason.message, .red) }
            for hint in Self.hints(for: verdict) { console.line("  hint: \(hint)") }
        }
        if !verdict.reportOnlyFailures.isEmpty {
            console.line()
            console.line("Recorded failures (report-only):")
            for reason in verdict.reportOnlyFailures { reasonLines(reason.code.description, reason.message, .red) }
        }
        let warnings = verdict.warnings.map { ($0.code.description, $0.message) }
        if !warnings.isEmpty {
            console.line()
            console.line("Warnings:")
            for (code, message) in warnings { reasonLines(code, message, .yellow) }
        }
        Self.revocationSection(verdict, console)
        if !verdict.matchedPins.isEmpty {
            console.line()
            console.line("Pins matched:")
            for match in verdict.matchedPins {
                console.line("  \(console.paint(match.pin.description, .green))  depth \(match.depth)  \(match.certificate.subject)")
            }
        }
        console.line()
        if let shown = Format.reportedPath(verdict) {
            console.line(shown.heading)
            certificateTable(shown.path.certificates, matched: shown.pinnedDepths)
        } else {
            console.line("Verified path: none could be built.")
        }
        Self.rootProgramLine(verdict, console)
        console.line()
        let count = "\(verdict.servedChain.count) certificate\(verdict.servedChain.count == 1 ? "" : "s")"
        console.line("Served chain (\(count)\(connection == nil ? "" : ", as sent")):")
        certificateTable(verdict.servedChain, matched: [])
        if verdict.certificateTransparency != nil {
            // Under a CT policy every SCT is verified and judged: the policy's section says how.
            Self.transparencySection(verdict, console)
        } else if let connection, !connection.signedCertificateTimestamps.isEmpty {
            console.line()
            console.line("Signed certificate timestamps (captured, not verified):")
            sctTable(connection.signedCertificateTimestamps)
        }
        if let probe = connection {
            console.line()
            let ocsp = probe.stapledOCSPResponse.map { "stapled (\(probe.stapledOCSPStatus ?? "?"), \($0.count) bytes)" } ?? "not stapled"
            console.line(
                "Connection: \(probe.peerAddress) port \(probe.port), SNI \(probe.serverName ?? "none"), \(probe.protocolVersion) \(probe.cipher), group \(probe.keyExchangeGroup ?? "none"), ALPN \(probe.alpn ?? "none"), OCSP \(ocsp)"
            )
        }
    }

    /// The anchor's root programs and their dates, and which data said so.
    static func rootProgramLine(_ verdict: Verdict, _ console: Console) {
        guard let answer = verdict.rootPrograms else { return }
        let kind = answer.anchorIsPublic ? "public" : "private"
        let programs = answer.anchor.map { "\(Terminal.printable($0.name)): \($0.programSummary)" } ?? "in no root program"
        console.line("Anchor: \(kind), \(programs)")
        console.line("  root-program data: \(answer.sources.isEmpty ? "none" : answer.sources.map(\.description).joined(separator: "; "))")
    }

    /// What the CRL distribution points said, one line each (nothing when none was consulted).
    static func revocationSection(_ verdict: Verdict, _ console: Console) {
        guard !verdict.revocationStatuses.isEmpty else { return }
        console.line()
        console.line("Revocation (CRL distribution points):")
        for status in verdict.revocationStatuses {
            let colour: Console.Colour =
                switch status.outcome {
                case .good: .green
                case .revoked: .red
                default: .yellow
                }
            let dates =
                status.thisUpdate.map { " (CRL of \(Format.timestamp($0))\(status.nextUpdate.map { ", next \(Format.timestamp($0))" } ?? ""))" } ?? ""
            let source = Terminal.printable(status.url ?? "no distribution point")
            console.line(
                "  \(status.depth)  \(console.paint(status.outcome.rawValue, colour))  \(source)\(dates): \(Terminal.printable(status.detail))")
        }
    }

    /// The CT policy's answer and one line per SCT: log, operator, time, verified and counted or why not.
    static func transparencySection(_ verdict: Verdict, _ console: Console) {
        guard let assessment = verdict.certificateTransparency else { return }
        let (answer, detail) = Format.compliance(assessment.compliance)
        let colour: Console.Colour =
            switch assessment.compliance {
            case .compliant: .green
            case .notApplicable: .bold
            case .notCompliant, .unenforceable: .red
            }
        console.line()
        console.line(
            "Certificate Transparency (\(assessment.policy.rawValue) policy): \(console.paint(answer, colour))\(detail.map { ": \(Terminal.printable($0))" } ?? "")"
        )
        guard !assessment.timestamps.isEmpty else {
            console.line("  no SCT: the certificate carries none, and none came in the TLS extension or a staple")
            return
        }
        var table = Table()
        for checked in assessment.timestamps {
            let log = checked.log.map { "\($0.description) (\($0.operatorName))" } ?? checked.sct.logIDBase64
            let status = checked.status == .verified ? console.paint("verified", .green) : console.paint(checked.status.rawValue, .red)
            table.add([
                checked.sct.source.rawValue, Terminal.printable(log), Format.timestamp(checked.sct.timestamp), status,
                Terminal.printable(checked.note),
            ])
        }
        table.render(indent: "  ").forEach(console.line)
    }

    private func reasonLines(_ code: String, _ message: String, _ colour: Console.Colour) {
        // Messages quote what the peer sent (its names): no control character reaches the terminal.
        let lines = Terminal.printable(message, keepingNewlines: true).split(separator: "\n", omittingEmptySubsequences: false)
        console.line("  \(console.paint(code, colour))  \(lines.first ?? "")")
        for line in lines.dropFirst() { console.line("    \(line)") }
    }

    /// One line per SCT: where it came from, the log (base64 ID, shortened), when, how signed.
    private func sctTable(_ timestamps: [SignedCertificateTimestamp]) {
        var table = Table()
        for sct in timestamps {
            guard sct.isVersion1 else {
                table.add([sct.source.rawValue, "version \(Format.sctVersion(sct)), not read"])
                continue
            }
            table.add([
                sct.source.rawValue, "log \(sct.logIDBase64.prefix(12))…",
                Format.timestamp(milliseconds: sct.timestampMilliseconds), sct.signatureAlgorithm ?? "unknown signature algorithm",
            ])
        }
        table.render(indent: "  ").forEach(console.line)
    }

    /// Two lines per certificate: subject, key and expiry; issuer and key pin (marked when pinned).
    private func certificateTable(_ certificates: [Certificate], matched: Set<Int>) {
        var table = Table()
        for (depth, certificate) in certificates.enumerated() {
            let days = Format.daysLeft(certificate, at: verdict.evaluationTime)
            let expiry =
                days < 0
                ? console.paint("expired \(Format.day(certificate.notAfter))", .red)
                : "expires \(Format.day(certificate.notAfter)) (\(days) days left)"
            let pin =
                matched.contains(depth)
                ? console.paint("\(certificate.publicKeyPin) ✓ pinned", .green)
                : certificate.publicKeyPin.description
            table.add(["\(depth)", certificate.subject, "\(certificate.publicKey) key, \(expiry)"])
            table.add(["", "issuer: \(certificate.issuer)", pin])
        }
        table.render(indent: "  ").forEach(console.line)
    }
}
