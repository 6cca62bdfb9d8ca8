import FoundationEssentials
import PincheckCLI
import Prometheus
import ServerTrust
import TrustEvaluator

/// What `pincheck watch` exports: per host, into swift-prometheus's registry (with each metric's
/// HELP), which `/metrics` renders in the text exposition format.
///
/// Every series carries `host` (the name the configuration pins) and `address` (where it
/// connects). Values that a check could not establish are NaN (Prometheus's "no value": an alert
/// comparing it is never true), never a made-up 0.
final class WatchMetrics: Sendable {
    /// The metric names, documented in docs/watch.md.
    enum Name {
        static let leafExpiryDays = "pincheck_watch_leaf_expiry_days"
        static let pinExpiryDays = "pincheck_watch_pin_expiry_days"
        static let pinned = "pincheck_watch_pinned"
        static let pinsMatch = "pincheck_watch_pins_match"
        static let allowed = "pincheck_watch_allowed"
        static let reachable = "pincheck_watch_reachable"
        static let ctCompliant = "pincheck_watch_ct_compliant"
        static let revocation = "pincheck_watch_revocation_status"
        static let lastCheck = "pincheck_watch_last_check_timestamp_seconds"
        static let lastSuccess = "pincheck_watch_last_handshake_timestamp_seconds"
        static let checkSeconds = "pincheck_watch_check_duration_seconds"
        static let checks = "pincheck_watch_checks_total"
        static let rounds = "pincheck_watch_rounds_total"
    }

    /// Each metric's HELP line (docs/watch.md's table says the same).
    static let help: [String: String] = [
        Name.leafExpiryDays: "Days from the evaluation time to the served leaf's notAfter (negative: expired).",
        Name.pinExpiryDays: "Days until the last certificate a pin matches expires; NaN when no pin matches.",
        Name.pinned: "1 when the host's policy has active pins, else 0.",
        Name.pinsMatch: "1 when a pin matches the verified path, else 0 (also 0 for a host without pins).",
        Name.allowed: "1 when the app would connect (Pincheck's disposition), else 0 (also 0 when not reached).",
        Name.reachable: "1 when the last check completed a handshake, else 0.",
        Name.ctCompliant: "1 compliant with the policy's CT rules, 0 not (or not judgeable), NaN when no CT policy applies.",
        Name.revocation: "Worst revocation status over the path: 0 good, 1 revoked, 2 unknown; NaN when not checked.",
        Name.lastCheck: "Unix time the last check of the host started.",
        Name.lastSuccess: "Unix time of the last check that completed a handshake.",
        Name.checkSeconds: "How long the last check took: resolution, handshake, evaluation, CRL fetches.",
        Name.checks: "Checks of the host, by outcome (allowed, refused, network-failure).",
        Name.rounds: "Rounds finished: every host checked once.",
    ]

    /// A metric's whole name (its unit already in it) with its HELP text.
    static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help[name] ?? "")
    }

    let registry = PrometheusCollectorRegistry()

    init() {}

    /// The exposition, as `/metrics` serves it.
    func exposition() -> [UInt8] { Self.exposition(registry.emitToBuffer()) }

    /// The registry's text with its special values spelled as the exposition format spells them:
    /// swift-prometheus writes Swift's `nan`, `inf` and `-inf`; the format says `NaN`, `+Inf`, `-Inf`.
    static func exposition(_ emitted: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(emitted.count + 64)
        for line in emitted.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast(
            emitted.last == UInt8(ascii: "\n") ? 1 : 0)
        {
            if line.first != UInt8(ascii: "#"), let space = line.lastIndex(of: UInt8(ascii: " ")) {
                let value = line[line.index(after: space)...]
                let spelled: String? =
                    switch String(decoding: value, as: UTF8.self) {
                    case "nan", "-nan": "NaN"
                    case "inf", "+inf": "+Inf"
                    case "-inf": "-Inf"
                    default: nil
                    }
                if let spelled {
                    out += line[...space]
                    out += Array(spelled.utf8)
                    out.append(UInt8(ascii: "\n"))
                    continue
                }
            }
            out += line
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    func roundFinished() {
        registry.makeCounter(descriptor: Self.descriptor(Name.rounds), labels: []).increment()
    }

    /// Records one host's check. `checkedAt` is the wall clock (when it ran); expiries are counted
    /// from the verdict's evaluation time (`--at`, else the time of the check).
    func record(_ result: AuditResult, checkedAt: Date, duration: Duration) {
        let labels = [("host", result.name), ("address", result.address)]
        func gauge(_ name: String, _ value: Double) { registry.makeGauge(descriptor: Self.descriptor(name), labels: labels).set(value) }
        let (seconds, attoseconds) = duration.components
        gauge(Name.checkSeconds, Double(seconds) + Double(attoseconds) / 1e18)
        gauge(Name.lastCheck, checkedAt.timeIntervalSince1970)
        let outcome: String
        switch result.outcome {
        case .networkFailure:
            outcome = "network-failure"
            gauge(Name.reachable, 0)
            gauge(Name.allowed, 0)
        // The certificate gauges keep what the last handshake showed: a host that cannot be
        // reached says nothing new about its certificate (the last handshake's time says how old).
        case .evaluated(let verdict):
            let allowed = Disposition(serverTrust: verdict).allowsConnection
            outcome = allowed ? "allowed" : "refused"
            gauge(Name.reachable, 1)
            gauge(Name.allowed, allowed ? 1 : 0)
            gauge(Name.lastSuccess, checkedAt.timeIntervalSince1970)
            let values = Self.values(of: verdict)
            gauge(Name.leafExpiryDays, values.leafExpiryDays)
            gauge(Name.pinExpiryDays, values.pinExpiryDays)
            gauge(Name.pinned, values.pinned ? 1 : 0)
            gauge(Name.pinsMatch, values.pinsMatch ? 1 : 0)
            gauge(Name.ctCompliant, values.ctCompliant)
            gauge(Name.revocation, values.revocation)
        }
        registry.makeCounter(descriptor: Self.descriptor(Name.checks), labels: labels + [("outcome", outcome)]).increment()
    }

    /// The certificate gauges of one verdict.
    struct Values: Equatable {
        var leafExpiryDays: Double
        /// The latest expiry among the certificates a pin matched: when the last matching pin stops
        /// matching (NaN when none matches).
        var pinExpiryDays: Double
        var pinned: Bool
        var pinsMatch: Bool
        /// 1 compliant, 0 not (or not judgeable), NaN when no CT policy applies.
        var ctCompliant: Double
        /// The worst over the path: 0 good, 1 revoked, 2 unknown (no CRL covers it, unavailable,
        /// stale); NaN when revocation was not checked.
        var revocation: Double

        static func == (a: Values, b: Values) -> Bool {
            func same(_ x: Double, _ y: Double) -> Bool { x == y || (x.isNaN && y.isNaN) }
            return same(a.leafExpiryDays, b.leafExpiryDays) && same(a.pinExpiryDays, b.pinExpiryDays) && a.pinned == b.pinned
                && a.pinsMatch == b.pinsMatch && same(a.ctCompliant, b.ctCompliant) && same(a.revocation, b.revocation)
        }
    }

    static func values(of verdict: Verdict) -> Values {
        let time = verdict.evaluationTime
        func days(_ certificate: Certificate) -> Double { certificate.notAfter.timeIntervalSince(time) / 86_400 }
        let ct: Double =
            switch verdict.certificateTransparency?.compliance {
            case .compliant: 1
            case .notCompliant, .unenforceable: 0
            case .notApplicable, nil: .nan
            }
        // Worst first: revoked, then unknown, then good.
        let severity = verdict.revocationStatuses.map { status -> Int in
            switch status.outcome {
            case .good: 0
            case .notCovered, .unavailable, .stale: 1
            case .revoked: 2
            }
        }.max()
        let revocation: Double =
            switch severity {
            case nil: .nan
            case 0: 0
            case 2: 1
            default: 2
            }
        return Values(
            leafExpiryDays: verdict.servedChain.first.map(days) ?? .nan,
            pinExpiryDays: verdict.pinsFound.map { days($0.certificate) }.max() ?? .nan,
            pinned: !AuditResult.activePins(verdict).isEmpty,
            pinsMatch: !verdict.pinsFound.isEmpty,
            ctCompliant: ct, revocation: revocation)
    }
}
