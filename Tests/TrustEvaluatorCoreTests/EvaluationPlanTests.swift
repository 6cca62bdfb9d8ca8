import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// The plan lists a policy's requirements once, in the order their reasons appear; the run only
/// runs them. These pin the list itself: where each requirement sits, and which are left out.
@Suite("evaluation plan")
struct EvaluationPlanTests {
    static func names(_ plan: EvaluationPlan) -> [String] {
        plan.checks.map { String(describing: type(of: $0)) }
    }

    static let pins = try! PinnedPublicKeys(pins: [Fixtures.certificate("rsa-intermediate").publicKeyPin])

    @Test("a pinned host with CT and an override: every requirement in its place, one enforcement check per pin set")
    func fullList() throws {
        var validation = ValidationPolicy(anchors: try TrustAnchors(certificates: [Fixtures.rsaRoot]))
        validation.certificateTransparency = CertificateTransparency.Requirement(policy: .chrome, logs: CertificateTransparency.Logs([]))
        let sets = [PinSet(.publicKeys(Self.pins), enforcement: .enforce, expires: nil),
                    PinSet(.publicKeys(Self.pins), enforcement: .reportOnly, expires: nil)]
        let plan = EvaluationPlan(validation: validation, pinSets: sets, pinOverrideAnchors: try TrustAnchors(certificates: [Fixtures.ecRoot]),
                                  coverage: .hostPolicy)
        #expect(Self.names(plan) == ["ValidationSwitchesCheck", "PinSetExpiryCheck", "UnpinnedNameCheck", "AnchorsPathCheck",
                                     "PinSetEnforcementCheck", "PinSetEnforcementCheck", "JudgedPathsCheck", "RevocationCheck",
                                     "TransparencyCheck", "RootProgramDistrustCheck"])
        let enforcement = plan.checks.compactMap { $0 as? PinSetEnforcementCheck }
        #expect(enforcement.map(\.index) == [0, 1])
        #expect(enforcement[0].pinOverride != nil, "an enforced set may be overridden (Android overridePins)")
        #expect(enforcement[1].pinOverride == nil, "a report-only set needs no override")
        let override = try #require(enforcement[0].pinOverride)
        #expect(!Self.names(override).contains("RevocationCheck") && !Self.names(override).contains("PinSetExpiryCheck")
                && !Self.names(override).contains("RootProgramDistrustCheck"),
                "the override plan verifies the chain only: its caller judges revocation and pins")
        #expect(enforcement[0].pinOverride === enforcement[0].pinOverride, "made once, with the plan")
    }

    @Test("unlisted hosts: no pin checks, and the refusal runs even after the chain failed")
    func unlisted() throws {
        let validation = ValidationPolicy(anchors: try TrustAnchors(certificates: [Fixtures.ecRoot]))
        let refused = EvaluationPlan(validation: validation, pinSets: [], coverage: .unlistedRefused)
        #expect(Self.names(refused) == ["ValidationSwitchesCheck", "UnpinnedNameCheck", "AnchorsPathCheck", "JudgedPathsCheck",
                                        "RevocationCheck", "RootProgramDistrustCheck", "UnlistedHostCheck"])
        // The RSA chain does not verify to the ECDSA root: the anchors' check stops the run, and
        // the unlisted-host rule still says its part, last.
        let verdict = refused.evaluate(Fixtures.chain("rsa-good"), peer: try HostName.peerName(for: "www.example.test"),
                                       at: Fixtures.time, staple: nil, verdictCache: nil, diagnostics: nil)
        #expect(verdict.failures.last?.code == .hostNotListed)
        #expect(verdict.failures.count >= 2)
        #expect(!verdict.failures.contains { $0.code == .revocationUnknown }, "revocation was not judged after the stop")
    }
}
