import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Self-signed server certificates made by the openssl CLI for one test (valid for a century
/// from when they are made; judged at a time inside that).
enum MadeCertificate {

    static func selfSigned(names: [String], extensions: [String] = ["extendedKeyUsage=serverAuth"]) throws -> Certificate {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-made-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("cert.pem").path
        var arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                         "-keyout", folder.appendingPathComponent("key.pem").path, "-out", out,
                         "-subj", "/O=Pincheck Tests", "-days", "36500",
                         "-addext", "basicConstraints=critical,CA:FALSE",
                         "-addext", "subjectAltName=" + names.map { "DNS:\($0)" }.joined(separator: ",")]
        for ext in extensions { arguments += ["-addext", ext] }
        try #require(try OpenSSLCLI.run(arguments) == 0, "openssl req failed")
        return try Certificate.load(contentsOf: out)[0]
    }

    /// A time inside the certificate's validity.
    static func time(for certificate: Certificate) -> Date {
        certificate.notBefore.addingTimeInterval(86_400)
    }
}

@Suite("Wildcards over public registries match nothing; the leaf is judged on its other names")
struct RegistryWildcardTests {
    static let list = PublicSuffixList(text: """
        // ===BEGIN ICANN DOMAINS===
        com
        uk
        co.uk
        *.ck
        !www.ck
        // ===END ICANN DOMAINS===
        // ===BEGIN PRIVATE DOMAINS===
        s3.amazonaws.com
        github.io
        // ===END PRIVATE DOMAINS===
        """)

    @Test("ICANN suffixes and unknown top-level domains are registries; private-section suffixes are not", arguments: [
        ("com", true), ("co.uk", true), ("anything.ck", true), ("www.ck", false), ("intranet", true),
        ("s3.amazonaws.com", false), ("github.io", false), ("example.com", false), ("amazonaws.com", false),
    ])
    func sections(name: String, registry: Bool) {
        #expect(Self.list.isICANNSuffix(name) == registry)
        // Both sections still count as public suffixes for host patterns.
        if name == "s3.amazonaws.com" || name == "github.io" { #expect(Self.list.isPublicSuffix(name)) }
    }

    @Test("the registry wildcards of a name list, and the names that still match")
    func matching() {
        let names = ["*.co.uk", "www.example.co.uk", "*.github.io", "*.example.com"]
        let registry = RegistryWildcardCheck.registryWildcards(names, Self.list)
        #expect(registry == ["*.co.uk"])
        #expect(RegistryWildcardCheck.matches(host: "www.example.co.uk", names: names, ignoring: registry))
        #expect(RegistryWildcardCheck.matches(host: "octocat.github.io", names: names, ignoring: registry))
        #expect(RegistryWildcardCheck.matches(host: "a.example.com", names: names, ignoring: registry))
        #expect(!RegistryWildcardCheck.matches(host: "victim.co.uk", names: names, ignoring: registry))
        #expect(!RegistryWildcardCheck.matches(host: "a.b.example.com", names: names, ignoring: registry))
    }

    @Test("with Debian's list: *.co.uk matches no host, an exact name beside it does, and *.github.io matches",
          .enabled(if: PublicSuffixList.system != nil, "needs Debian's Public Suffix List (/usr/share/publicsuffix: apt-get install publicsuffix, which scripts/setup.sh does)"))
    func endToEnd() throws {
        let leaf = try MadeCertificate.selfSigned(names: ["*.co.uk", "www.example.co.uk"])
        let evaluator = Evaluator(policy: TrustPolicy(anchors: try TrustAnchors(certificates: [leaf])))
        let at = MadeCertificate.time(for: leaf)

        let exact = try evaluator.evaluate([leaf], host: "www.example.co.uk", at: at)
        #expect(exact.isTrusted, "\(exact.failures)")
        #expect(exact.warnings.contains { $0.message.contains("*.co.uk") })

        let other = try evaluator.evaluate([leaf], host: "victim.co.uk", at: at)
        #expect(other.failures.map(\.code) == [.hostMismatch])
        #expect(other.failures.first?.message.contains("wildcard over a public registry") == true)

        let pages = try MadeCertificate.selfSigned(names: ["*.github.io", "github.io"])
        let pagesVerdict = try Evaluator(policy: TrustPolicy(anchors: try TrustAnchors(certificates: [pages])))
            .evaluate([pages], host: "octocat.github.io", at: MadeCertificate.time(for: pages))
        #expect(pagesVerdict.isTrusted, "\(pagesVerdict.failures)")
        #expect(pagesVerdict.warnings.allSatisfy { $0.code != .profileViolation })
    }

    @Test("with chain validation disabled, a registry wildcard still matches nothing: the name check decides",
          .enabled(if: PublicSuffixList.system != nil, "needs Debian's Public Suffix List (/usr/share/publicsuffix: apt-get install publicsuffix, which scripts/setup.sh does)"))
    func disabledChainValidation() throws {
        let leaf = try MadeCertificate.selfSigned(names: ["*.co.uk"])
        let policy = TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(certificates: [leaf])), anchors: try TrustAnchors(certificates: [leaf]),
                                 chainValidation: .disabled(because: "test"))
        let verdict = try Evaluator(policy: policy).evaluate([leaf], host: "victim.co.uk", at: MadeCertificate.time(for: leaf))
        #expect(verdict.failures.map(\.code) == [.hostMismatch])
    }
}

@Suite("Chain validation disabled: the profile informs, the pins and the name decide")
struct DisabledValidationProfileTests {
    @Test("a pinned self-signed certificate with a critical EKU and no key identifiers is trusted with warnings",
          arguments: [SecurityPolicy.PinningMode.publicKey, .certificate])
    func pinnedSelfSigned(mode: SecurityPolicy.PinningMode) throws {
        let leaf = try MadeCertificate.selfSigned(names: ["test.example"], extensions: [
            "extendedKeyUsage=critical,serverAuth", "subjectKeyIdentifier=none", "authorityKeyIdentifier=none",
        ])
        let policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: [leaf])
        policy.allowInvalidCertificates = true
        let verdict = try policy.evaluate([leaf], forDomain: "test.example", at: MadeCertificate.time(for: leaf))
        #expect(verdict.isTrusted, "\(verdict.failures)")
        #expect(verdict.warnings.contains { $0.code == .profileViolation && $0.message.contains("critical") })
        // The name still decides.
        let wrongName = try policy.evaluate([leaf], forDomain: "other.example", at: MadeCertificate.time(for: leaf))
        #expect(!wrongName.isTrusted)
        // And the pins: another key is refused.
        let stranger = try MadeCertificate.selfSigned(names: ["test.example"], extensions: ["extendedKeyUsage=critical,serverAuth"])
        #expect(try !policy.evaluate([stranger], forDomain: "test.example", at: MadeCertificate.time(for: stranger)).isTrusted)
    }

    @Test("with chain validation required, the same profile finding is a failure where the profile rejects it")
    func requiredStillRejects() throws {
        let leaf = try MadeCertificate.selfSigned(names: ["test.example"], extensions: ["extendedKeyUsage=serverAuth,anyExtendedKeyUsage"])
        let pinned = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [leaf])
        pinned.anchors = try TrustAnchors(certificates: [leaf])
        let required = try pinned.evaluate([leaf], forDomain: "test.example", at: MadeCertificate.time(for: leaf))
        #expect(required.failures.contains { $0.code == .profileViolation && $0.message.contains("anyExtendedKeyUsage") })
        pinned.allowInvalidCertificates = true
        let disabled = try pinned.evaluate([leaf], forDomain: "test.example", at: MadeCertificate.time(for: leaf))
        #expect(disabled.isTrusted, "\(disabled.failures)")
        #expect(disabled.warnings.contains { $0.message.contains("anyExtendedKeyUsage") && $0.message.contains("not counted") })
    }
}
