import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Revocation is judged on the path verified against the anchors, whatever the pinning mode: a
/// certificate-pinned leaf (a path of one once re-anchored) is no way around a revoked staple, a
/// missing must-staple staple or a CRL that lists it. One answer per row on every engine road.
@Suite("revocation: every pinning mode, every engine road")
struct RevocationEveryModeTests {
    /// What is wrong with the connection's revocation status.
    enum Source: String, CaseIterable, CustomTestStringConvertible {
        case revokedStaple, mustStapleWithoutStaple, crlListingLeaf, revokedStapleForDirectLeaf
        var testDescription: String { rawValue }

        var chain: [Certificate] {
            switch self {
            case .revokedStaple, .crlListingLeaf: Fixtures.chain("rsa-good")
            case .mustStapleWithoutStaple: Fixtures.chain("../revocation/must-staple-chain")
            case .revokedStapleForDirectLeaf: [Fixtures.certificate("revocation/rsa-direct-leaf")]
            }
        }
        var staple: [UInt8]? {
            switch self {
            case .revokedStaple: try! StapledOCSPTests.response("ocsp-revoked")
            case .revokedStapleForDirectLeaf: try! StapledOCSPTests.response("ocsp-direct-revoked")
            case .mustStapleWithoutStaple, .crlListingLeaf: nil
            }
        }
        /// The same connection with nothing wrong (a good staple, a CRL that lists nothing).
        var goodStaple: [UInt8]? {
            switch self {
            case .revokedStaple: try! StapledOCSPTests.response("ocsp-good")
            case .mustStapleWithoutStaple: try! StapledOCSPTests.response("ocsp-must-staple-good")
            case .crlListingLeaf, .revokedStapleForDirectLeaf: nil
            }
        }
        var crls: [CertificateRevocationList] {
            self == .crlListingLeaf ? try! CertificateRevocationList.load(contentsOf: Fixtures.path("revocation/crl-intermediate-revokes-leaf.pem")) : []
        }
        var goodCRLs: [CertificateRevocationList] {
            self == .crlListingLeaf ? try! CertificateRevocationList.load(contentsOf: Fixtures.path("revocation/crl-intermediate-empty.pem")) : []
        }
        var expected: Reason.Code { self == .mustStapleWithoutStaple ? .stapleMissing : .revoked }
    }

    /// How the policy pins, by depth in the served chain (the root is depth `chain.count`).
    enum Mode: CaseIterable, CustomTestStringConvertible {
        case none, keyOfLeaf, keyOfIssuer, keyOfRoot, certificateLeaf, certificateIssuer, certificateRoot, certificateLeafUnvalidated, keyOfLeafUnvalidated
        var testDescription: String { "\(self)" }

        func pinning(for chain: [Certificate]) throws -> TrustPolicy.Pinning {
            let root = Fixtures.rsaRoot
            let issuer = chain.count > 1 ? chain[1] : root
            switch self {
            case .none: return .none
            case .keyOfLeaf, .keyOfLeafUnvalidated: return .publicKeys(try PinnedPublicKeys(certificates: [chain[0]]))
            case .keyOfIssuer: return .publicKeys(try PinnedPublicKeys(certificates: [issuer]))
            case .keyOfRoot: return .publicKeys(try PinnedPublicKeys(certificates: [root]))
            case .certificateLeaf, .certificateLeafUnvalidated: return .certificates(try PinnedCertificates([chain[0]]))
            case .certificateIssuer: return .certificates(try PinnedCertificates([issuer]))
            case .certificateRoot: return .certificates(try PinnedCertificates([root]))
            }
        }
        var chainValidation: ValidationPolicy.ChainValidation {
            self == .certificateLeafUnvalidated || self == .keyOfLeafUnvalidated ? .disabled(because: "AFNetworking's self-signed pinning") : .required
        }
    }

    static func policy(_ source: Source, _ mode: Mode, good: Bool) throws -> TrustPolicy {
        var policy = TrustPolicy(pinning: try mode.pinning(for: source.chain), anchors: Fixtures.anchors, chainValidation: mode.chainValidation)
        policy.validation.revocationLists = good ? source.goodCRLs : source.crls
        return policy
    }

    /// The verdict on every engine road that takes this policy.
    static func verdicts(_ source: Source, _ mode: Mode, good: Bool) throws -> [(road: String, verdict: Verdict)] {
        let policy = try policy(source, mode, good: good)
        let staple = good ? source.goodStaple : source.staple
        let chain = source.chain
        var verdicts: [(String, Verdict)] = []
        verdicts.append(("Evaluator", try Evaluator(policy: policy).evaluate(chain, host: Fixtures.host, at: Fixtures.time, stapledOCSPResponse: staple)))
        verdicts.append(("Evaluator with a verdict cache", try Evaluator(policy: policy, verdictCache: VerdictCache())
            .evaluate(chain, host: Fixtures.host, at: Fixtures.time, stapledOCSPResponse: staple)))
        let manager = TrustManager(policies: [try HostPolicy(Fixtures.host, policy: policy)], defaultValidation: ValidationPolicy(anchors: Fixtures.anchors))
        verdicts.append(("TrustManager", try manager.evaluate(chain, host: Fixtures.host, at: Fixtures.time, stapledOCSPResponse: staple)))
        let single = TrustManager(policies: [], allHostsMustBeEvaluated: false, defaultValidation: policy.validation)
        verdicts.append(("TrustManager default validation", try single.evaluate(chain, host: Fixtures.host, at: Fixtures.time, stapledOCSPResponse: staple)))
        if policy.validation.revocationLists.isEmpty {
            // AFSecurityPolicy's surface has no CRLs.
            let facade = switch policy.pinning {
            case .none: SecurityPolicy(pinningMode: .none)
            case .certificates(let pinned): SecurityPolicy(pinningMode: .certificate, pinnedCertificates: Set(pinned.certificates))
            case .publicKeys(let pinned): SecurityPolicy(pinningMode: .publicKey, pinnedPublicKeyHashes: pinned.pins)
            }
            facade.anchors = Fixtures.anchors
            facade.allowInvalidCertificates = mode.chainValidation != .required
            verdicts.append(("SecurityPolicy", try facade.evaluate(chain, forDomain: Fixtures.host, at: Fixtures.time, stapledOCSPResponse: staple)))
        }
        return verdicts
    }

    @Test("a revoked or missing revocation status refuses the chain in every pinning mode", arguments: Source.allCases, Mode.allCases)
    func refused(source: Source, mode: Mode) throws {
        for (road, verdict) in try Self.verdicts(source, mode, good: false) {
            #expect(!verdict.isTrusted, "\(road) trusted it")
            #expect(verdict.failures.map(\.code).contains(source.expected), "\(road): \(verdict.failures.map(\.code))")
        }
    }

    @Test("the same policies trust the same chain when its revocation status is good", arguments: Source.allCases, Mode.allCases)
    func trusted(source: Source, mode: Mode) throws {
        // A direct leaf has no good staple fixture; a must-staple leaf is only trusted with its staple.
        guard source != .revokedStapleForDirectLeaf else { return }
        for (road, verdict) in try Self.verdicts(source, mode, good: true) {
            #expect(verdict.isTrusted, "\(road): \(verdict.failures.map(\.code))")
        }
    }
}
