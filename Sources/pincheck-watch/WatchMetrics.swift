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
        static let leafExpirySeconds = "pincheck_watch_leaf_expiry_seconds"
        static let pinExpirySeconds = "pincheck_watch_pin_expiry_seconds"
        static let leafNotBefore = "pincheck_watch_leaf_not_before_timestamp_seconds"
        static let leafNotAfter = "pincheck_watch_leaf_not_after_timestamp_seconds"
        static let leafLifetime = "pincheck_watch_leaf_lifetime_seconds"
        /// The day gauges of 0.9, served only with `--days-gauges` (Prometheus's base unit is the second).
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
        Name.leafExpirySeconds: "Seconds from the evaluation time to the served leaf's notAfter (negative: expired).",
        Name.pinExpirySeconds: "Seconds until the last certificate a pin matches expires; NaN when no pin matches.",
        Name.leafNotBefore: "The served leaf's notBefore, as Unix time.",
        Name.leafNotAfter: "The served leaf's notAfter, as Unix time.",
        Name.leafLifetime: "The served leaf's lifetime, notAfter minus notBefore, in seconds.",
        Name.leafExpiryDays: "Deprecated (--days-gauges): pincheck_watch_leaf_expiry_seconds in days.",
        Name.pinExpiryDays: "Deprecated (--days-gauges): pincheck_watch_pin_expiry_seconds in days.",
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
    /// Whether the day gauges of 0.9 are served beside the seconds (`--days-gauges`).
    let daysGauges: Bool

    init(daysGauges: Bool = false) { self.daysGauges = daysGauges }

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
            gauge(Name.leafExpirySeconds, values.leafExpirySeconds)
            gauge(Name.pinExpirySeconds, values.pinExpirySeconds)
            gauge(Name.leafNotBefore, values.leafNotBefore)
            gauge(Name.leafNotAfter, values.leafNotAfter)
            gauge(Name.leafLifetime, values.leafNotAfter - values.leafNotBefore)
            if daysGauges {
                gauge(Name.leafExpiryDays, values.leafExpirySeconds / 86_400)
                gauge(Name.pinExpiryDays, values.pinExpirySeconds / 86_400)
            }
            gauge(Name.pinned, values.pinned ? 1 : 0)
            gauge(Name.pinsMatch, values.pinsMatch ? 1 : 0)
            gauge(Name.ctCompliant, values.ctCompliant)
            gauge(Name.revocation, values.revocation)
        }
        registry.makeCounter(descriptor: Self.descriptor(Name.checks), labels: labels + [("outcome", outcome)]).increment()
    }

    /// The certificate gauges of one verdict.
    struct Values: Equatable {
        var leafExpirySeconds: Double
        /// The latest expiry among the certificates a pin matched: when the last matching pin stops
        /// matching (NaN when none matches).
        var pinExpirySeconds: Double
        /// The leaf's validity, as Unix times (NaN without a leaf).
        var leafNotBefore: Double
        var leafNotAfter: Double
        var pinned: Bool
        var pinsMatch: Bool
        /// 1 compliant, 0 not (or not judgeable), NaN when no CT policy applies.
        var ctCompliant: Double
        /// The worst over the path: 0 good, 1 revoked, 2 unknown (no CRL covers it, unavailable,
        /// stale); NaN when revocation was not checked.
        var revocation: Double

        static func == (a: Values, b: Values) -> Bool {
            func same(_ x: Double, _ y: Double) -> Bool { x == y || (x.isNaN && y.isNaN) }
            return same(a.leafExpirySeconds, b.leafExpirySeconds) && same(a.pinExpirySeconds, b.pinExpirySeconds)
                && same(a.leafNotBefore, b.leafNotBefore) && same(a.leafNotAfter, b.leafNotAfter) && a.pinned == b.pinned
                && a.pinsMatch == b.pinsMatch && same(a.ctCompliant, b.ctCompliant) && same(a.revocation, b.revocation)
        }
    }

    static func values(of verdict: Verdict) -> Values {
        let time = verdict.evaluationTime
        func left(_ certificate: Certificate) -> Double { certificate.notAfter.timeIntervalSince(time) }
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
            leafExpirySeconds: verdict.servedChain.first.map(left) ?? .nan,
            pinExpirySeconds: verdict.pinsFound.map { left($0.certificate) }.max() ?? .nan,
            leafNotBefore: verdict.servedChain.first?.notBefore.timeIntervalSince1970 ?? .nan,
            leafNotAfter: verdict.servedChain.first?.notAfter.timeIntervalSince1970 ?? .nan,
            pinned: !AuditResult.activePins(verdict).isEmpty,
            pinsMatch: !verdict.pinsFound.isEmpty,
            ctCompliant: ct, revocation: revocation)
    }
}
