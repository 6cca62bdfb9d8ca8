import FoundationEssentials
internal import PincheckOpenSSL

/// Certificate Transparency (RFC 6962): SCT verification against the logs of published log lists,
/// and the CT policies of Chrome and Apple.
public enum CertificateTransparency {
    /// An SCT list whose encoding is broken.
    public struct ListError: Error, Sendable, Hashable, CustomStringConvertible {
        /// Where the encoding breaks.
        public let message: String
        init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// Who published a log list, which decides its format and whose state a log's entry records.
    public enum Publisher: String, Sendable, Hashable, CaseIterable {
        /// Google's v3 log list (`log_list.json`, `all_logs_list.json`).
        case google
        /// Apple's v5 log list (`current_log_list.json`).
        case apple
    }

    /// A log's state in the browsers' log life cycle.
    public enum LogState: String, Sendable, Hashable, CaseIterable {
        /// Applied for inclusion; its SCTs count nowhere.
        case pending
        /// Accepted; its SCTs count.
        case qualified
        /// Accepted and known to every supported client; its SCTs count.
        case usable
        /// No longer accepting certificates; its SCTs count.
        case readOnly = "readonly"
        /// No longer relied on: embedded SCTs issued before the retirement still count.
        case retired
        /// Never counts (failed its monitoring, or every certificate it holds has expired).
        case rejected

        /// Qualified, usable or read-only: what both browsers call a log approved at the time of check.
        public var isApproved: Bool { self == .qualified || self == .usable || self == .readOnly }
    }

    /// One log as a list describes it.
    public struct Log: Sendable, Hashable {
        /// The log's ID: the SHA-256 of its key.
        public let logID: [UInt8]
        /// The log's public key, DER SubjectPublicKeyInfo.
        public let key: [UInt8]
        /// The list's description, such as "Google 'Argon2026h2' log".
        public let description: String
        /// The operator, as the list names it; operators are distinct when their names are.
        public let operatorName: String
        /// An RFC 6962 log (`false`: a static-ct-api "tiled" log).
        public let isRFC6962: Bool
        /// The state the list records and the time the log entered it; `nil` when the list gives none.
        public let state: (state: LogState, since: Date)?
        /// Which certificates the log accepts, by their notAfter: a shard's interval, if it has one.
        public let temporalInterval: Range<Date>?
        /// Who published the list this entry comes from.
        public let publisher: Publisher
        /// The key, decoded once; `nil` when it is not an ECDSA or RSA key.
        let verifier: CertificateTransparencyCrypto.LogKey?
        /// Whether Pincheck can check this log's signatures (an RSA or ECDSA key).
        package var isVerifiable: Bool { verifier != nil }

        package init(
            logID: [UInt8], key: [UInt8], description: String, operatorName: String, isRFC6962: Bool,
            state: (state: LogState, since: Date)?, temporalInterval: Range<Date>?, publisher: Publisher
        ) {
            self.logID = logID
            self.key = key
            self.description = description
            self.operatorName = operatorName
            self.isRFC6962 = isRFC6962
            self.state = state
            self.temporalInterval = temporalInterval
            self.publisher = publisher
            self.verifier = CertificateTransparencyCrypto.LogKey(spkiDER: key)
        }

        /// The log's state at `time`: the recorded state from its timestamp on. Before it, the state
        /// the life cycle passes through on the way there (``CertificateTransparency/LogState``): `pending` before
        /// `qualified`, `qualified` before `usable`, and `usable` before `readonly`, `retired` and
        /// `rejected`. A log with no recorded state has none at any time.
        public func state(at time: Date) -> LogState? {
            guard let (state, since) = state else { return nil }
            if time >= since { return state }
            switch state {
            case .pending, .qualified: return .pending
            case .usable: return .qualified
            case .readOnly, .retired, .rejected: return .usable
            }
        }

        /// When the log was retired, if it is and was at `time`.
        func retirement(at time: Date) -> Date? {
            guard let (recorded, since) = state, recorded == .retired, time >= since else { return nil }
            return since
        }

        public static func == (lhs: Log, rhs: Log) -> Bool {
            lhs.logID == rhs.logID && lhs.key == rhs.key && lhs.publisher == rhs.publisher && lhs.description == rhs.description
                && lhs.operatorName == rhs.operatorName && lhs.state?.state == rhs.state?.state && lhs.state?.since == rhs.state?.since
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(logID)
            hasher.combine(publisher)
        }
    }

    /// A published log list, read from Google's v3 or Apple's v5 JSON format (by TrustEvaluatorFormats:
    /// `LogList(json:source:publisher:publishedAt:)` and its siblings; `import TrustEvaluator` has both).
    public struct LogList: Sendable {
        /// Who published it (detected from its fields).
        public let publisher: Publisher
        /// Every log it describes, with or without a state.
        public let logs: [Log]
        /// Google's `log_list_timestamp`, or the date the caller gave: what a policy's list-age
        /// limit is measured from. `nil` when neither says.
        public let timestamp: Date?
        /// Where the list was read from, for messages.
        public let source: String

        /// A list of the given logs (tests, and lists built by other means).
        package init(publisher: Publisher, logs: [Log], timestamp: Date?, source: String) {
            self.publisher = publisher
            self.logs = logs
            self.timestamp = timestamp
            self.source = source
        }
    }

    /// The logs of one or more lists: the only logs an evaluation knows. A log in several lists is
    /// found under each publisher, so a policy reads the state its own browser records.
    public struct Logs: Sendable {
        /// The lists, in the order given.
        public let lists: [LogList]
        private let byID: [[UInt8]: [Log]]

        /// - Parameter lists: The lists to know logs from.
        public init(_ lists: [LogList]) {
            self.lists = lists
            var byID: [[UInt8]: [Log]] = [:]
            for list in lists { for log in list.logs { byID[log.logID, default: []].append(log) } }
            self.byID = byID
        }

        /// The entry for `logID`, the one `preferred` published when there is one.
        public func log(id logID: [UInt8], preferring preferred: Publisher) -> Log? {
            guard let entries = byID[logID] else { return nil }
            return entries.first { $0.publisher == preferred } ?? entries.first
        }

        /// The newest list date any list carries (a policy's age limit is measured from it).
        public var newestTimestamp: Date? { lists.compactMap(\.timestamp).max() }

        /// The number of distinct logs.
        public var count: Int { byID.count }
    }
}
