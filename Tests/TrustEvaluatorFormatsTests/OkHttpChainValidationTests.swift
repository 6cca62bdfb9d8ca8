import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// OkHttp's `CertificatePinnerChainValidationTest` (square/okhttp, okhttp/src/jvmTest/…/internal/tls),
/// transcribed: each test's PKI made here with the same structure (names, CA bits, path lengths,
/// shared keys, the chain the server sends), the pins as an OkHttp pin list imported with OkHttp's
/// meaning, the client's trusted roots as the system store, and the answer OkHttp's test asserts.
/// OkHttp's tests turn host-name checks off (`RecordingHostnameVerifier`); here each leaf names
/// the host it is served for, so the name is checked too and cannot be why a chain passes.
@Suite("OkHttp: CertificatePinnerChainValidationTest, transcribed", .serialized)
struct OkHttpChainValidationTests {
    static let host = "localhost"

    /// What OkHttp's client decides for `served`, with `pinned` pinned for the host and `trusted` as its roots.
    static func decide(served: [MadePKI.Held], pinned: Certificate, trusted: [MadePKI.Held], host: String = host) throws -> Verdict {
        let pins = "\(host) \(pinned.publicKeyPin)\n"
        let configuration = try Configuration.decode(Data(pins.utf8), source: "pins.txt", baseDirectory: "/",
                                                     anchors: try TrustAnchors(certificates: trusted.map(\.certificate)),
                                                     publicSuffixes: Fixtures.psl)
        let at = served[0].certificate.notBefore.addingTimeInterval(86_400)
        return try configuration.trustManager.evaluate(served.map(\.certificate), host: host, at: at)
    }

    @Test("pinRootNotPresentInChain: the pinned root comes from the trust store, not the served chain")
    func pinRootNotPresentInChain() throws {
        let pki = try MadePKI()
        let root = try pki.make("root", ca: 1)
        let intermediate = try pki.make("intermediate_ca", ca: 0, signedBy: root)
        let leaf = try pki.make(Self.host, dnsNames: [Self.host], signedBy: intermediate)
        let verdict = try Self.decide(served: [leaf, intermediate], pinned: root.certificate, trusted: [root])
        #expect(verdict.allowsConnection, "\(verdict.failures)")
        #expect(verdict.matchedPins.map(\.depth) == [2])
    }

    @Test("pinIntermediatePresentInChain: a served, pinned intermediate; a second connection (verdict cache) agrees")
    func pinIntermediatePresentInChain() throws {
        let pki = try MadePKI()
        let root = try pki.make("root", ca: 1)
        let intermediate = try pki.make("intermediate_ca", ca: 0, signedBy: root)
        let leaf = try pki.make(Self.host, dnsNames: [Self.host], signedBy: intermediate)
        let configuration = try Configuration.decode(Data("\(Self.host) \(intermediate.certificate.publicKeyPin)\n".utf8), source: "pins.txt",
                                                     baseDirectory: "/", anchors: try TrustAnchors(certificates: [root.certificate]),
                                                     publicSuffixes: Fixtures.psl)
        let manager = TrustManager(policies: configuration.hosts.map(\.policy), allHostsMustBeEvaluated: false,
                                   defaultValidation: ValidationPolicy(anchors: try TrustAnchors(certificates: [root.certificate])),
                                   verdictCache: VerdictCache())
        let at = leaf.certificate.notBefore.addingTimeInterval(86_400)
        let first = try manager.evaluate([leaf.certificate, intermediate.certificate], host: Self.host, at: at)
        let second = try manager.evaluate([leaf.certificate, intermediate.certificate], host: Self.host, at: at.addingTimeInterval(1))
        #expect(first.allowsConnection && second.allowsConnection)
        #expect(first.matchedPins.map(\.depth) == [1] && second.matchedPins.map(\.depth) == [1])
    }

    @Test("unrelatedPinnedLeafCertificateInChain: a pinned leaf served beside a rogue chain does not count")
    func unrelatedPinnedLeafCertificateInChain() throws {
        let pki = try MadePKI()
        let root = try pki.make("root", ca: 1)
        let goodIntermediate = try pki.make("good_intermediate_ca", ca: 0, signedBy: root)
        let good = try pki.make(Self.host, dnsNames: [Self.host], signedBy: goodIntermediate)
        let compromisedIntermediate = try pki.make("bad_intermediate_ca", ca: 0, signedBy: root)
        let rogue = try pki.make(Self.host, dnsNames: [Self.host], signedBy: compromisedIntermediate)
        let verdict = try Self.decide(served: [rogue, compromisedIntermediate, good], pinned: good.certificate, trusted: [root])
        #expect(!verdict.allowsConnection)
        #expect(verdict.failures.map(\.code) == [.pinMismatch], "the chain verifies (the rogue CA is trusted); the pins refuse it")
    }

    @Test("unrelatedPinnedIntermediateCertificateInChain: a pinned intermediate served beside a same-named rogue one does not count")
    func unrelatedPinnedIntermediateCertificateInChain() throws {
        let pki = try MadePKI()
        let root = try pki.make("root", ca: 1)
        let compromisedRoot = try pki.make("compromised_root", ca: 1)
        let goodIntermediate = try pki.make("intermediate_ca", ca: 0, signedBy: root)
        let compromisedIntermediate = try pki.make("intermediate_ca", ca: 0, signedBy: compromisedRoot)
        let rogue = try pki.make(Self.host, dnsNames: [Self.host], signedBy: compromisedIntermediate)
        let verdict = try Self.decide(served: [rogue, goodIntermediate, compromisedIntermediate], pinned: goodIntermediate.certificate,
                                      trusted: [root, compromisedRoot])
        #expect(!verdict.allowsConnection)
        #expect(verdict.failures.contains { $0.code == .pinMismatch }, "\(verdict.failures)")
        #expect(verdict.verifiedPath?.certificates.contains(goodIntermediate.certificate) != true, "the path goes through the rogue intermediate")
    }

    @Test("signersMustHaveCaBitSet: a non-CA certificate never signs; the pinned root is not on the real path")
    func signersMustHaveCaBitSet() throws {
        let pki = try MadePKI()
        let attackerCA = try pki.make("attacker ca", ca: 4)
        let attackerIntermediate = try pki.make("attacker", ca: 3, signedBy: attackerCA)
        let pinnedRoot = try pki.make("pinned root", ca: 2, signedBy: attackerIntermediate)
        let pinnedIntermediate = try pki.make("pinned intermediate", ca: 1, signedBy: pinnedRoot)
        // The attacker's switch: an end-entity certificate carrying the attacker intermediate's key.
        let attackerSwitch = try pki.make("attacker", dnsNames: ["attacker.com"], key: attackerIntermediate.keyPath, signedBy: pinnedIntermediate)
        let phonyVictim = try pki.make("victim", dnsNames: [Self.host], signedBy: attackerSwitch)
        let verdict = try Self.decide(served: [phonyVictim, attackerSwitch, pinnedIntermediate, pinnedRoot, attackerIntermediate],
                                      pinned: pinnedRoot.certificate, trusted: [pinnedRoot, attackerCA])
        #expect(!verdict.allowsConnection)
        #expect(verdict.matchedPins.isEmpty, "no pin matched on a path through a non-CA signer")
        // OkHttp's "Certificate pinning failure!": the real path is victim ← attacker (the CA that
        // shares the switch's name and key) ← attacker ca, which is trusted but not pinned.
        #expect(verdict.failures.map(\.code) == [.pinMismatch], "\(verdict.failures)")
    }

    @Test("intermediateMustNotHaveMoreIntermediatesThanSigner: a path-length violation is refused")
    func intermediateMustNotHaveMoreIntermediatesThanSigner() throws {
        let pki = try MadePKI()
        let attackerCA = try pki.make("attacker ca", ca: 2)
        let pinnedRoot = try pki.make("pinned root", ca: 1, signedBy: attackerCA)
        let compromisedIntermediate = try pki.make("compromised intermediate", ca: 0, signedBy: pinnedRoot)
        let attackerIntermediate = try pki.make("attacker intermediate", ca: 0, key: attackerCA.keyPath, signedBy: compromisedIntermediate)
        let phonyVictim = try pki.make("victim", dnsNames: [Self.host], signedBy: attackerIntermediate)
        let verdict = try Self.decide(served: [phonyVictim, attackerIntermediate, compromisedIntermediate, pinnedRoot],
                                      pinned: pinnedRoot.certificate, trusted: [pinnedRoot, attackerCA])
        #expect(!verdict.allowsConnection, "OkHttp's handshake fails here")
        #expect(verdict.failures.contains { $0.code == .pathLengthExceeded }, "\(verdict.failures)")
        #expect(verdict.matchedPins.isEmpty)
    }

    @Test("lonePinnedCertificate: one self-signed certificate, trusted and pinned, is accepted")
    func lonePinnedCertificate() throws {
        let pki = try MadePKI()
        let only = try pki.make("root", dnsNames: [Self.host])
        let verdict = try Self.decide(served: [only], pinned: only.certificate, trusted: [only])
        #expect(verdict.allowsConnection, "\(verdict.failures)")
        #expect(verdict.matchedPins.map(\.depth) == [0])
    }

    @Test("the fixtures in ../shared/peers name the same tests (pin lists of another PKI)", SharedData.requires("peers/fixtures/okhttp"))
    func fixtures() throws {
        let folder = SharedData.url("peers/fixtures/okhttp")
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        for test in ["pinRootNotPresentInChain", "pinIntermediatePresentInChain", "unrelatedPinnedLeafCertificateInChain",
                     "unrelatedPinnedIntermediateCertificateInChain", "signersMustHaveCaBitSet",
                     "intermediateMustNotHaveMoreIntermediatesThanSigner", "lonePinnedCertificate"] {
            #expect(names.contains("\(test).txt"), "\(test)")
            // Each is a one-line pin list that imports as OkHttp's.
            let data = try Data(contentsOf: folder.appendingPathComponent("\(test).txt"))
            #expect(ConfigurationImporter.detect(data) == .okHttp)
        }
    }
}
