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

        init(
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

    /// A published log list, read from Google's v3 or Apple's v5 JSON format.
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
        init(publisher: Publisher, logs: [Log], timestamp: Date?, source: String) {
            self.publisher = publisher
            self.logs = logs
            self.timestamp = timestamp
            self.source = source
        }

        /// Reads a list. Google's format is recognised by `log_list_timestamp` or `is_all_logs`,
        /// Apple's by `assetVersion` or `$schema` naming Apple; otherwise the caller must say.
        /// - Parameters:
        ///   - json: The list's bytes.
        ///   - source: Its file name, for messages.
        ///   - publisher: The format, when the list does not say.
        ///   - publishedAt: The list's date, for a list that carries none (Apple's, or a copy without
        ///     `log_list_timestamp`); a timestamp in the list wins.
        /// - Throws: ``PincheckError`` `.invalidPolicy` naming the field that is wrong.
        public init(json: [UInt8], source: String, publisher: Publisher? = nil, publishedAt: Date? = nil) throws(PincheckError) {
            // A repeated key ("key" twice in a log) could be read two ways; the publisher meant one.
            let document: JSONValue
            do throws(JSONSyntax.Problem) { document = try JSONSyntax.parse(json) } catch {
                throw PincheckError(.invalidPolicy, error.description, source: source)
            }
            guard case .object(let root) = document else {
                throw PincheckError(.invalidPolicy, "a CT log list must be a JSON object", source: source)
            }
            let detected: Publisher? =
                if root["log_list_timestamp"] != nil || root["is_all_logs"] != nil { .google } else if root["assetVersion"] != nil {
                    .apple
                } else if case .string(let schema)? = root["$schema"], schema.contains("apple") { .apple } else { nil }
            guard let kind = publisher ?? detected else {
                throw PincheckError(.invalidPolicy, "cannot tell whether this CT log list is Google's or Apple's; name the publisher", source: source)
            }
            self.publisher = kind
            self.source = source
            let read = LogListReader(source: source, publisher: kind)
            self.logs = try read.logs(root)
            if case .string(let text)? = root["log_list_timestamp"] {
                self.timestamp = try read.date(text, field: "log_list_timestamp")
            } else {
                self.timestamp = publishedAt
            }
        }

        /// Reads a list from a file (at most 16 MiB).
        public init(contentsOf path: String, publisher: Publisher? = nil, publishedAt: Date? = nil) throws(PincheckError) {
            try self.init(
                json: InputFile.read(path, limit: 16 << 20, what: "CT log list"), source: path, publisher: publisher, publishedAt: publishedAt)
        }

        /// Reads a list after checking its publisher's detached signature over the file's bytes, as
        /// Google publishes `log_list.sig` beside `log_list.json` (a SHA-256 signature, RSA
        /// PKCS #1 v1.5 or ECDSA, by the key of `log_list_pubkey.pem`).
        /// - Parameters:
        ///   - json: The list's bytes, exactly as signed.
        ///   - source: Its file name, for messages.
        ///   - signature: The detached signature.
        ///   - publisherKey: The publisher's public key: PEM (`PUBLIC KEY`) or DER SubjectPublicKeyInfo.
        ///   - publisher: The format, when the list does not say.
        ///   - publishedAt: The list's date, for a list that carries none.
        /// - Throws: ``PincheckError`` `.invalidPolicy` when the key cannot be read or the signature
        ///   does not verify (nothing of the list is read then), or as ``init(json:source:publisher:publishedAt:)``.
        public init(
            json: [UInt8], source: String, signature: [UInt8], publisherKey: [UInt8],
            publisher: Publisher? = nil, publishedAt: Date? = nil
        ) throws(PincheckError) {
            let spki: [UInt8]
            do {
                spki = try PublicKeyReader.read(publisherKey)?.subjectPublicKeyInfo ?? publisherKey
            } catch {
                throw PincheckError(.invalidPolicy, "the log list publisher's key cannot be read: \(error)", source: source)
            }
            guard let key = CertificateTransparencyCrypto.LogKey(spkiDER: spki) else {
                throw PincheckError(.invalidPolicy, "the log list publisher's key is not an RSA or ECDSA public key (PEM or DER)", source: source)
            }
            guard key.verify(signature: signature, message: json) else {
                throw PincheckError(
                    .invalidPolicy,
                    "the log list's signature does not verify with the publisher's key: the list was changed or is not the one signed", source: source
                )
            }
            try self.init(json: json, source: source, publisher: publisher, publishedAt: publishedAt)
        }

        /// Reads a list from a file after checking its detached signature (files of at most 16 MiB).
        /// - Parameters:
        ///   - path: The list.
        ///   - signaturePath: Its detached signature (`log_list.sig`).
        ///   - publisherKeyPath: The publisher's public key (`log_list_pubkey.pem`).
        ///   - publisher: The format, when the list does not say.
        ///   - publishedAt: The list's date, for a list that carries none.
        public init(
            contentsOf path: String, signature signaturePath: String, publisherKey publisherKeyPath: String,
            publisher: Publisher? = nil, publishedAt: Date? = nil
        ) throws(PincheckError) {
            try self.init(
                json: InputFile.read(path, limit: 16 << 20, what: "CT log list"), source: path,
                signature: InputFile.read(signaturePath, limit: 64 << 10, what: "CT log list signature"),
                publisherKey: InputFile.read(publisherKeyPath, limit: 64 << 10, what: "CT log list publisher key"),
                publisher: publisher, publishedAt: publishedAt)
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

/// Reads the logs of a v3 (Google) or v5 (Apple) list; the two share their log objects' fields.
private struct LogListReader {
    let source: String
    let publisher: CertificateTransparency.Publisher

    func logs(_ root: [String: JSONValue]) throws(PincheckError) -> [CertificateTransparency.Log] {
        guard case .array(let operators)? = root["operators"] else { throw failure("has no \"operators\" array") }
        var logs: [CertificateTransparency.Log] = []
        for (index, item) in operators.enumerated() {
            guard case .object(let entry) = item, case .string(let name)? = entry["name"] else {
                throw failure("operator #\(index + 1) has no name")
            }
            for (field, isRFC6962) in [("logs", true), ("tiled_logs", false)] {
                guard let value = entry[field] else { continue }
                guard case .array(let items) = value else { throw failure("operator \"\(name)\": \"\(field)\" is not an array") }
                for (position, log) in items.enumerated() {
                    // A log whose key Pincheck cannot verify with (Ed25519, say) is left out: its
                    // SCTs then count as from an unknown log. The rest of the list still serves.
                    if let entry = try self.log(
                        log, operatorName: name, isRFC6962: isRFC6962, position: "operator \"\(name)\", \(field) #\(position + 1)")
                    {
                        logs.append(entry)
                    }
                }
            }
        }
        return logs
    }

    /// One log; nil when its key is a well-formed SubjectPublicKeyInfo of a kind SCTs cannot be
    /// verified with here (neither ECDSA nor RSA).
    private func log(_ value: JSONValue, operatorName: String, isRFC6962: Bool, position: String) throws(PincheckError) -> CertificateTransparency
        .Log?
    {
        guard case .object(let log) = value else { throw failure("\(position) is not an object") }
        guard case .string(let keyText)? = log["key"], let key = Data(base64Encoded: keyText).map(Array.init), !key.isEmpty else {
            throw failure("\(position) has no base64 \"key\"")
        }
        let logID = Digest.sha256(key)
        if case .string(let idText)? = log["log_id"], Data(base64Encoded: idText).map(Array.init) != logID {
            throw failure("\(position): \"log_id\" is not the SHA-256 of its key")
        }
        let description: String = if case .string(let text)? = log["description"] { text } else { Data(logID).base64EncodedString() }
        var state: (CertificateTransparency.LogState, Date)?
        if case .object(let states)? = log["state"] {
            guard states.count == 1, let (name, detail) = states.first else { throw failure("\(position): \"state\" must name exactly one state") }
            guard let kind = CertificateTransparency.LogState(rawValue: name) else { throw failure("\(position): unknown state \"\(name)\"") }
            guard case .object(let fields) = detail, case .string(let text)? = fields["timestamp"] else {
                throw failure("\(position): state \"\(name)\" has no timestamp")
            }
            state = (kind, try date(text, field: "\(position)'s \(name) timestamp"))
        }
        var interval: Range<Date>?
        if case .object(let fields)? = log["temporal_interval"] {
            guard case .string(let start)? = fields["start_inclusive"], case .string(let end)? = fields["end_exclusive"] else {
                throw failure("\(position): \"temporal_interval\" needs start_inclusive and end_exclusive")
            }
            let (from, to) = (try date(start, field: "start_inclusive"), try date(end, field: "end_exclusive"))
            guard from < to else { throw failure("\(position): the temporal interval ends before it starts") }
            interval = from..<to
        }
        let entry = CertificateTransparency.Log(
            logID: logID, key: key, description: description, operatorName: operatorName,
            isRFC6962: isRFC6962, state: state, temporalInterval: interval, publisher: publisher)
        guard entry.verifier != nil else {
            guard CertificateTransparencyCrypto.isSubjectPublicKeyInfo(key) else {
                throw failure("\(position): the key is not a SubjectPublicKeyInfo")
            }
            return nil
        }
        return entry
    }

    func date(_ text: String, field: String) throws(PincheckError) -> Date {
        guard let date = Timestamp.parse(text) else { throw failure("\(field) is not an RFC 3339 time: \(text)") }
        return date
    }

    private func failure(_ message: String) -> PincheckError {
        PincheckError(.invalidPolicy, "CT log list: \(message)", source: source)
    }
}
