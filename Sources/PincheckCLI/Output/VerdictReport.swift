import FoundationEssentials
import ServerTrust
import TrustEvaluator

/// The human-readable report of one evaluation: verdict first, then reasons, warnings, paths.
struct VerdictReport {
    let verdict: Verdict
    let subject: String
    let console: Console
    /// What to do about the refusals a development certificate meets first.
    static func hints(for verdict: Verdict) -> [String] {
        let codes = Set(verdict.failures.map(\.code))
        var hints: [String] = []
        if codes.contains(.selfSigned) {
            hints.append("the chain ends at a self-signed certificate that is not an anchor: pass it with --ca-file FILE if you trust it, or pin it (--mode certificate --pin-cert FILE)")
        }
        if codes.contains(.untrustedRoot) || codes.contains(.unknownIssuer) {
            hints.append("no anchor issued this chain: a private or development CA (mkcert's rootCA.pem, easy-rsa's ca.crt) must be passed with --ca-file FILE; a missing intermediate must be served or given in the bundle")
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
        let time = Format.timestamp(verdict.evaluationTime)
        let allowed = Disposition(serverTrust: verdict).allowsConnection
        let headline = Self.headline(verdict, allowed: allowed, console: console)
        let name = verdict.checkedHost.map { "for \($0)" } ?? "(no host name checked)"
        console.line("\(console.paint(headline, .bold))  \(subject) \(name) at \(time)")

        if !verdict.failures.isEmpty {
            console.line()
            console.line("Reasons:")
            for reason in verdict.failures { reasonLines(reason, colour: .red) }
            for hint in Self.hints(for: verdict) { console.line("  hint: \(hint)") }
        }
        if !verdict.reportOnlyFailures.isEmpty {
            console.line()
            console.line("Recorded failures (report-only):")
            for reason in verdict.reportOnlyFailures { reasonLines(reason, colour: .red) }
        }
        if !verdict.warnings.isEmpty {
            console.line()
            console.line("Warnings:")
            for reason in verdict.warnings { reasonLines(reason, colour: .yellow) }
        }
        Self.revocationSection(verdict, console)
        Self.transparencySection(verdict, console)
        if let shown = Format.reportedPath(verdict) {
            console.line()
            console.line(shown.heading)
            certificateTable(shown.path.certificates, matched: shown.pinnedDepths)
        }
        console.line()
        console.line("Served chain (\(verdict.servedChain.count) certificate\(verdict.servedChain.count == 1 ? "" : "s")):")
        certificateTable(verdict.servedChain, matched: [])
    }

    /// What the CRL distribution points said, one line each (nothing when none was consulted).
    static func revocationSection(_ verdict: Verdict, _ console: Console) {
        guard !verdict.revocationStatuses.isEmpty else { return }
        console.line()
        console.line("Revocation (CRL distribution points):")
        for status in verdict.revocationStatuses {
            let colour: Console.Colour = switch status.outcome {
            case .good: .green
            case .revoked: .red
            default: .yellow
            }
            let dates = status.thisUpdate.map { " (CRL of \(Format.timestamp($0))\(status.nextUpdate.map { ", next \(Format.timestamp($0))" } ?? ""))" } ?? ""
            let source = Terminal.printable(status.url ?? "no distribution point")
            console.line("  \(status.depth)  \(console.paint(status.outcome.rawValue, colour))  \(source)\(dates): \(Terminal.printable(status.detail))")
        }
    }

    /// The CT policy's answer and one line per SCT: log, operator, time, verified and counted or why not.
    static func transparencySection(_ verdict: Verdict, _ console: Console) {
        guard let assessment = verdict.certificateTransparency else { return }
        let (answer, detail) = Format.compliance(assessment.compliance)
        let colour: Console.Colour = switch assessment.compliance {
        case .compliant: .green
        case .notApplicable: .bold
        case .notCompliant, .unenforceable: .red
        }
        console.line()
        console.line("Certificate Transparency (\(assessment.policy.rawValue) policy): \(console.paint(answer, colour))\(detail.map { ": \(Terminal.printable($0))" } ?? "")")
        guard !assessment.timestamps.isEmpty else {
            console.line("  no SCT: the certificate carries none, and none came in the TLS extension or a staple")
            return
        }
        var table = Table()
        for checked in assessment.timestamps {
            let log = checked.log.map { "\($0.description) (\($0.operatorName))" } ?? checked.sct.logIDBase64
            let status = checked.status == .verified ? console.paint("verified", .green) : console.paint(checked.status.rawValue, .red)
            table.add([checked.sct.source.rawValue, Terminal.printable(log), Format.timestamp(checked.sct.timestamp), status,
                       Terminal.printable(checked.note)])
        }
        table.render(indent: "  ").forEach(console.line)
    }

    private func reasonLines(_ reason: Reason, colour: Console.Colour) {
        // Messages quote what the peer sent (its names): no control character reaches the terminal.
        let lines = Terminal.printable(reason.message, keepingNewlines: true).split(separator: "\n", omittingEmptySubsequences: false)
        console.line("  \(console.paint(reason.code.description, colour))  \(lines.first ?? "")")
        for line in lines.dropFirst() { console.line("    \(line)") }
    }

    private func certificateTable(_ certificates: [Certificate], matched: Set<Int>) {
        var table = Table()
        for (depth, certificate) in certificates.enumerated() {
            let days = Format.daysLeft(certificate, at: verdict.evaluationTime)
            let expiry = days < 0
                ? console.paint("expired \(Format.day(certificate.notAfter))", .red)
                : "expires \(Format.day(certificate.notAfter)) (\(days) days)"
            let pin = matched.contains(depth) ? console.paint("\(certificate.publicKeyPin) ✓ pinned", .green) : certificate.publicKeyPin.description
            table.add(["\(depth)", certificate.subject, expiry, pin])
        }
        table.render(indent: "  ").forEach(console.line)
    }
}
