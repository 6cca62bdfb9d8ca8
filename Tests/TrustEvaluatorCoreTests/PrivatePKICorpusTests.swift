import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Chains made by the tools private PKIs and development machines use, at their documented
/// defaults (`scripts/make-private-pki-corpus.sh`, run once; `Certificates/private-pki/manifest.tsv`
/// names each fixture's tool, version and command). OpenSSL's verifier, Go's and Java's accept
/// every one; Pincheck must too, with their CA as the only anchor, and refuse every wrong host,
/// same-named foreign CA and wrong pin.
@Suite("Private PKIs: the chains mkcert, easy-rsa, trustme, cfssl, certtool, certutil, keytool, certipy, Go, minica, strongSwan and openssl make")
struct PrivatePKICorpusTests {
    struct Fixture: Sendable, CustomTestStringConvertible {
        let name: String
        let tool: String
        let hosts: [String]
        let time: Date
        let command: String
        var testDescription: String { "\(name) (\(tool))" }

        var folder: String { Fixtures.path("private-pki/\(name)") }
        func load(_ file: String) throws -> [Certificate] { try Certificate.load(contentsOf: "\(folder)/\(file)") }
        var chain: [Certificate] { get throws { try load("chain.pem") } }
        var root: Certificate { get throws { try load("root.pem")[0] } }

        func verdict(pinning: TrustPolicy.Pinning = .none, anchors: [Certificate]? = nil, host: String) throws -> Verdict {
            let policy = TrustPolicy(pinning: pinning, anchors: try TrustAnchors(certificates: anchors ?? [root]))
            return try Evaluator(policy: policy).evaluate(try chain, host: host, at: time)
        }
    }

    static let all: [Fixture] = {
        let text = (try? String(contentsOfFile: Fixtures.path("private-pki/manifest.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, let time = Timestamp.parse(fields[3]) else { return nil }
            return Fixture(name: fields[0], tool: fields[1], hosts: fields[2].split(separator: ",").map(String.init), time: time, command: fields[4])
        }
    }()

    @Test("the manifest lists the tools the issue names, each with a version and a command")
    func manifest() {
        let tools = Self.all.map(\.tool).joined(separator: " | ")
        for tool in ["mkcert", "easy-rsa", "cfssl", "certtool", "certutil", "keytool", "trustme", "certipy", "generate_cert.go", "minica", "strongSwan pki", "OpenSSL"] {
            #expect(tools.contains(tool), "\(tool) in \(tools)")
        }
        #expect(Self.all.count >= 15)
        #expect(Self.all.allSatisfy { !$0.command.isEmpty && $0.tool.contains(where: \.isNumber) })
        #expect(Self.all.contains { $0.name == "easy-rsa-san" } && Self.all.contains { $0.name == "trustme-child-ca" })
    }

    @Test("every host the leaf was made for is trusted with the tool's CA as the only anchor", arguments: all)
    func trusted(fixture: Fixture) throws {
        for host in fixture.hosts {
            let verdict = try fixture.verdict(host: host)
            #expect(verdict.isTrusted, "\(fixture.command) → \(host): \(verdict.failures.map { "\($0.code) \($0.message)" })")
        }
    }

    @Test("a host the leaf was not made for is refused", arguments: all)
    func wrongHost(fixture: Fixture) throws {
        for host in ["wrong.example.invalid", "10.9.8.7"] {
            let verdict = try fixture.verdict(host: host)
            #expect(!verdict.isTrusted)
            #expect(verdict.failures.contains { $0.code == .hostMismatch || $0.code == .ipAddressMismatch }, "\(host): \(verdict.failures.map(\.code))")
        }
    }

    @Test("a foreign CA with the same subject is refused as the anchor", arguments: all)
    func foreignCA(fixture: Fixture) throws {
        let foreign = try fixture.load("foreign-root.pem")[0]
        #expect(foreign.subject == (try fixture.root).subject)
        let verdict = try fixture.verdict(anchors: [foreign], host: fixture.hosts[0])
        #expect(!verdict.isTrusted, "\(fixture.name) trusted under a stranger's CA")
    }

    @Test("the root's and the leaf's SPKI pins match; a stranger's pin does not", arguments: all)
    func pins(fixture: Fixture) throws {
        let chain = try fixture.chain
        let root = try fixture.root
        let rootPinned = try fixture.verdict(pinning: .publicKeys(try PinnedPublicKeys(certificates: [root])), host: fixture.hosts[0])
        #expect(rootPinned.isTrusted, "\(rootPinned.failures.map(\.code))")
        #expect(rootPinned.matchedPins.map(\.pin).contains(root.publicKeyPin))
        let leafPinned = try fixture.verdict(pinning: .publicKeys(try PinnedPublicKeys(certificates: [chain[0]])), host: fixture.hosts[0])
        #expect(leafPinned.isTrusted, "\(leafPinned.failures.map(\.code))")
        #expect(leafPinned.matchedPins.contains { $0.depth == 0 })
        let stranger = try fixture.verdict(pinning: .publicKeys(try PinnedPublicKeys(certificates: [Fixtures.rsaRoot])), host: fixture.hosts[0])
        #expect(stranger.failures.map(\.code) == [.pinMismatch])
    }

    @Test("keytool's and generate_cert's same-named roots: trusted with the right root first or second in the bundle", arguments: [
        ("keytool", "other-localhost-root.pem"), ("go-generate-cert", "other-acme-root.pem"),
    ])
    func sameNamedBundle(name: String, other: String) throws {
        let fixture = try #require(Self.all.first { $0.name == name })
        let stranger = try fixture.load(other)[0]
        let root = try fixture.root
        #expect(stranger.subject == root.subject)
        for bundle in [[stranger, root], [root, stranger]] {
            let verdict = try fixture.verdict(anchors: bundle, host: fixture.hosts[0])
            #expect(verdict.isTrusted, "\(verdict.failures.map { "\($0.code) \($0.message)" })")
        }
    }

    /// The three rows no verifier enforces, as warnings on the chains that carry them.
    @Test("trustme's critical SAN, certipy's root EKU and easy-rsa's CN outside the SAN are warnings under their private CA", arguments: [
        ("trustme-rsa", "subjectAltName is critical"), ("certipy", "has an extendedKeyUsage extension"), ("easy-rsa-san", "does not list"),
    ])
    func warnings(name: String, fragment: String) throws {
        let fixture = try #require(Self.all.first { $0.name == name })
        let verdict = try fixture.verdict(host: fixture.hosts[0])
        #expect(verdict.isTrusted)
        #expect(verdict.warnings.contains { $0.code == .profileViolation && $0.message.contains(fragment) }, "\(verdict.warnings.map(\.message))")
        // Declared a Web PKI root, the same CA is held to the Baseline Requirements.
        let strict = try Evaluator(policy: TrustPolicy(anchors: try TrustAnchors(certificates: [try fixture.root], classification: .webPKI)))
            .evaluate(try fixture.chain, host: fixture.hosts[0], at: fixture.time)
        #expect(strict.failures.contains { $0.message.contains(fragment) }, "\(strict.failures.map(\.message))")
    }
}
