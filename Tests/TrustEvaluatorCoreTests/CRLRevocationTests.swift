import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// CRLs made by scripts/make-revocation-fixtures.sh (`openssl ca -gencrl`), through the configuration.
@Suite("supplied CRLs, leaf and whole chain")
struct CRLRevocationTests {
    static func decide(crls: [String], scope: String? = nil, chain: String = "rsa-good") throws -> Verdict {
        let files = crls.map { "\"revocation/\($0).pem\"" }.joined(separator: ", ")
        let scopeKey = scope.map { #", "crlScope": "\#($0)""# } ?? ""
        let json = """
            { "version": 1, "anchors": ["rsa-root.pem"],
              "hosts": [ { "pattern": "www.example.test", "mode": "none", "revocation": { "crls": [\(files)]\(scopeKey) } } ] }
            """
        let configuration = try Configuration.decode(Data(json.utf8), source: "crl.json", baseDirectory: Fixtures.root.path,
                                                      publicSuffixes: Fixtures.psl)
        return try configuration.trustManager.evaluate(Fixtures.chain(chain), host: "www.example.test", at: Fixtures.time)
    }

    @Test("a CRL listing the leaf rejects it")
    func revokedLeaf() throws {
        let decision = try Self.decide(crls: ["crl-intermediate-revokes-leaf"])
        #expect(decision.disposition == .cancelAuthenticationChallenge)
        #expect(decision.failures.map(\.code).contains(.revoked))
    }

    @Test("a CRL from the issuer that does not list the leaf lets it through")
    func cleanLeaf() throws {
        #expect(try Self.decide(crls: ["crl-intermediate-empty"]).disposition == .useCredential)
    }

    @Test("leaf scope ignores a revoked intermediate; chain scope rejects it")
    func revokedIntermediate() throws {
        let crls = ["crl-intermediate-empty", "crl-root-revokes-intermediate"]
        #expect(try Self.decide(crls: crls, scope: "leaf").disposition == .useCredential)
        let chain = try Self.decide(crls: crls, scope: "chain")
        #expect(chain.disposition == .cancelAuthenticationChallenge)
        #expect(chain.failures.map(\.code).contains(.revoked))
    }

    @Test("chain scope needs a CRL from every issuer")
    func missingCRL() throws {
        let decision = try Self.decide(crls: ["crl-intermediate-empty"], scope: "chain")
        #expect(decision.disposition == .cancelAuthenticationChallenge)
        #expect(decision.failures.map(\.code).contains(.revocationUnknown))
        #expect(try Self.decide(crls: ["crl-intermediate-empty", "crl-root-empty"], scope: "chain").disposition == .useCredential)
    }

    @Test("a CRL file with several CRLs loads them all; other files are errors naming them")
    func loading() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("crls-\(UUID().uuidString).pem").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let both = try ["crl-root-empty", "crl-intermediate-empty"].map { try String(contentsOfFile: Fixtures.path("revocation/\($0).pem"), encoding: .utf8) }
        try both.joined().write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try CertificateRevocationList.load(contentsOf: path).count == 2)
        #expect(throws: PincheckError.self) { try CertificateRevocationList.load(contentsOf: Fixtures.path("rsa-leaf.pem")) }
        #expect(throws: PincheckError.self) { try CertificateRevocationList.load(contentsOf: Fixtures.path("malformed/empty.pem")) }
    }
}
