import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// `../shared/ct/`: Google's v3 all-logs list and Apple's current list (the folder's README).
enum CTLogLists {
    static let folder = RealWorldCorpus.folder.deletingLastPathComponent().appendingPathComponent("ct")
    /// The day the mirror took the copies (the folder's README): the lists carry no date of their own.
    static let copied = Timestamp.parse("2026-08-22")!

    static let google: CertificateTransparency.LogList = try! .init(contentsOf: folder.appendingPathComponent("google-all_logs_list.json").path, publishedAt: copied)
    static let apple: CertificateTransparency.LogList = try! .init(contentsOf: folder.appendingPathComponent("apple-current_log_list.json").path, publishedAt: copied)
    static let both = CertificateTransparency.Logs([google, apple])
}

/// One real chain: its leaf, the leaf's issuer on the path verified against its root, and a time
/// inside its validity.
struct RealWorldLeaf {
    let file: String
    let leaf: Certificate
    let issuer: Certificate
    let time: Date

    static let all: [RealWorldLeaf] = RealWorldCorpus.chainFiles.compactMap { file in
        guard let chain = try? Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(file)").path),
              let anchors = try? TrustAnchors(certificates: RealWorldCorpus.anchors(for: chain)),
              let time = RealWorldCorpus.time(for: chain, anchors: RealWorldCorpus.anchors(for: chain)),
              let path = try? Evaluator(policy: TrustPolicy(anchors: anchors, nameValidation: .disabled(because: "the SCTs are the subject")))
                .evaluate(chain, host: nil, at: time).verifiedPath,
              path.certificates.count >= 2 else { return nil }
        return RealWorldLeaf(file: file, leaf: chain[0], issuer: path.certificates[1], time: time)
    }
}

@Suite("Certificate Transparency against the real world", SharedData.requires("ct", "realworld"))
struct CTRealWorldTests {
    @Test("both lists load whole: every log with a key whose hash is its ID")
    func listsLoad() {
        #expect(CTLogLists.google.publisher == .google)
        #expect(CTLogLists.apple.publisher == .apple)
        #expect(CTLogLists.google.logs.count == 117)
        #expect(CTLogLists.apple.logs.count == 166)
        #expect(CTLogLists.google.logs.filter { !$0.isRFC6962 }.count == 75)
    }

    @Test("every embedded SCT of the real leaves verifies against the two lists together")
    func everyEmbeddedSCTVerifies() throws {
        let leaves = RealWorldLeaf.all
        #expect(leaves.count == 197)
        var withSCTs = 0, scts = 0
        var logs: Set<[UInt8]> = []
        for item in leaves {
            let assessment = CertificateTransparency.assess(leaf: item.leaf, issuer: item.issuer, policy: .chrome, logs: CTLogLists.both, at: item.time)
            guard !assessment.timestamps.isEmpty else { continue }
            withSCTs += 1
            for checked in assessment.timestamps {
                scts += 1
                logs.insert(checked.sct.logID)
                #expect(checked.status == .verified, "\(item.file): \(checked.sct.logIDBase64): \(checked.status) \(checked.note)")
            }
        }
        #expect(withSCTs == 138)
        #expect(scts == 356)
        #expect(logs.count == 65)
    }

    @Test("Google's list alone knows 50 of the 356 SCTs; the others are unknown logs that never count")
    func googleAlone() {
        var verified = 0, unknown = 0
        for item in RealWorldLeaf.all {
            for checked in CertificateTransparency.assess(leaf: item.leaf, issuer: item.issuer, policy: .chrome,
                                                          logs: .init([CTLogLists.google]), at: item.time).timestamps {
                if checked.status == .verified { verified += 1 }
                if checked.status == .unknownLog { unknown += 1; #expect(!checked.counted) }
            }
        }
        #expect(verified == 50)
        #expect(unknown == 306)
    }

    @Test("a changed byte in the issuer's key hash or the TBS breaks every signature")
    func wrongIssuer() throws {
        let item = try #require(RealWorldLeaf.all.first { !CertificateTransparency.assess(leaf: $0.leaf, issuer: $0.issuer, policy: .chrome, logs: CTLogLists.both, at: $0.time).timestamps.isEmpty })
        // The leaf itself as "issuer": the key hash is wrong.
        let assessment = CertificateTransparency.assess(leaf: item.leaf, issuer: item.leaf, policy: .chrome, logs: CTLogLists.both, at: item.time)
        #expect(!assessment.timestamps.isEmpty)
        #expect(assessment.timestamps.allSatisfy { $0.status == .badSignature })
        let unverifiable = CertificateTransparency.assess(leaf: item.leaf, issuer: nil, policy: .chrome, logs: CTLogLists.both, at: item.time)
        #expect(unverifiable.timestamps.allSatisfy { $0.status == .noIssuer })
        if case .compliant = unverifiable.compliance { Issue.record("compliant without a verified SCT") }
    }

    @Test("each policy's answer for every real leaf at a time inside its validity: compliant, or issued before the policy, but for the one chain whose SCTs came in the TLS extension",
          arguments: CertificateTransparency.Policy.allCases)
    func policyAnswers(policy: CertificateTransparency.Policy) {
        var compliant = 0, notApplicable = 0
        var notCompliant: [String] = []
        for item in RealWorldLeaf.all {
            let assessment = CertificateTransparency.assess(leaf: item.leaf, issuer: item.issuer, policy: policy, logs: CTLogLists.both, at: item.time)
            switch assessment.compliance {
            case .compliant:
                compliant += 1
                #expect(assessment.timestamps.contains { $0.counted })
            case .notApplicable:
                notApplicable += 1
                #expect(item.leaf.notBefore < policy.effectiveDate)
            case .notCompliant(let why): notCompliant.append("\(item.file): \(why)")
            case .unenforceable(let why): Issue.record("\(item.file): unenforceable: \(why)")
            }
        }
        // Chrome's policy starts 2018-05-01, Apple's after 2018-10-15: two leaves fall between.
        #expect(compliant == (policy == .chrome ? 104 : 102))
        #expect(notApplicable == (policy == .chrome ? 92 : 94))
        #expect(notCompliant.count == 1)
        #expect(notCompliant.first?.hasPrefix("tx-appspot_2019_chain.pem") == true, "\(notCompliant)")
    }
}
