import FoundationEssentials
import PincheckOpenSSL
import TrustEvaluatorCore

/// The CT log lists' files: Google's `log_list.json` (v3) and Apple's `current_log_list.json`,
/// read into the engine's `CertificateTransparency.LogList`.
extension CertificateTransparency.LogList {
    /// Reads a list. Google's format is recognised by `log_list_timestamp` or `is_all_logs`,
    /// Apple's by `assetVersion` or `$schema` naming Apple; otherwise the caller must say.
    /// - Parameters:
    ///   - json: The list's bytes.
    ///   - source: Its file name, for messages.
    ///   - publisher: The format, when the list does not say.
    ///   - publishedAt: The list's date, for a list that carries none (Apple's, or a copy without
    ///     `log_list_timestamp`); a timestamp in the list wins.
    /// - Throws: `PincheckError` `.invalidPolicy` naming the field that is wrong.
    public init(json: [UInt8], source: String, publisher: CertificateTransparency.Publisher? = nil, publishedAt: Date? = nil) throws(PincheckError) {
        // A repeated key ("key" twice in a log) could be read two ways; the publisher meant one.
        let document: JSONValue
        do throws(JSONSyntax.Problem) { document = try JSONSyntax.parse(json) } catch {
            throw PincheckError(.invalidPolicy, error.description, source: source)
        }
        guard case .object(let root) = document else {
            throw PincheckError(.invalidPolicy, "a CT log list must be a JSON object", source: source)
        }
        let detected: CertificateTransparency.Publisher? =
            if root["log_list_timestamp"] != nil || root["is_all_logs"] != nil { .google } else if root["assetVersion"] != nil {
                .apple
            } else if case .string(let schema)? = root["$schema"], schema.contains("apple") { .apple } else { nil }
        guard let kind = publisher ?? detected else {
            throw PincheckError(.invalidPolicy, "cannot tell whether this CT log list is Google's or Apple's; name the publisher", source: source)
        }
        let read = LogListReader(source: source, publisher: kind)
        let logs = try read.logs(root)
        var timestamp = publishedAt
        if case .string(let text)? = root["log_list_timestamp"] { timestamp = try read.date(text, field: "log_list_timestamp") }
        self.init(publisher: kind, logs: logs, timestamp: timestamp, source: source)
    }

    /// Reads a list from a file (at most 16 MiB).
    public init(contentsOf path: String, publisher: CertificateTransparency.Publisher? = nil, publishedAt: Date? = nil) throws(PincheckError) {
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
    /// - Throws: `PincheckError` `.invalidPolicy` when the key cannot be read or the signature
    ///   does not verify (nothing of the list is read then), or as ``init(json:source:publisher:publishedAt:)``.
    public init(
        json: [UInt8], source: String, signature: [UInt8], publisherKey: [UInt8],
        publisher: CertificateTransparency.Publisher? = nil, publishedAt: Date? = nil
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
        publisher: CertificateTransparency.Publisher? = nil, publishedAt: Date? = nil
    ) throws(PincheckError) {
        try self.init(
            json: InputFile.read(path, limit: 16 << 20, what: "CT log list"), source: path,
            signature: InputFile.read(signaturePath, limit: 64 << 10, what: "CT log list signature"),
            publisherKey: InputFile.read(publisherKeyPath, limit: 64 << 10, what: "CT log list publisher key"),
            publisher: publisher, publishedAt: publishedAt)
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
        guard entry.isVerifiable else {
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
