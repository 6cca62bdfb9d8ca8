import FoundationEssentials
internal import PincheckOpenSSL

extension CertificateTransparency {
    /// A browser's rules for which SCTs make a certificate CT compliant, in the version that
    /// applies to the certificate's notBefore (the policies change for certificates issued after a date).
    ///
    /// - `chrome`: Chrome's CT policy (github.com/GoogleChrome/CertificateTransparency,
    ///   `ct_policy.md` and its history). Issued from 2022-04-15: embedded SCTs need one from a log
    ///   approved (qualified, usable, read-only) at the time of check, SCTs from at least 2 distinct
    ///   logs (3 for a lifetime over 180 days) approved then or retired after the earliest SCT, and
    ///   two distinct operators among them; SCTs from the TLS extension or a staple need two from
    ///   logs approved at the time of check, of two operators. Issued earlier: one embedded SCT from
    ///   an approved log, one from a Google log and one from a non-Google log, and 2, 3, 4 or 5 logs
    ///   for a lifetime under 15, up to 27, up to 39 and over 39 months. Until 2026-04-15 (the time
    ///   of check) one counting SCT must come from an RFC 6962 log. Enforced for certificates
    ///   issued from 2018-05-01; the newest log list must be at most 70 days old.
    /// - `apple`: Apple's CT policy (support.apple.com/103214): at least two SCTs from logs once or
    ///   currently approved, at least one from an RFC 6962 log, and either two from currently
    ///   approved logs with one outside the certificate, or one embedded from a currently approved
    ///   log and, issued from 2021-04-21, 2 embedded (lifetime up to 180 days, at most 1 per
    ///   operator counting) or 3 (181 to 398 days, at most 2 per operator), lifetime counting
    ///   notBefore through notAfter inclusive in days of 86,400 seconds, a partial day counting
    ///   whole; issued earlier, 2, 3, 4 or 5 by months as Chrome's earlier table. Enforced for
    ///   certificates issued after 2018-10-15. Apple publishes no list-age limit.
    public enum Policy: String, Sendable, Hashable, CaseIterable {
        case chrome
        case apple

        /// Whose log list records the states this policy reads.
        public var publisher: Publisher { self == .chrome ? .google : .apple }

        /// Certificates with an earlier notBefore are not subject to the policy.
        public var effectiveDate: Date {
            switch self {
            case .chrome: Date(timeIntervalSince1970: 1_525_132_800)  // 2018-05-01T00:00:00Z
            case .apple: Date(timeIntervalSince1970: 1_539_648_000)  // 2018-10-16T00:00:00Z
            }
        }

        /// How old the newest log list may be before the policy cannot be enforced.
        public var maximumListAge: Duration? { self == .chrome ? .seconds(70 * 86_400) : nil }

        /// The last instant at which lists whose newest is dated `newest` are young enough for this
        /// policy; after it the policy is unenforceable (nil: the policy has no age limit).
        package func listsYoungEnough(newest: Date) -> Date? {
            maximumListAge.map { newest.addingTimeInterval(Double($0.components.seconds)) }
        }

        /// How far after the verification time and the present a list's date may lie (clocks and
        /// time zones); a list dated later says nothing of the logs' state, so it is not fresh.
        package static let listDateTolerance: TimeInterval = 86_400

        /// The first instant at which lists whose newest is dated `newest` are no longer dated
        /// in the future (nil: the policy has no age limit).
        package func listsDatedInThePastFrom(newest: Date) -> Date? {
            maximumListAge.map { _ in newest.addingTimeInterval(-Self.listDateTolerance) }
        }

        var name: String { self == .chrome ? "Chrome" : "Apple" }
    }

    /// What a failed policy does.
    public enum Enforcement: String, Sendable, Hashable, CaseIterable {
        /// The certificate is rejected (`ct.not-compliant`).
        case enforce
        /// The certificate is accepted with a `ct.not-compliant` warning.
        case reportOnly = "report-only"
    }

    /// Which paths the policy applies to.
    public enum Scope: String, Sendable, Hashable, CaseIterable {
        /// Paths to a publicly-trusted anchor (the system store, or anchors declared Web PKI roots),
        /// as the browsers do; a private PKI is exempt.
        case publiclyTrustedAnchors = "public-anchors"
        /// Every path, a private anchor's too.
        case everyAnchor = "every-anchor"
    }

    /// What happens when the policy cannot be enforced (the log lists are too old or undated).
    public enum WhenUnenforceable: String, Sendable, Hashable, CaseIterable {
        /// Reject (`ct.unenforceable` as a failure): fail closed. The default.
        case fail
        /// Accept with a `ct.unenforceable` warning, as Chrome does with a stale list.
        case allow
    }

    /// Every verification time (whole seconds) at which `assessment`, judged with `logs`, could
    /// change: an SCT's timestamp (before it, the SCT is in the future), a state its log entered,
    /// the list-age limit, a policy rule's end. A cached verdict is reused only between two of them.
    static func timeBoundaries(_ policy: Policy, logs: Logs, of assessment: Assessment) -> [Int64] {
        var instants: [Date] = []
        for checked in assessment.timestamps {
            instants.append(Date(timeIntervalSince1970: (Double(checked.sct.timestampMilliseconds) / 1000).rounded(.up)))
            if let since = checked.log?.state?.since { instants.append(since) }
        }
        if let newest = logs.newestTimestamp, let until = policy.listsYoungEnough(newest: newest) { instants.append(until) }
        if let newest = logs.newestTimestamp, let from = policy.listsDatedInThePastFrom(newest: newest) { instants.append(from) }
        if policy == .chrome { instants.append(chromeRFC6962RequirementEnds) }
        return instants.map(Timestamp.seconds)
    }

    /// A host's Certificate Transparency requirement: a policy, the logs it knows, and what a failure does.
    public struct Requirement: Sendable {
        /// Where the logs come from: fixed here, or a store updated while the process runs.
        private enum LogSource: Sendable {
            case fixed(Logs)
            case store(LogStore)
        }

        /// The browser policy.
        public var policy: Policy
        private var logSource: LogSource
        /// Enforced or report-only.
        public var enforcement: Enforcement
        /// Which paths it applies to.
        public var scope: Scope = .publiclyTrustedAnchors
        /// What stale or undated lists do.
        public var whenUnenforceable: WhenUnenforceable = .fail

        /// - Parameters:
        ///   - policy: The browser policy.
        ///   - logs: The logs of the lists the caller trusts.
        ///   - enforcement: `.enforce` by default.
        public init(policy: Policy, logs: Logs, enforcement: Enforcement = .enforce) {
            self.policy = policy
            self.logSource = .fixed(logs)
            self.enforcement = enforcement
        }

        /// A requirement whose logs are `store`'s, read once per evaluation, so an update of the
        /// store reaches evaluations that start after it.
        /// - Parameters:
        ///   - policy: The browser policy.
        ///   - store: The lists the caller trusts, replaced as their publishers update them.
        ///   - enforcement: `.enforce` by default.
        public init(policy: Policy, logStore store: LogStore, enforcement: Enforcement = .enforce) {
            self.policy = policy
            self.logSource = .store(store)
            self.enforcement = enforcement
        }

        /// The only logs the evaluation knows: the store's logs in force, when the requirement
        /// reads a ``LogStore``. Setting it fixes the logs (the store is no longer read).
        public var logs: Logs {
            get { logSnapshot.logs }
            set { logSource = .fixed(newValue) }
        }

        /// The store the logs are read from; nil when they are fixed.
        public var logStore: LogStore? {
            if case .store(let store) = logSource { store } else { nil }
        }

        /// The logs an evaluation judges with, read once, and their generation (0: fixed logs).
        package var logSnapshot: LogStore.Snapshot {
            switch logSource {
            case .fixed(let logs): LogStore.Snapshot(logs: logs, generation: 0)
            case .store(let store): store.snapshot
            }
        }
    }

    /// The first instant after which Chrome no longer asks for an RFC 6962 log (`ct_policy.md`).
    static let chromeRFC6962RequirementEnds = Date(timeIntervalSince1970: 1_776_211_200)  // 2026-04-15

    /// One SCT, verified or not, and whether the policy counted it.
    public struct CheckedSCT: Sendable, Hashable {
        /// What verification found.
        public enum Status: String, Sendable, Hashable {
            /// The log's signature verifies.
            case verified
            /// No given list has the log.
            case unknownLog = "unknown-log"
            /// The signature does not verify with the log's key.
            case badSignature = "bad-signature"
            /// Not a v1 SCT.
            case unsupportedVersion = "unsupported-version"
            /// Not SHA-256 with the log key's algorithm.
            case unsupportedAlgorithm = "unsupported-algorithm"
            /// Timestamped after the verification time.
            case futureTimestamp = "future-timestamp"
            /// An embedded SCT, but the path names no issuer whose key the log signed.
            case noIssuer = "no-issuer"
        }

        /// The SCT.
        public let sct: SignedCertificateTimestamp
        /// Its log, when a list has it.
        public let log: Log?
        /// What verification found.
        public let status: Status
        /// Whether the policy counted it towards compliance.
        public internal(set) var counted = false
        /// Why it counted or not, in words.
        public internal(set) var note: String
    }

    /// A policy's answer.
    public enum Compliance: Sendable, Hashable, Equatable {
        /// The SCTs satisfy the policy.
        case compliant
        /// They do not: why.
        case notCompliant(String)
        /// The policy does not apply to this certificate: why.
        case notApplicable(String)
        /// The policy cannot be judged (log lists too old or undated): why.
        case unenforceable(String)
    }

    /// What a policy made of a certificate's SCTs.
    public struct Assessment: Sendable, Hashable {
        /// The policy applied.
        public let policy: Policy
        /// Its answer.
        public let compliance: Compliance
        /// Every SCT found, in the order found: embedded, then the others.
        public let timestamps: [CheckedSCT]

        /// The same SCTs, verified, under a policy that does not apply: none counts.
        func exempt(_ why: String) -> Assessment {
            Assessment(
                policy: policy, compliance: .notApplicable(why),
                timestamps: timestamps.map { checked in
                    var copy = checked
                    copy.counted = false
                    if checked.status == .verified { copy.note = "verified; the policy does not apply" }
                    return copy
                })
        }
    }

    /// Verifies the leaf's SCTs and judges them against `policy`.
    /// - Parameters:
    ///   - leaf: The certificate.
    ///   - issuer: Its issuer on the verified path (the anchor, when the anchor issued it); `nil`
    ///     leaves embedded SCTs unverifiable.
    ///   - additionalSCTs: SCTs from the TLS extension or a stapled OCSP response.
    ///   - policy: The browser policy.
    ///   - logs: The logs known.
    ///   - time: The verification time.
    public static func assess(
        leaf: Certificate, issuer: Certificate?, additionalSCTs: [SignedCertificateTimestamp] = [],
        policy: Policy, logs: Logs, at time: Date
    ) -> Assessment {
        var embedded: [SignedCertificateTimestamp] = []
        var malformed: String?
        switch leaf.handle.embeddedSCTs {
        case .absent: break
        case .malformed(let why): malformed = why
        case .list(let bytes):
            do { embedded = try SignedCertificateTimestamp.parseList(bytes, source: .certificate) } catch {
                malformed = "the certificate's SCT list is malformed: \(error.message)"
            }
        }
        var verifier = SCTVerifier(leaf: leaf, issuer: issuer, logs: logs, publisher: policy.publisher, time: time)
        var checked = (embedded + additionalSCTs).map { verifier.check($0) }
        let compliance: Compliance
        if leaf.notBefore < policy.effectiveDate {
            compliance = .notApplicable(
                "issued \(Timestamp.day(leaf.notBefore)), before \(policy.name)'s policy took effect (\(Timestamp.day(policy.effectiveDate)))")
        } else if let unenforceable = unenforceable(policy: policy, logs: logs, time: time) {
            compliance = .unenforceable(unenforceable)
        } else if let malformed, additionalSCTs.isEmpty {
            compliance = .notCompliant(malformed)
        } else {
            var rules = PolicyRules(policy: policy, leaf: leaf, time: time, checked: checked)
            let answer = rules.judge()
            checked = rules.checked
            if case .notCompliant(let why) = answer {
                compliance = .notCompliant(why + Self.unverifiedSummary(checked))
            } else {
                compliance = answer
            }
        }
        return Assessment(policy: policy, compliance: compliance, timestamps: checked)
    }

    /// "; of 3 SCTs, 2 are from logs in none of the lists", for a failure's message.
    private static func unverifiedSummary(_ checked: [CheckedSCT]) -> String {
        let unverified = Dictionary(grouping: checked.filter { $0.status != .verified }, by: \.status)
        guard !unverified.isEmpty else { return "" }
        let words: [CheckedSCT.Status: String] = [
            .unknownLog: "from logs in none of the given lists", .badSignature: "with a bad signature",
            .unsupportedVersion: "not v1", .unsupportedAlgorithm: "with an algorithm the log's key does not allow",
            .futureTimestamp: "timestamped after the verification time", .noIssuer: "unverifiable without the issuer",
        ]
        let parts = unverified.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value.count) \(words[$0.key] ?? $0.key.rawValue)" }
        return "; of \(checked.count) SCT\(checked.count == 1 ? "" : "s"), \(parts.joined(separator: ", "))"
    }

    private static func unenforceable(policy: Policy, logs: Logs, time: Date) -> String? {
        guard let limit = policy.maximumListAge else { return nil }
        guard let newest = logs.newestTimestamp else {
            return
                "no log list carries its date, so its age against \(policy.name)'s \(limit.components.seconds / 86_400)-day limit is unknown (give the date)"
        }
        // A list dated after both the verification time and the present is from the future: its
        // date says nothing (a list of 2099 would count as fresh until 2099). Judging an old
        // certificate at its own time with today's lists is ordinary, so the present counts too.
        if let from = policy.listsDatedInThePastFrom(newest: newest), max(time, Date()) < from {
            return
                "the newest log list is dated \(Timestamp.day(newest)), after both the verification time and today: a list from the future says nothing of the logs' state"
        }
        guard let until = policy.listsYoungEnough(newest: newest), time > until else { return nil }
        let age = time.timeIntervalSince(newest)
        return
            "the newest log list is from \(Timestamp.day(newest)), \(Int(age / 86_400)) days before the verification time; \(policy.name) enforces CT with lists up to \(limit.components.seconds / 86_400) days old"
    }
}

/// Verifies SCTs one by one (RFC 6962 §3.2): finds the log, rebuilds what it signed, checks the signature.
private struct SCTVerifier {
    let leaf: Certificate
    let issuer: Certificate?
    let logs: CertificateTransparency.Logs
    let publisher: CertificateTransparency.Publisher
    let time: Date
    /// The precertificate entry, built on first use.
    private var precertificate: (issuerKeyHash: [UInt8], tbs: [UInt8])??

    init(leaf: Certificate, issuer: Certificate?, logs: CertificateTransparency.Logs, publisher: CertificateTransparency.Publisher, time: Date) {
        self.leaf = leaf
        self.issuer = issuer
        self.logs = logs
        self.publisher = publisher
        self.time = time
    }

    mutating func check(_ sct: SignedCertificateTimestamp) -> CertificateTransparency.CheckedSCT {
        typealias Checked = CertificateTransparency.CheckedSCT
        guard sct.isVersion1 else { return Checked(sct: sct, log: nil, status: .unsupportedVersion, note: "version \(sct.version + 1), not v1") }
        guard let log = logs.log(id: sct.logID, preferring: publisher) else {
            return Checked(sct: sct, log: nil, status: .unknownLog, note: "log \(sct.logIDBase64) is in none of the given lists")
        }
        if sct.timestamp > time {
            return Checked(
                sct: sct, log: log, status: .futureTimestamp, note: "timestamped \(Timestamp.iso8601(sct.timestamp)), after the verification time")
        }
        let expected: String? =
            switch log.verifier?.kind {
            case .ecdsa: "ecdsa-with-SHA256"
            case .rsa: "sha256WithRSAEncryption"
            case nil: nil
            }
        guard let algorithm = sct.signatureAlgorithm, algorithm == expected else {
            return Checked(
                sct: sct, log: log, status: .unsupportedAlgorithm,
                note:
                    "signed with \(sct.signatureAlgorithm ?? "an unknown algorithm"); the log's key needs \(expected ?? "an algorithm RFC 6962 allows")"
            )
        }
        let entry: SignedCertificateTimestamp.Entry
        if sct.source == .certificate {
            guard let precertificate = precertificateEntry() else {
                return Checked(sct: sct, log: log, status: .noIssuer, note: "the verified path names no issuer, whose key hash the log signed")
            }
            entry = .precertificate(issuerKeyHash: precertificate.issuerKeyHash, tbsCertificate: precertificate.tbs)
        } else {
            entry = .certificate(leaf.derBytes)
        }
        let signed = SignedCertificateTimestamp.signedData(timestampMilliseconds: sct.timestampMilliseconds, entry: entry, extensions: sct.extensions)
        guard let verifier = log.verifier, verifier.verify(signature: sct.signature, message: signed) else {
            return Checked(sct: sct, log: log, status: .badSignature, note: "the signature does not verify with \(log.description)'s key")
        }
        return Checked(sct: sct, log: log, status: .verified, note: "verified")
    }

    private mutating func precertificateEntry() -> (issuerKeyHash: [UInt8], tbs: [UInt8])? {
        if let precertificate { return precertificate }
        var entry: (issuerKeyHash: [UInt8], tbs: [UInt8])?
        if let issuer, let tbs = leaf.handle.precertificateTBS {
            entry = (Digest.sha256(issuer.subjectPublicKeyInfoDER), tbs)
        }
        precertificate = .some(entry)
        return entry
    }
}

/// The counting rules of the two policies over verified SCTs.
private struct PolicyRules {
    let policy: CertificateTransparency.Policy
    let leaf: Certificate
    let time: Date
    var checked: [CertificateTransparency.CheckedSCT]

    init(policy: CertificateTransparency.Policy, leaf: Certificate, time: Date, checked: [CertificateTransparency.CheckedSCT]) {
        self.policy = policy
        self.leaf = leaf
        self.time = time
        self.checked = checked
    }

    /// Indices of verified SCTs, one per log (the first found: embedded before the others).
    private mutating func candidates() -> [Int] {
        var seen: Set<[UInt8]> = []
        var indices: [Int] = []
        for (index, item) in checked.enumerated() where item.status == .verified {
            if seen.insert(item.sct.logID).inserted {
                indices.append(index)
            } else {
                checked[index].note = "another SCT of the same log counts instead"
            }
        }
        return indices
    }

    private func approvedAtCheck(_ index: Int) -> Bool { checked[index].log?.state(at: time)?.isApproved == true }

    /// Approved at the time of check, or retired after `issued`.
    private func onceApproved(_ index: Int, issued: Date) -> Bool {
        guard let log = checked[index].log else { return false }
        if approvedAtCheck(index) { return true }
        guard let retired = log.retirement(at: time) else { return false }
        return issued < retired
    }

    private func operators(_ indices: [Int]) -> Set<String> { Set(indices.compactMap { checked[$0].log?.operatorName }) }

    private mutating func explain(_ indices: [Int], counted: [Int], embedded: Bool) {
        for index in indices {
            let state = checked[index].log?.state(at: time).map { $0.rawValue } ?? "no state"
            if counted.contains(index) {
                checked[index].counted = true
                checked[index].note = "counted (log \(state) at the verification time)"
            } else {
                checked[index].note =
                    "not counted: log \(state) at the verification time" + (embedded ? "" : "; SCTs outside the certificate need an approved log")
            }
        }
    }

    mutating func judge() -> CertificateTransparency.Compliance {
        let all = candidates()
        let embedded = all.filter { checked[$0].sct.source == .certificate }
        let delivered = all.filter { checked[$0].sct.source != .certificate }
        return policy == .chrome ? chrome(embedded: embedded, delivered: delivered) : apple(all: all, embedded: embedded)
    }

    /// Chrome's first table: 2, 3, 4 or 5 logs by the lifetime in months, rounded down, a partial
    /// month counting against the boundary (Chromium's `chrome_ct_policy_enforcer.cc`).
    private var logsByMonths: Int {
        let start = Timestamp.civil(fromDays: Timestamp.wholeDays(leaf.notBefore))
        let end = Timestamp.civil(fromDays: Timestamp.wholeDays(leaf.notAfter))
        var months = (end.year - start.year) * 12 + (end.month - start.month)
        var partial = end.day != start.day
        if end.day < start.day { months -= 1; partial = true }
        if months > 39 || (months == 39 && partial) { return 5 }
        if months > 27 || (months == 27 && partial) { return 4 }
        return months >= 15 ? 3 : 2
    }

    private var issuedBeforeOperatorDiversity: Bool { leaf.notBefore < Date(timeIntervalSince1970: 1_649_980_800) }  // 2022-04-15

    private func isGoogle(_ index: Int) -> Bool { checked[index].log?.operatorName == "Google" }

    private mutating func chrome(embedded: [Int], delivered: [Int]) -> CertificateTransparency.Compliance {
        let earliest = (embedded + delivered).map { checked[$0].sct.timestamp }.min() ?? time
        let legacy = issuedBeforeOperatorDiversity
        let needed = legacy ? logsByMonths : (leaf.notAfter.timeIntervalSince(leaf.notBefore) <= 180 * 86_400 ? 2 : 3)
        let wantsRFC6962 = time < CertificateTransparency.chromeRFC6962RequirementEnds
        let countable = embedded.filter { onceApproved($0, issued: earliest) }
        let embeddedProblem: String? =
            if !embedded.contains(where: approvedAtCheck) {
                "no embedded SCT from a log qualified, usable or read-only at the verification time"
            } else if countable.count < needed {
                "\(countable.count) embedded SCT\(countable.count == 1 ? "" : "s") from counting logs; \(needed) needed for its lifetime"
                    + (legacy ? " (the table for certificates issued before 2022-04-15)" : "")
            } else if legacy, !countable.contains(where: isGoogle) {
                "no counting embedded SCT from a Google log (required for certificates issued before 2022-04-15)"
            } else if legacy, !countable.contains(where: { !isGoogle($0) }) {
                "no counting embedded SCT from a non-Google log (required for certificates issued before 2022-04-15)"
            } else if !legacy, operators(countable).count < 2 {
                "every counting embedded SCT is from one operator (\(operators(countable).sorted().joined())); two are needed"
            } else if wantsRFC6962, !countable.contains(where: { checked[$0].log?.isRFC6962 == true }) {
                "no counting SCT from an RFC 6962 log (required until 2026-04-15)"
            } else { nil }
        if embeddedProblem == nil {
            explain(embedded + delivered, counted: countable, embedded: true)
            return .compliant
        }
        let approved = delivered.filter(approvedAtCheck)
        let deliveredMeets =
            legacy
            ? approved.contains(where: isGoogle) && approved.contains(where: { !isGoogle($0) })
            : approved.count >= 2 && operators(approved).count >= 2
        if deliveredMeets, !wantsRFC6962 || approved.contains(where: { checked[$0].log?.isRFC6962 == true }) {
            explain(embedded + delivered, counted: approved, embedded: false)
            return .compliant
        }
        explain(embedded, counted: countable, embedded: true)
        explain(delivered, counted: [], embedded: false)
        let deliveredProblem =
            delivered.isEmpty
            ? ""
            : "; SCTs from the TLS extension or staple: \(approved.count) from approved logs of \(operators(approved).count) operator\(operators(approved).count == 1 ? "" : "s"), two of two operators needed"
        return .notCompliant((embeddedProblem ?? "") + deliveredProblem)
    }

    private mutating func apple(all: [Int], embedded: [Int]) -> CertificateTransparency.Compliance {
        let onceOrCurrent = all.filter { onceApproved($0, issued: checked[$0].sct.timestamp) }
        let current = all.filter(approvedAtCheck)
        let seconds = leaf.notAfter.timeIntervalSince(leaf.notBefore) + 1
        let days = Int((seconds / 86_400).rounded(.up))
        let (needed, perOperator): (Int, Int)
        if leaf.notBefore < Date(timeIntervalSince1970: 1_618_963_200) {  // 2021-04-21
            (needed, perOperator) = (logsByMonths, Int.max)
        } else {
            guard days <= 398 else {
                explain(all, counted: [], embedded: true)
                return .notCompliant("a lifetime of \(days) days; Apple's policy has rows up to 398 days")
            }
            (needed, perOperator) = days <= 180 ? (2, 1) : (3, 2)
        }
        guard onceOrCurrent.count >= 2 else {
            explain(all, counted: onceOrCurrent, embedded: true)
            return .notCompliant(
                "\(onceOrCurrent.count) SCT\(onceOrCurrent.count == 1 ? "" : "s") from once or currently approved logs; at least 2 needed")
        }
        guard onceOrCurrent.contains(where: { checked[$0].log?.isRFC6962 == true }) else {
            explain(all, counted: [], embedded: true)
            return .notCompliant("no SCT from an RFC 6962 log (every counting log is a static-ct-api log)")
        }
        if current.count >= 2, current.contains(where: { checked[$0].sct.source != .certificate }) {
            explain(all, counted: current, embedded: false)
            return .compliant
        }
        var perOperatorCount: [String: Int] = [:]
        var counted: [Int] = []
        for index in embedded where onceOrCurrent.contains(index) {
            let name = checked[index].log?.operatorName ?? ""
            guard perOperatorCount[name, default: 0] < perOperator else { continue }
            perOperatorCount[name, default: 0] += 1
            counted.append(index)
        }
        explain(all, counted: counted, embedded: true)
        guard embedded.contains(where: approvedAtCheck) else {
            return .notCompliant("no embedded SCT from a currently approved log, and no two currently approved SCTs with one outside the certificate")
        }
        guard counted.count >= needed else {
            return .notCompliant(
                "\(counted.count) embedded SCTs count" + (perOperator == Int.max ? "" : " (at most \(perOperator) per operator)")
                    + "; \(needed) needed for a lifetime of \(days) days")
        }
        return .compliant
    }
}

extension [UInt8] {
    /// Appends `value`'s low `bytes` bytes, most significant first.
    mutating func appendBigEndian(_ value: UInt64, bytes: Int) {
        for shift in stride(from: (bytes - 1) * 8, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
