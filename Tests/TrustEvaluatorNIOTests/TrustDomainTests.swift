import Foundation
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// Client certificates judged by SPIFFE trust domain (issue 44): each domain's identities must
/// chain to that domain's bundle and no other.
@Suite("mTLS: SPIFFE trust domains")
struct TrustDomainTests {
    static let pki = SPIFFEDomainsPKI.files

    static func domains(crlA: Bool = false) throws -> [SPIFFETrustDomain] {
        [
            try SPIFFETrustDomain("a.test", anchors: try TrustAnchors(certificates: Certificate.load(contentsOf: pki.rootA), classification: .privatePKI),
                                  revocationLists: crlA ? try CertificateRevocationList.load(contentsOf: pki.crlA) : []),
            try SPIFFETrustDomain("b.test", anchors: try TrustAnchors(certificates: Certificate.load(contentsOf: pki.rootB), classification: .privatePKI)),
        ]
    }

    static func verifier(_ domains: [SPIFFETrustDomain], identities: [ClientIdentity] = []) throws -> PincheckClientCertificateVerifier {
        try PincheckClientCertificateVerifier(trustDomains: domains, requiredIdentities: identities, now: { TestPKI.time }, offloadEvaluation: false)
    }

    static func verdict(_ verifier: PincheckClientCertificateVerifier, _ client: SPIFFEDomainsPKI.Client) async throws -> Verdict {
        let chain = try Certificate.load(contentsOf: client.certificate).map(\.derBytes)
        return try await verifier.verdict(derChain: chain).get()
    }

    @Test("each domain's own clients are trusted, each against its own CA")
    func ownClients() async throws {
        let verifier = try Self.verifier(try Self.domains())
        let a = try await Self.verdict(verifier, Self.pki.clientA)
        #expect(a.isTrusted, "\(a.failures)")
        #expect(a.verifiedPath?.certificates.last?.subject.contains("Trust domain a.test CA") == true)
        let b = try await Self.verdict(verifier, Self.pki.clientB)
        #expect(b.isTrusted, "\(b.failures)")
        #expect(b.verifiedPath?.certificates.last?.subject.contains("Trust domain b.test CA") == true)
    }

    @Test("B's CA issuing A's identity is refused: identity.trust-domain-mismatch, though a flat anchor set would trust it")
    func crossDomain() async throws {
        let verifier = try Self.verifier(try Self.domains())
        let verdict = try await Self.verdict(verifier, Self.pki.bClaimingA)
        #expect(!verdict.isTrusted)
        let codes = verdict.failures.map(\.code)
        #expect(codes.contains(.trustDomainMismatch), "\(codes)")
        let mismatch = try #require(verdict.failures.first { $0.code == .trustDomainMismatch })
        #expect(mismatch.message.contains("claims \(SPIFFEDomainsPKI.identityA)") && mismatch.message.contains("trust domain b.test's CA"))
        // The same certificate against one flat set of both CAs: trusted. This is what domains prevent.
        let both = try Certificate.load(contentsOf: Self.pki.rootA) + Certificate.load(contentsOf: Self.pki.rootB)
        let flat = try PincheckClientCertificateVerifier(policy: TrustPolicy(anchors: try TrustAnchors(certificates: both, classification: .privatePKI)),
                                                         now: { TestPKI.time }, offloadEvaluation: false)
        #expect(try await Self.verdict(flat, Self.pki.bClaimingA).isTrusted)
    }

    @Test("no SPIFFE ID, two of them, or an unknown domain: refused with a typed reason, whatever the chain")
    func unroutable() async throws {
        let verifier = try Self.verifier(try Self.domains())
        let none = try await Self.verdict(verifier, Self.pki.noSPIFFEID)
        #expect(none.failures.map(\.code) == [.trustDomainMissing], "\(none.failures)")
        #expect(none.failures.first?.message.contains("carries no SPIFFE ID") == true)
        let two = try await Self.verdict(verifier, Self.pki.twoSPIFFEIDs)
        #expect(two.failures.map(\.code) == [.trustDomainMissing])
        #expect(two.failures.first?.message.contains("carries 2 SPIFFE IDs") == true)
        let unknown = try await Self.verdict(verifier, Self.pki.unknownDomain)
        #expect(unknown.failures.map(\.code) == [.trustDomainUnknown])
        #expect(unknown.failures.first?.message.contains("c.test") == true)
        #expect(!none.isTrusted && !two.isTrusted && !unknown.isTrusted)
    }

    @Test("a domain's CRL revokes its own client; the other domain is not affected")
    func perDomainRevocation() async throws {
        let verifier = try Self.verifier(try Self.domains(crlA: true))
        let revoked = try await Self.verdict(verifier, Self.pki.revokedA)
        #expect(revoked.failures.map(\.code) == [.revoked], "\(revoked.failures)")
        #expect(try await Self.verdict(verifier, Self.pki.clientA).isTrusted)
        #expect(try await Self.verdict(verifier, Self.pki.clientB).isTrusted)
        // Without A's CRL the same client is trusted: the refusal above is the CRL's.
        #expect(try await Self.verdict(try Self.verifier(try Self.domains()), Self.pki.revokedA).isTrusted)
    }

    @Test("identities are still authorised per server: a B client is refused where only A's identity may call")
    func identitiesStillApply() async throws {
        let verifier = try Self.verifier(try Self.domains(), identities: [.uri(SPIFFEDomainsPKI.identityA)])
        #expect(try await Self.verdict(verifier, Self.pki.clientA).isTrusted)
        #expect(try await Self.verdict(verifier, Self.pki.clientB).failures.map(\.code) == [.identityMismatch])
    }

    @Test("over TLS: the A client completes the handshake, B's CA claiming A does not")
    func handshakes() async throws {
        let verifier = try Self.verifier(try Self.domains())
        let right = try await ClientCertificateTests.run(verifier, chain: [Self.pki.clientA.certificate], key: Self.pki.clientA.key)
        #expect(throws: Never.self) { try right.answer.get() }
        #expect(right.decisions.first?.clientIdentities == [.uri(SPIFFEDomainsPKI.identityA)])
        let forged = try await ClientCertificateTests.run(verifier, chain: [Self.pki.bClaimingA.certificate], key: Self.pki.bClaimingA.key)
        #expect(throws: (any Error).self) { try forged.answer.get() }
        #expect(forged.decisions.first?.verdict?.failures.map(\.code).contains(.trustDomainMismatch) == true)
    }

    @Test("bundles from a SPIFFE bundle folder: one DOMAIN.trust-bundle.pem per domain")
    func bundleFolder() throws {
        let domains = try SPIFFETrustDomain.bundles(inFolder: Self.pki.bundleFolder)
        #expect(domains.map(\.name) == ["a.test", "b.test"])
        #expect(domains.map(\.anchors.certificates.count) == [1, 1])
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-empty-bundles-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(throws: PincheckError.self) { try SPIFFETrustDomain.bundles(inFolder: empty) }
        try FileManager.default.copyItem(atPath: Self.pki.rootA, toPath: empty + "/Upper.Case.trust-bundle.pem")
        #expect(throws: PincheckError.self) { try SPIFFETrustDomain.bundles(inFolder: empty) }
    }

    @Test("configuration mistakes are refused: no domain, a domain twice, the system store as a bundle")
    func badConfiguration() throws {
        #expect(throws: PincheckError.self) { try Self.verifier([]) }
        let a = try Self.domains()[0]
        #expect(throws: PincheckError.self) { try Self.verifier([a, a]) }
        #expect(throws: PincheckError.self) { try SPIFFETrustDomain("a.test", anchors: .system) }
    }

    @Test("SPIFFE IDs are parsed by the specification's rules", arguments: [
        ("spiffe://example.org/ns/prod/sa/api", "example.org"), ("spiffe://example.org", "example.org"),
        ("spiffe://my_domain-1.test/a.b/c-d_e", "my_domain-1.test"),
    ])
    func validIDs(_ text: String, _ domain: String) throws {
        let id = try SPIFFEID(parsing: text)
        #expect(id.trustDomain == domain)
        #expect(id.description == text)
    }

    @Test("malformed SPIFFE IDs are refused", arguments: [
        "https://example.org/a", "spiffe://Example.org/a", "spiffe://example.org:8080/a", "spiffe://user@example.org/a",
        "spiffe://example.org/", "spiffe://example.org//a", "spiffe://example.org/a/../b", "spiffe://example.org/a?x=1",
        "spiffe://example.org/a#f", "spiffe:///a", "spiffe://example.org/a%20b",
    ])
    func invalidIDs(_ text: String) {
        #expect(throws: PincheckError.self) { try SPIFFEID(parsing: text) }
    }
}
