import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// Client certificates after the public CAs stopped issuing them (issue 44): anchors that are
/// public roots are named, and a leaf without clientAuth is refused in plain words.
@Suite("client anchors and clientAuth")
struct ClientAnchorWarningTests {
    @Test("a private CA: no warning; the same root in a root program: named with the program and the 2026 dates; the system store: named")
    func publicRootsNamed() throws {
        let root = Fixtures.rsaRoot
        let anchors = try TrustAnchors(certificates: [root])
        #expect(anchors.clientAuthenticationWarnings(rootPrograms: .none) == [])
        let programs = RootProgramFixtures.programs(root, [RootPrograms.Membership(program: .mozilla, status: .included)])
        let warnings = anchors.clientAuthenticationWarnings(rootPrograms: programs)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("\(root.subject) is a public root (Mozilla)") == true, "\(warnings)")
        #expect(warnings.first?.contains("2026-02-11") == true)
        let removed = RootProgramFixtures.programs(root, [RootPrograms.Membership(program: .chrome, status: .removed)])
        #expect(anchors.clientAuthenticationWarnings(rootPrograms: removed) == [], "a removed root is in no program")
        #expect(TrustAnchors.system.clientAuthenticationWarnings().first?.contains("system store") == true)
    }

    @Test("a server-only leaf judged as a client: chain.wrong-purpose saying its extendedKeyUsage has no clientAuth")
    func serverOnlyLeafAsClient() throws {
        var policy = TrustPolicy(anchors: Fixtures.anchors, nameValidation: .disabled(because: "a client names no host"))
        policy.validation.purpose = .clientAuthentication
        let evaluator = Evaluator(policy: policy)
        let server = try evaluator.evaluate(Fixtures.chain("rsa-good"), host: nil, at: Fixtures.time)
        let failure = try #require(server.failures.first { $0.code == .wrongPurpose })
        #expect(failure.message.contains("its extendedKeyUsage has no clientAuth (serverAuth only)"), "\(failure.message)")
        #expect(failure.message.contains("Let's Encrypt"))
        let client = try evaluator.evaluate(Fixtures.chain("rsa-client-only"), host: nil, at: Fixtures.time)
        #expect(client.isTrusted, "\(client.failures)")
        // Judged as a server, the client-only leaf fails without the clientAuth sentence.
        let asServer = try Evaluator(policy: TrustPolicy(anchors: Fixtures.anchors, nameValidation: .disabled(because: "test")))
            .evaluate(Fixtures.chain("rsa-client-only"), host: nil, at: Fixtures.time)
        let serverFailure = try #require(asServer.failures.first { $0.code == .wrongPurpose })
        #expect(!serverFailure.message.contains("clientAuth"))
    }
}
