import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// The policies' rules, shown on a real leaf whose log entries are changed one rule at a time.
@Suite("Certificate Transparency: the policies' rules, one at a time", SharedData.requires("ct", "realworld"))
struct CTPolicyTests {
    typealias CT = CertificateTransparency

    /// A leaf issued under Chrome's current rules, lifetime over 180 days, with three SCTs of at
    /// least two operators that Chrome counts: the minimum, so each change below breaks it.
    static let subject: RealWorldLeaf = RealWorldLeaf.all.first { item in
        let assessment = CT.assess(leaf: item.leaf, issuer: item.issuer, policy: .chrome, logs: CTLogLists.both, at: item.time)
        return item.leaf.notBefore > Timestamp.parse("2022-04-15")! && assessment.timestamps.count == 3
            && item.leaf.notAfter.timeIntervalSince(item.leaf.notBefore) > 180 * 86_400 && assessment.compliance == .compliant
    }!

    /// The subject's three logs as the two lists have them, changed by `change`, as one list.
    static func logs(_ change: (inout LogFields) -> Void = { _ in }) -> CT.Logs {
        let ids = CT.assess(leaf: subject.leaf, issuer: subject.issuer, policy: .chrome, logs: CTLogLists.both, at: subject.time).timestamps.map(\.sct.logID)
        let entries: [CT.Log] = ids.compactMap { id in
            guard let log = CTLogLists.both.log(id: id, preferring: .google) else { return nil }
            var fields = LogFields(log)
            change(&fields)
            return fields.log
        }
        return CT.Logs([CT.LogList(publisher: .google, logs: entries, timestamp: subject.time, source: "test")])
    }

    /// A log's fields, to change one.
    struct LogFields {
        var base: CT.Log
        var operatorName: String
        var isRFC6962: Bool
        var state: (state: CT.LogState, since: Date)?
        var included = true
        init(_ log: CT.Log) { base = log; operatorName = log.operatorName; isRFC6962 = log.isRFC6962; state = log.state }
        var log: CT.Log? {
            included ? CT.Log(logID: base.logID, key: base.key, description: base.description, operatorName: operatorName, isRFC6962: isRFC6962,
                              state: state, temporalInterval: base.temporalInterval, publisher: .google) : nil
        }
    }

    /// The ID of the subject's first SCT's log.
    static let firstLogID: [UInt8] = CT.assess(leaf: subject.leaf, issuer: subject.issuer, policy: .chrome, logs: CTLogLists.both, at: subject.time).timestamps[0].sct.logID

    static func assess(_ logs: CT.Logs, policy: CT.Policy = .chrome, at time: Date? = nil, extra: [SignedCertificateTimestamp] = []) -> CT.Assessment {
        CT.assess(leaf: subject.leaf, issuer: subject.issuer, additionalSCTs: extra, policy: policy, logs: logs, at: time ?? subject.time)
    }

    static func why(_ assessment: CT.Assessment) -> String? {
        if case .notCompliant(let why) = assessment.compliance { return why }
        return nil
    }

    @Test("the subject is compliant with its three logs usable, each SCT counted")
    func baseline() {
        let assessment = Self.assess(Self.logs { $0.state = (.usable, Date(timeIntervalSince1970: 0)) })
        #expect(assessment.compliance == .compliant)
        #expect(assessment.timestamps.allSatisfy { $0.counted && $0.status == .verified })
    }

    @Test("too few SCTs: a log missing from the lists makes its SCT unknown, and two do not make three")
    func tooFew() throws {
        var first = true
        let assessment = Self.assess(Self.logs { fields in
            fields.state = (.usable, Date(timeIntervalSince1970: 0))
            if first { fields.included = false; first = false }
        })
        #expect(assessment.timestamps.filter { $0.status == .unknownLog }.count == 1)
        #expect(try #require(Self.why(assessment)).contains("3 needed"))
    }

    @Test("one operator only: every counting SCT from one operator fails Chrome's diversity rule")
    func oneOperator() throws {
        let assessment = Self.assess(Self.logs { $0.operatorName = "One"; $0.state = (.usable, Date(timeIntervalSince1970: 0)) })
        #expect(try #require(Self.why(assessment)).contains("one operator"))
        // Apple counts at most two per operator for this lifetime: three from one operator make two.
        let apple = Self.assess(Self.logs { $0.operatorName = "One"; $0.state = (.usable, Date(timeIntervalSince1970: 0)) }, policy: .apple)
        #expect(try #require(Self.why(apple)).contains("at most 2 per operator"))
    }

    @Test("a log retired before the SCT does not count; retired after it, it does")
    func retirement() throws {
        let sctTime = Self.assess(Self.logs()).timestamps.map(\.sct.timestamp).min()!
        let before = Self.assess(Self.logs { $0.state = (.retired, sctTime.addingTimeInterval(-60)) })
        #expect(before.timestamps.allSatisfy { !$0.counted })
        #expect(Self.why(before) != nil)
        // Retired after the SCTs, and one other log usable: the retired ones still count for embedded SCTs.
        var index = 0
        let after = Self.assess(Self.logs { fields in
            fields.state = index == 0 ? (.usable, Date(timeIntervalSince1970: 0)) : (.retired, sctTime.addingTimeInterval(60))
            index += 1
        }, at: Self.subject.time)
        try #require(Self.subject.time > sctTime.addingTimeInterval(60))
        #expect(after.compliance == .compliant, "\(after.compliance)")
    }

    @Test("a state entered after the verification time did not hold yet: qualified later means pending then; rejected later means usable then")
    func statesAtTime() {
        let later = Self.subject.time.addingTimeInterval(86_400)
        let pending = Self.assess(Self.logs { $0.state = (.qualified, later) })
        #expect(pending.timestamps.allSatisfy { !$0.counted })
        let rejectedLater = Self.assess(Self.logs { $0.state = (.rejected, later) })
        #expect(rejectedLater.compliance == .compliant)
        let rejectedBefore = Self.assess(Self.logs { $0.state = (.rejected, Self.subject.time.addingTimeInterval(-1)) })
        #expect(Self.why(rejectedBefore) != nil)
        let log = Self.logs { $0.state = (.retired, later) }.lists[0].logs[0]
        #expect(log.state(at: later.addingTimeInterval(-1)) == .usable)
        #expect(log.state(at: later) == .retired)
    }

    @Test("an SCT timestamped after the verification time is a future timestamp and does not count")
    func futureTimestamp() {
        let earliest = Self.assess(Self.logs()).timestamps.map(\.sct.timestamp).min()!
        let assessment = Self.assess(Self.logs { $0.state = (.usable, Date(timeIntervalSince1970: 0)) }, at: earliest.addingTimeInterval(-1))
        #expect(assessment.timestamps.allSatisfy { $0.status == .futureTimestamp && !$0.counted })
        #expect(Self.why(assessment) != nil)
    }

    @Test("a tampered SCT (one millisecond later) fails its signature")
    func tampered() throws {
        let original = try #require(Self.assess(Self.logs()).timestamps.first?.sct)
        for source in [SignedCertificateTimestamp.Source.certificate, .tlsExtension] {
            let tampered = SignedCertificateTimestamp(source: source, version: 0, logID: original.logID, timestampMilliseconds: original.timestampMilliseconds + 1,
                                                      signatureAlgorithm: original.signatureAlgorithm, extensions: original.extensions, signature: original.signature)
            let assessment = Self.assess(Self.logs(), extra: [tampered])
            #expect(assessment.timestamps.last?.status == .badSignature)
        }
    }

    @Test("tiled logs only: Apple asks for one RFC 6962 log; Chrome did until 2026-04-15")
    func tiledOnly() throws {
        let tiled = Self.logs { $0.isRFC6962 = false; $0.state = (.usable, Date(timeIntervalSince1970: 0)) }
        #expect(try #require(Self.why(Self.assess(tiled, policy: .apple))).contains("RFC 6962"))
        try #require(Self.subject.time < Timestamp.parse("2026-04-15")!)
        #expect(try #require(Self.why(Self.assess(tiled))).contains("RFC 6962"))
        let april = Timestamp.parse("2026-04-15")!
        let tiledThen = CT.Logs([CT.LogList(publisher: .google, logs: tiled.lists[0].logs, timestamp: april, source: "then")])
        #expect(Self.assess(tiledThen, at: april).compliance == .compliant)
    }

    @Test("a log list older than 70 days makes Chrome's policy unenforceable; Apple's has no limit; an undated list is unenforceable for Chrome")
    func staleList() {
        let logs = Self.logs { $0.state = (.usable, Date(timeIntervalSince1970: 0)) }
        let old = CT.Logs([CT.LogList(publisher: .google, logs: logs.lists[0].logs, timestamp: Self.subject.time.addingTimeInterval(-71 * 86_400), source: "old")])
        guard case .unenforceable = Self.assess(old).compliance else { Issue.record("a 71-day-old list was enforced"); return }
        #expect(Self.assess(old, policy: .apple).compliance == .compliant)
        let undated = CT.Logs([CT.LogList(publisher: .google, logs: logs.lists[0].logs, timestamp: nil, source: "undated")])
        guard case .unenforceable = Self.assess(undated).compliance else { Issue.record("an undated list was enforced"); return }
        let fresh = CT.Logs([CT.LogList(publisher: .google, logs: logs.lists[0].logs, timestamp: Self.subject.time.addingTimeInterval(-69 * 86_400), source: "fresh")])
        #expect(Self.assess(fresh).compliance == .compliant)
    }

    @Test("SCTs from the TLS extension count for Chrome only from approved logs of two operators")
    func deliveredSCTs() throws {
        // Without embedded SCTs (the issuer unknown, so none verifies), two TLS SCTs would be needed:
        // the embedded ones re-sent as TLS SCTs fail their signatures (they signed the precertificate).
        let embedded = Self.assess(Self.logs()).timestamps.map(\.sct)
        let resent = embedded.map { SignedCertificateTimestamp(source: .tlsExtension, version: 0, logID: $0.logID, timestampMilliseconds: $0.timestampMilliseconds,
                                                              signatureAlgorithm: $0.signatureAlgorithm, extensions: $0.extensions, signature: $0.signature) }
        let assessment = CT.assess(leaf: Self.subject.leaf, issuer: nil, additionalSCTs: resent, policy: .chrome, logs: Self.logs(), at: Self.subject.time)
        #expect(assessment.timestamps.prefix(3).allSatisfy { $0.status == .noIssuer })
        #expect(assessment.timestamps.suffix(3).allSatisfy { $0.status == .badSignature })
        #expect(Self.why(assessment) != nil)
    }

    @Test("malformed SCT lists are errors naming where, never a crash", arguments: [
        [UInt8](), [0x00], [0x00, 0x05, 0x00, 0x03, 0x00], [0x00, 0x00], [0x00, 0x02, 0x00, 0x00], [0x00, 0x03, 0x00, 0x01, 0x00],
    ])
    func malformedLists(bytes: [UInt8]) {
        #expect(throws: CT.ListError.self) { try SignedCertificateTimestamp.parseList(bytes, source: .tlsExtension) }
    }

    @Test("a v2 SCT in a list is kept, unread, and skipped as an unsupported version")
    func otherVersion() throws {
        let list = try SignedCertificateTimestamp.parseList([0x00, 0x03, 0x00, 0x01, 0x01], source: .tlsExtension)
        #expect(list.count == 1 && list[0].version == 1)
        let assessment = Self.assess(Self.logs(), extra: list)
        #expect(assessment.timestamps.last?.status == .unsupportedVersion)
    }
}

/// CT on the evaluation road: a policy's requirement decides, on the anchors' path.
@Suite("Certificate Transparency in an evaluation", SharedData.requires("ct", "realworld"))
struct CTEvaluationTests {
    typealias CT = CertificateTransparency
    static let subject = CTPolicyTests.subject

    static func policy(webPKI: Bool = true, logs: CT.Logs = CTLogLists.both, enforcement: CT.Enforcement = .enforce,
                       pinning: TrustPolicy.Pinning = .none) throws -> TrustPolicy {
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(subject.file)").path)
        var policy = TrustPolicy(pinning: pinning, anchors: try TrustAnchors(certificates: RealWorldCorpus.anchors(for: chain), classification: webPKI ? .webPKI : .privatePKI),
                                 nameValidation: .disabled(because: "CT is the subject"))
        policy.validation.certificateTransparency = CT.Requirement(policy: .chrome, logs: logs, enforcement: enforcement)
        return policy
    }

    static func evaluate(_ policy: TrustPolicy) throws -> Verdict {
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(subject.file)").path)
        return try Evaluator(policy: policy).evaluate(chain, host: nil, at: subject.time)
    }

    /// The subject's logs with one left out: too few SCTs.
    static var missingOne: CT.Logs { CTPolicyTests.logs { if $0.base.logID == CTPolicyTests.firstLogID { $0.included = false } } }

    @Test("a compliant chain to a public anchor is trusted, and the verdict lists every SCT counted")
    func compliant() throws {
        let verdict = try Self.evaluate(Self.policy())
        #expect(verdict.isTrusted)
        let assessment = try #require(verdict.certificateTransparency)
        #expect(assessment.compliance == .compliant)
        #expect(assessment.timestamps.count == 3 && assessment.timestamps.allSatisfy(\.counted))
    }

    @Test("too few SCTs: ct.not-compliant refuses the chain; report-only makes it a warning")
    func notCompliant() throws {
        let refused = try Self.evaluate(Self.policy(logs: Self.missingOne))
        #expect(!refused.isTrusted)
        #expect(refused.failures.map(\.code) == [.ctNotCompliant])
        let reported = try Self.evaluate(Self.policy(logs: Self.missingOne, enforcement: .reportOnly))
        #expect(reported.isTrusted)
        #expect(reported.warnings.contains { $0.code == .ctNotCompliant && $0.message.contains("report-only") })
    }

    @Test("a path to a private anchor is exempt: verified SCTs are listed, none counted, the chain trusted")
    func privateAnchorExempt() throws {
        let verdict = try Self.evaluate(Self.policy(webPKI: false, logs: Self.missingOne))
        #expect(verdict.isTrusted)
        let assessment = try #require(verdict.certificateTransparency)
        guard case .notApplicable(let why) = assessment.compliance else { Issue.record("\(assessment.compliance)"); return }
        #expect(why.contains("private anchor"))
        #expect(!assessment.timestamps.contains { $0.counted })
    }

    @Test("a certificate-pinned leaf is still held to CT, on the path verified against the anchors")
    func pinnedLeaf() throws {
        let pinned = TrustPolicy.Pinning.certificates(try PinnedCertificates([Self.subject.leaf]))
        let trusted = try Self.evaluate(Self.policy(pinning: pinned))
        #expect(trusted.isTrusted)
        #expect(trusted.certificateTransparency?.compliance == .compliant)
        let refused = try Self.evaluate(Self.policy(logs: Self.missingOne, pinning: pinned))
        #expect(refused.failures.map(\.code) == [.ctNotCompliant])
    }

    @Test("a stale list fails closed by default, and allowing it makes ct.unenforceable a warning")
    func unenforceable() throws {
        let lists = CTLogLists.both.lists.map { CT.LogList(publisher: $0.publisher, logs: $0.logs, timestamp: Self.subject.time.addingTimeInterval(-100 * 86_400), source: $0.source) }
        var policy = try Self.policy(logs: CT.Logs(lists))
        let refused = try Self.evaluate(policy)
        #expect(refused.failures.map(\.code) == [.ctUnenforceable])
        policy.validation.certificateTransparency?.whenUnenforceable = .allow
        let allowed = try Self.evaluate(policy)
        #expect(allowed.isTrusted)
        #expect(allowed.warnings.contains { $0.code == .ctUnenforceable })
    }

    @Test("a cached verdict holds only until a log's next state: rejected from T on, the verdict after T is evaluated anew")
    func cacheWindow() throws {
        let change = Self.subject.time.addingTimeInterval(3600)
        let logs = CTPolicyTests.logs { $0.state = (.rejected, change) }
        let policy = try Self.policy(logs: logs)
        let cache = VerdictCache()
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(Self.subject.file)").path)
        let evaluator = Evaluator(policy: policy, verdictCache: cache)
        let before = try evaluator.evaluate(chain, host: nil, at: Self.subject.time)
        #expect(before.isTrusted)
        #expect(cache.count == 1)
        let again = try evaluator.evaluate(chain, host: nil, at: Self.subject.time.addingTimeInterval(60))
        #expect(again.isTrusted && again.certificateTransparency?.compliance == .compliant)
        let after = try evaluator.evaluate(chain, host: nil, at: change.addingTimeInterval(1))
        #expect(after.failures.map(\.code) == [.ctNotCompliant])
    }
}
