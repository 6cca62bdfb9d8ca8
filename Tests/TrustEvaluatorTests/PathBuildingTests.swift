import Foundation
import Testing
@testable import TrustEvaluator

/// Where a path may end and how long it may be: the two places where OpenSSL's defaults differ
/// from the real world's verifiers (x509-limbo `rfc5280::root-and-intermediate-swapped`,
/// `cve::cve-2024-0567`, `pathlen::max-chain-depth-1-self-issued`).
@Suite("Path building: intermediate anchors and self-issued certificates", .serialized)
struct PathBuildingTests {
    static let host = "localhost"

    static func evaluate(_ served: [MadePKI.Held], anchors: [MadePKI.Held], maximumDepth: Int? = nil) throws -> Verdict {
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: anchors.map(\.certificate)))
        if let maximumDepth { policy.maximumChainDepth = maximumDepth }
        let at = served[0].certificate.notBefore.addingTimeInterval(86_400)
        return try Evaluator(policy: policy).evaluate(served.map(\.certificate), host: host, at: at)
    }

    @Test("an intermediate the caller trusts ends the path, whether or not its root is served above it")
    func intermediateAnchor() throws {
        let pki = try MadePKI()
        let root = try pki.make("root", ca: 1)
        let intermediate = try pki.make("intermediate", ca: 0, signedBy: root)
        let leaf = try pki.make(Self.host, dnsNames: [Self.host], signedBy: intermediate)

        for served in [[leaf, intermediate, root], [leaf, intermediate], [leaf]] {
            let verdict = try Self.evaluate(served, anchors: [intermediate])
            #expect(verdict.isTrusted, "\(served.count) served: \(verdict.failures)")
            #expect(verdict.verifiedPath?.certificates == [leaf.certificate, intermediate.certificate])
        }
        // A failure on the path to that anchor is reported as such, not as an unknown issuer.
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [intermediate.certificate]))
        policy.maximumChainDepth = 3
        let wrongName = try Evaluator(policy: policy).evaluate([leaf.certificate, intermediate.certificate, root.certificate],
                                                                host: "other.example", at: leaf.certificate.notBefore.addingTimeInterval(86_400))
        #expect(wrongName.failures.map(\.code) == [.hostMismatch], "\(wrongName.failures)")
        // Trusting the intermediate trusts nothing beside it: another CA's leaf is still refused.
        let otherRoot = try pki.make("other root", ca: 0)
        let stranger = try pki.make(Self.host, dnsNames: [Self.host], signedBy: otherRoot)
        let refused = try Self.evaluate([stranger, otherRoot], anchors: [intermediate])
        #expect(!refused.isTrusted)
        #expect(refused.failures.contains { $0.code == .unknownIssuer || $0.code == .untrustedRoot }, "\(refused.failures)")
    }

    @Test("the leaf itself as the only anchor means exactly this certificate (as Go and Chromium take it); its name and validity still count")
    func leafAnchor() throws {
        let pki = try MadePKI()
        let root = try pki.make("root", ca: 0)
        let leaf = try pki.make(Self.host, dnsNames: [Self.host], signedBy: root)
        let verdict = try Self.evaluate([leaf], anchors: [leaf])
        #expect(verdict.isTrusted, "\(verdict.failures)")
        #expect(verdict.verifiedPath?.certificates == [leaf.certificate])

        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [leaf.certificate]))
        policy.maximumChainDepth = 0
        let evaluator = Evaluator(policy: policy)
        let wrongName = try evaluator.evaluate([leaf.certificate], host: "other.example", at: leaf.certificate.notBefore.addingTimeInterval(86_400))
        #expect(wrongName.failures.map(\.code) == [.hostMismatch])
        let late = try evaluator.evaluate([leaf.certificate], host: Self.host, at: leaf.certificate.notAfter.addingTimeInterval(86_400))
        #expect(late.failures.map(\.code).contains(.expired), "\(late.failures)")
    }

    @Test("a self-issued intermediate (a CA's key rollover) does not count towards maximumChainDepth; another CA does")
    func selfIssuedDepth() throws {
        let pki = try MadePKI()
        let root = try pki.make("root", ca: 2)
        let old = try pki.make("issuing CA", ca: 1, signedBy: root)
        // Same name, new key, certified by the old key: self-issued, not self-signed.
        let rollover = try pki.make("issuing CA", ca: 0, signedBy: old)
        let leaf = try pki.make(Self.host, dnsNames: [Self.host], signedBy: rollover)
        #expect(rollover.certificate.subject == rollover.certificate.issuer && !rollover.certificate.isSelfSigned)

        let rolled = try Self.evaluate([leaf, rollover, old], anchors: [root], maximumDepth: 1)
        #expect(rolled.isTrusted, "\(rolled.failures)")
        #expect(rolled.verifiedPath?.certificates.count == 4)

        let none = try Self.evaluate([leaf, rollover, old], anchors: [root], maximumDepth: 0)
        #expect(none.failures.map(\.code).contains(.tooLong), "\(none.failures)")

        // Two CAs of different names are two intermediates.
        let second = try pki.make("second CA", ca: 0, signedBy: old)
        let secondLeaf = try pki.make(Self.host, dnsNames: [Self.host], signedBy: second)
        let long = try Self.evaluate([secondLeaf, second, old], anchors: [root], maximumDepth: 1)
        #expect(long.failures.map(\.code).contains(.tooLong), "\(long.failures)")
        #expect(try Self.evaluate([secondLeaf, second, old], anchors: [root], maximumDepth: 2).isTrusted)
    }
}
