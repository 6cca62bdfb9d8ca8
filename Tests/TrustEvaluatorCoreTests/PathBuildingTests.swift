import Foundation
import Testing
import PincheckTestSupport
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Where a path may end and how long it may be: the two places where OpenSSL's defaults differ
/// from the real world's verifiers (x509-limbo `rfc5280::root-and-intermediate-swapped`,
/// `cve::cve-2024-0567`, `pathlen::max-chain-depth-1-self-issued`).
@Suite("Path building: intermediate anchors and self-issued certificates", .serialized)
struct PathBuildingTests {
    static let host = "localhost"

    static func evaluate(_ served: [MadePKI.Held], anchors: [MadePKI.Held], maximumDepth: Int? = nil) throws -> Verdict {
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: anchors.map(\.certificate)))
        if let maximumDepth { policy.validation.maximumChainDepth = maximumDepth }
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
        policy.validation.maximumChainDepth = 3
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
        policy.validation.maximumChainDepth = 0
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

/// Several anchors with one name (two developers' `CN=localhost` certificates, keytool's and Go's
/// `generate_cert` defaults) in one bundle: OpenSSL looks an issuer up by name and stops at the
/// first, so the right one had to be listed first. Every candidate is tried, in either order.
@Suite("Path building: same-named anchors, in any order")
struct SameNamedAnchorTests {
    /// Certificates made with the openssl CLI, without key identifiers (as keytool's and
    /// generate_cert's are), so nothing but the key tells same-named certificates apart.
    final class Made {
        let folder: String
        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-same-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: folder) }

        func selfSigned(_ name: String, subject: String, ca: Bool) throws -> Certificate {
            var arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(folder)/\(name).key", "-out", "\(folder)/\(name).pem",
                             "-subj", subject, "-days", "36500", "-addext", "subjectKeyIdentifier=none", "-addext", "authorityKeyIdentifier=none"]
            arguments += ca ? ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]
                            : ["-addext", "subjectAltName=DNS:localhost", "-addext", "extendedKeyUsage=serverAuth"]
            try #require(try OpenSSLCLI.run(arguments) == 0)
            return try Certificate.load(contentsOf: "\(folder)/\(name).pem")[0]
        }

        func leaf(_ name: String, issuer: String) throws -> Certificate {
            try "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\nauthorityKeyIdentifier=none\nsubjectKeyIdentifier=none\n"
                .write(toFile: "\(folder)/ext", atomically: true, encoding: .utf8)
            try #require(try OpenSSLCLI.run(["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(folder)/\(name).key",
                                             "-out", "\(folder)/\(name).csr", "-subj", "/CN=localhost"]) == 0)
            try #require(try OpenSSLCLI.run(["x509", "-req", "-in", "\(folder)/\(name).csr", "-CA", "\(folder)/\(issuer).pem",
                                             "-CAkey", "\(folder)/\(issuer).key", "-set_serial", "7", "-days", "36500",
                                             "-extfile", "\(folder)/ext", "-out", "\(folder)/\(name).pem"]) == 0)
            return try Certificate.load(contentsOf: "\(folder)/\(name).pem")[0]
        }
    }

    static func verdict(_ served: [Certificate], anchors: [Certificate]) throws -> Verdict {
        try Evaluator(policy: TrustPolicy(anchors: try TrustAnchors(certificates: anchors)))
            .evaluate(served, host: "localhost", at: Fixtures.time)
    }

    @Test("a self-signed leaf among same-named anchors is trusted in either order; a third with that name is not")
    func selfSignedLeaves() throws {
        let made = try Made()
        let a = try made.selfSigned("a", subject: "/CN=localhost", ca: false)
        let b = try made.selfSigned("b", subject: "/CN=localhost", ca: false)
        let stranger = try made.selfSigned("c", subject: "/CN=localhost", ca: false)
        for bundle in [[a, b], [b, a]] {
            for leaf in [a, b] {
                let verdict = try Self.verdict([leaf], anchors: bundle)
                #expect(verdict.isTrusted, "\(verdict.failures)")
                #expect(verdict.verifiedPath?.certificates == [leaf])
            }
            #expect(!(try Self.verdict([stranger], anchors: bundle)).isTrusted)
        }
    }

    @Test("a leaf under the second of two same-named roots is trusted in either order; a foreign same-named root's leaf is not")
    func sameNamedRoots() throws {
        let made = try Made()
        let first = try made.selfSigned("r1", subject: "/O=Acme Co", ca: true)
        let second = try made.selfSigned("r2", subject: "/O=Acme Co", ca: true)
        let foreign = try made.selfSigned("r3", subject: "/O=Acme Co", ca: true)
        let leaf = try made.leaf("leaf", issuer: "r2")
        let impostor = try made.leaf("impostor", issuer: "r3")
        for bundle in [[first, second], [second, first]] {
            let verdict = try Self.verdict([leaf], anchors: bundle)
            #expect(verdict.isTrusted, "\(verdict.failures)")
            #expect(verdict.verifiedPath?.certificates == [leaf, second])
            #expect(!(try Self.verdict([impostor, foreign], anchors: bundle)).isTrusted)
            #expect(!(try Self.verdict([impostor], anchors: bundle)).isTrusted)
        }
    }
}
