import ArgumentParser
import FoundationEssentials
import PincheckTLS
import ServerTrust
import TrustEvaluator

/// One host's audit.
package struct AuditResult {
    package enum Outcome {
        case evaluated(Verdict)
        case networkFailure(ProbeError)
    }

    package let name: String
    let target: ProbeTarget
    package let outcome: Outcome

    /// Where it connected, as its JSON record's `address` spells it.
    package var address: String { AuditPlan.Entry(name: name, target: target).address }

    package var status: ExitStatus {
        switch outcome {
        case .networkFailure: .networkFailure
        case .evaluated(let verdict): ExitStatus(verdict)
        }
    }

    /// - Throws: `PincheckError` only when the chain cannot be judged at all (bad input).
    package static func run(
        _ entry: AuditPlan.Entry, manager: TrustManager, fetcher: RevocationListFetcher, probe: TLSProbe,
        at time: Date
    ) throws(PincheckError) -> AuditResult {
        let served: ProbeResult
        do {
            served = try probe.probe(entry.target, serverName: entry.name)
        } catch {
            return AuditResult(name: entry.name, target: entry.target, outcome: .networkFailure(error))
        }
        let verdict = try manager.evaluate(
            served.servedChain, host: entry.name, port: Int(entry.target.port), at: time,
            stapledOCSPResponse: served.stapledOCSPResponse, waitingForRevocationListsFrom: fetcher)
        return AuditResult(name: entry.name, target: entry.target, outcome: .evaluated(verdict))
    }

    /// The active pins of the host's policy (every pin set that has not expired, enforced or not).
    package static func activePins(_ verdict: Verdict) -> [PublicKeyPin] {
        verdict.hostPolicy?.pinSets.filter { $0.isActive(at: verdict.evaluationTime) }.flatMap(\.keyPins) ?? []
    }

    /// Pins of the policy that no certificate of the current chain (served, or the path built) carries.
    static func backupPins(_ verdict: Verdict) -> [PublicKeyPin] {
        let onChain = verdict.servedChain + ((verdict.verifiedPath ?? verdict.builtPath)?.certificates ?? [])
        return activePins(verdict).filter { pin in !onChain.contains { pin.matches($0) } }
    }

    /// The engine's backup-pin finding for this host (``BackupPinCheck``), if it has one.
    static func backupPinWarning(_ verdict: Verdict) -> Reason? {
        verdict.warnings.first { $0.code == .noBackupPin }
    }

    /// What the root programs say that will hurt: the chain ends at a root a program has
    /// distrusted or scheduled, or a pinned root is in no program while the host's chain is public.
    static func rootProgramNotes(_ verdict: Verdict) -> [String] {
        guard let answer = verdict.rootPrograms else { return [] }
        var notes: [String] = []
        if let root = answer.anchor, root.isDistrustedOrScheduled {
            notes.append("the chain ends at \(root.name): \(root.programSummary); the host must move to another CA, and pins on this one with it")
        }
        if answer.anchorIsPublic {
            let pinnedRoots =
                verdict.hostPolicy?.pinSets.filter { $0.isActive(at: verdict.evaluationTime) }.flatMap(\.pinnedCertificates)
                .filter { $0.isSelfSigned && $0.isCertificateAuthority } ?? []
            let programs = verdict.hostPolicy?.validationPolicy.rootPrograms.data ?? .bundled
            for root in pinnedRoots where programs.root(for: root) == nil {
                notes.append(
                    "the pinned root \(root.subject) is in no root program while the host's chain is public: that pin matches only if the host moves to this private CA"
                )
            }
        }
        return notes
    }

    /// What a routine renewal with a new leaf key (same CA) would do.
    static func leafRotation(_ verdict: Verdict) -> String {
        let pins = activePins(verdict)
        guard !pins.isEmpty else { return "not pinned: a new leaf key changes nothing" }
        if let deepest = verdict.pinsFound.filter({ $0.depth > 0 }).map(\.depth).min() {
            return "survives: a pin matches at depth \(deepest), above the leaf"
        }
        guard verdict.pinsCompared else { return "unknown: the chain is refused before its pins are compared" }
        guard !verdict.pinsFound.isEmpty else { return "already refused: no pin matches the current chain" }
        let backups = backupPins(verdict).count
        if backups > 0 {
            return "survives only if the new leaf key is one of the \(backups) backup pin\(backups == 1 ? "" : "s")"
        }
        return "would break: only the leaf key is pinned and there is no backup pin"
    }

    func render(to console: Console) {
        let header = "\(name) (\(target.host):\(target.port))"
        switch outcome {
        case .networkFailure(let error):
            console.line("\(header): \(console.paint("NO CONNECTION", .red)) — \(error)")
        case .evaluated(let verdict):
            let disposition = Disposition(serverTrust: verdict)
            let label = disposition.allowsConnection ? console.paint("ALLOWED", .green) : console.paint("REFUSED", .red)
            console.line("\(header): \(label) (\(disposition.name), \(verdict.coverage))")
            for reason in verdict.failures { console.line("  \(reason.code): \(reason.message.split(separator: "\n").first ?? "")") }
            for reason in verdict.reportOnlyFailures { console.line("  report-only \(reason.code)") }
            var table = Table()
            if let policy = verdict.hostPolicy { table.add(["policy", "\(policy.pattern)"]) }
            let pins = Self.activePins(verdict)
            if pins.isEmpty {
                table.add(["pins", "none (default validation)"])
            } else {
                for match in verdict.pinsFound {
                    table.add(["matched", "\(match.pin) at depth \(match.depth): \(match.certificate.subject)"])
                }
                if verdict.pinsFound.isEmpty {
                    table.add([
                        "matched",
                        verdict.pinsCompared
                            ? "no pin matches the verified path"
                            : "not compared: the chain is refused before its pins are",
                    ])
                }
                let backups = Self.backupPins(verdict)
                if let warning = Self.backupPinWarning(verdict) {
                    table.add(["backup", console.paint(warning.message, .yellow)])
                } else {
                    table.add(["backup", "\(backups.count) pin\(backups.count == 1 ? "" : "s") not on the current chain"])
                }
                for match in verdict.pinsFound {
                    table.add([
                        "expires",
                        "depth \(match.depth) in \(Format.daysLeft(match.certificate, at: verdict.evaluationTime)) days (\(Format.day(match.certificate.notAfter)))",
                    ])
                }
            }
            table.add(["leaf rotation", Self.leafRotation(verdict)])
            for note in Self.rootProgramNotes(verdict) { table.add(["root program", console.paint(note, .yellow)]) }
            for status in verdict.revocationStatuses {
                table.add([
                    "revocation",
                    "depth \(status.depth) \(status.outcome.rawValue): \(Terminal.printable(status.url ?? "no CRL distribution point"))",
                ])
            }
            table.render(indent: "  ").forEach(console.line)
        }
    }

    var jsonLine: String { JSONLines.line(jsonObject) }

    /// The fields of its `--json` record.
    package var jsonObject: [String: JSONValue] {
        var object: [String: JSONValue] = ["host": .string(name), "address": .string(address)]
        switch outcome {
        case .networkFailure(let error):
            object["outcome"] = .string("network-failure")
            object["error"] = .string("\(error)")
        case .evaluated(let verdict):
            let disposition = Disposition(serverTrust: verdict)
            object["outcome"] = .string(disposition.allowsConnection ? "allowed" : "refused")
            object["disposition"] = .string(disposition.name)
            object["coverage"] = .string("\(verdict.coverage)")
            object["policy"] = verdict.hostPolicy.map { .string("\($0.pattern)") } ?? .null
            object["reasons"] = .array(verdict.failures.map { .string("\($0.code)") })
            object["reportOnly"] = .array(verdict.reportOnlyFailures.map { .string("\($0.code)") })
            object["pinsCompared"] = .bool(verdict.pinsCompared)
            object["matchedPins"] = .array(
                verdict.pinsFound.map { match in
                    .object([
                        "pin": .string("\(match.pin)"), "depth": .number(Double(match.depth)), "subject": .string(match.certificate.subject),
                        "daysLeft": .number(Double(Format.daysLeft(match.certificate, at: verdict.evaluationTime))),
                        "notAfter": .string(Format.timestamp(match.certificate.notAfter)),
                    ])
                })
            object["pins"] = .array(Self.activePins(verdict).map { .string("\($0)") })
            object["backupPins"] = .array(Self.backupPins(verdict).map { .string("\($0)") })
            object["noBackupPin"] = Self.backupPinWarning(verdict).map { .string($0.message) } ?? .null
            object["revocation"] = .array(
                verdict.revocationStatuses.map { status in
                    .object([
                        "depth": .number(Double(status.depth)), "outcome": .string(status.outcome.rawValue),
                        "url": status.url.map(JSONValue.string) ?? .null, "detail": .string(status.detail),
                    ])
                })
            object["leafRotation"] = .string(Self.leafRotation(verdict))
            object["rootProgramNotes"] = .array(Self.rootProgramNotes(verdict).map(JSONValue.string))
        }
        return object
    }
}
