import Logging
import TrustEvaluator

/// What Pincheck's stacks log, through swift-log (the SSWG convention: the library takes a
/// `Logger`, the application chooses where it goes; nothing is printed by default).
///
/// - `.debug`: every trust decision, with the host, the disposition, the rule (coverage) and the
///   reason codes.
/// - `.warning`: pin sets that have expired (the host is no longer pinned) and failure reports
///   that could not be delivered.
public enum TrustLogging {
    /// A logger that discards everything: the default of every Pincheck type that logs.
    public static let silent = Logger(label: "pincheck", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Logs one server-trust decision.
    /// - Parameters:
    ///   - verdict: What the engine found.
    ///   - host: The host connected to.
    ///   - logger: Where it goes.
    public static func log(_ verdict: Verdict, host: String, to logger: Logger) {
        let disposition = Disposition(serverTrust: verdict)
        logger.debug(
            "trust decision",
            metadata: [
                "host": "\(host)",
                "disposition": "\(disposition.name)",
                "coverage": "\(verdict.coverage.rawValue)",
                "reasons": .array(verdict.failures.map { "\($0.code)" }),
                "reportOnly": .array(verdict.reportOnlyFailures.map { "\($0.code)" }),
            ])
        for warning in verdict.warnings where warning.code == .pinSetExpired {
            logger.warning(
                "pin set expired: the host is validated without pins",
                metadata: [
                    "host": "\(host)", "detail": "\(warning.message)",
                ])
        }
    }

    /// Logs a failure report that could not be delivered.
    public static func logUndelivered(_ report: PinFailureReport, error: any Error, to logger: Logger) {
        logger.warning(
            "pin failure report not delivered",
            metadata: [
                "host": "\(report.hostname)", "port": "\(report.port)",
                "reportURIs": .array(report.reportURIs.map { "\($0.absoluteString)" }), "error": "\(error)",
            ])
    }

    /// An `UpdatableTrustManager`'s events as log records: an accepted update at `.notice`, a
    /// refused one or an ignored stored one at `.warning` with its code.
    ///
    /// ```swift
    /// UpdatableTrustManager(compiledIn: manager, keys: [key], events: TrustLogging.updateEvents(to: logger))
    /// ```
    public static func updateEvents(to logger: Logger) -> @Sendable (UpdatableTrustManager.Event) -> Void {
        { event in
            switch event {
            case .accepted(let serial, let expires):
                logger.notice("pin-set update accepted", metadata: ["serial": "\(serial)", "expires": "\(Timestamp.iso8601(expires))"])
            case .refused(let error):
                logger.warning("pin-set update refused", metadata: ["code": "\(error.code.rawValue)", "detail": "\(error.message)"])
            case .storedUpdateIgnored(let error):
                logger.warning("stored pin-set update ignored", metadata: ["code": "\(error.code.rawValue)", "detail": "\(error.message)"])
            }
        }
    }
}
