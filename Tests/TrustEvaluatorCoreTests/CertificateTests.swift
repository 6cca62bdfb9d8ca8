import Foundation
import PincheckOpenSSL
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("Certificate: parsing and accessors")
struct CertificateTests {
    private static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test("the OIDs written out for the extensions certificates carry most are OpenSSL's own dotted forms")
    func knownOIDsAreOpenSSLs() {
        #expect(X509Handle.knownOIDs.count == 24)
        for (nid, text) in X509Handle.knownOIDs {
            #expect(X509Handle.formattedOID(nid: nid) == text, "NID \(nid)")
        }
    }

    // MARK: Parsing

    @Test("a DER file parses to the one certificate it holds, byte for byte")
    func parsesDER() throws {
        let path = Fixtures.path("chains/rsa-good.der")
        let bytes = Array(try #require(FileManager.default.contents(atPath: path)))
        let certificates = try Certificate.load(contentsOf: path)
        #expect(certificates.count == 1)
        #expect(certificates.first?.derBytes == bytes)
        #expect(certificates.first == Fixtures.certificate("rsa-leaf"))
        #expect(try Certificate(derEncoded: bytes) == Fixtures.certificate("rsa-leaf"))
    }

    @Test("a single-certificate PEM text parses with init(pemEncoded:)")
    func parsesSinglePEM() throws {
        let text = try String(contentsOfFile: Fixtures.path("rsa-leaf.pem"), encoding: .utf8)
        let certificate = try Certificate(pemEncoded: text)
        #expect(hex(certificate.sha256Fingerprint) == Fixtures.referenceFingerprints["rsa-leaf"])
    }

    @Test("init(pemEncoded:) refuses a bundle of two certificates")
    func singlePEMRefusesBundle() throws {
        let text = try String(contentsOfFile: Fixtures.path("chains/rsa-good.pem"), encoding: .utf8)
        let error = #expect(throws: PincheckError.self) { try Certificate(pemEncoded: text, source: "bundle") }
        #expect(error?.code == .malformedPEM)
        #expect(error?.message.contains("found 2") == true)
    }

    @Test("a served bundle keeps its order, leaf first", arguments: [
        ("rsa-good", ["rsa-leaf", "rsa-intermediate"]),
        ("rsa-deep", ["rsa-deep-leaf", "rsa-deep-intermediate-2", "rsa-deep-intermediate-1"]),
        ("with-junk", ["rsa-leaf", "attacker-root", "rsa-intermediate"]),
        ("attacker-with-pinned-ca", ["attacker-leaf", "rsa-intermediate", "rsa-root"]),
        ("unpinned-ca-with-pinned-appended", ["rsa-leaf", "rsa-intermediate", "ec-intermediate"]),
    ])
    func bundleOrder(chain: String, names: [String]) throws {
        let served = Fixtures.chain(chain)
        #expect(served.map { hex($0.sha256Fingerprint) } == names.map { Fixtures.referenceFingerprints[$0]! })
    }

    @Test("text around PEM blocks is ignored, and CRLF line ends are accepted")
    func pemWithCommentsAndCRLF() throws {
        let leaf = try String(contentsOfFile: Fixtures.path("rsa-leaf.pem"), encoding: .utf8)
        let intermediate = try String(contentsOfFile: Fixtures.path("rsa-intermediate.pem"), encoding: .utf8)
        let text = "subject=CN=www.example.test\n" + leaf + "a comment between blocks\n" + intermediate
        let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
        for input in [text, crlf] {
            let certificates = try Certificate.parseBundle(Array(input.utf8))
            #expect(certificates == [Fixtures.certificate("rsa-leaf"), Fixtures.rsaIntermediate])
        }
    }

    // MARK: Reference values from the openssl CLI

    @Test("the SHA-256 fingerprint equals fingerprints.txt", arguments: Fixtures.referenceFingerprints.keys.sorted())
    func fingerprint(name: String) {
        #expect(hex(Fixtures.certificate(name).sha256Fingerprint) == Fixtures.referenceFingerprints[name])
    }

    @Test("the SPKI pin equals the openssl CLI's (pins.txt)", arguments: Fixtures.pinnedNames)
    func pinEqualsOpenSSLCLI(name: String) throws {
        let certificate = Fixtures.certificate(name)
        let reference = try #require(Fixtures.referencePins[name])
        #expect(certificate.publicKeyPin.description == reference)
        #expect(certificate.publicKeyPin == (try PublicKeyPin(reference)))
        #expect(certificate.description.hasPrefix(reference + " : "))
    }

    @Test("pins.txt and fingerprints.txt list the same, complete set of certificates")
    func referenceFilesAreComplete() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Fixtures.root.path)
            .filter { $0.hasSuffix(".pem") }.map { String($0.dropLast(4)) }.sorted()
        #expect(files.count >= 30)
        #expect(Fixtures.pinnedNames == files)
        #expect(Fixtures.referenceFingerprints.keys.sorted() == files)
    }

    // MARK: Accessors

    @Test("subject and issuer are RFC 4514 text naming the CN")
    func subjectAndIssuer() {
        let leaf = Fixtures.certificate("rsa-leaf")
        #expect(leaf.subject == "CN=www.example.test,O=Pincheck Tests")
        #expect(leaf.issuer == "CN=Pincheck Test RSA Intermediate CA,O=Pincheck Tests")
        #expect(Fixtures.rsaRoot.subject.contains("CN=Pincheck Test RSA Root CA"))
        #expect(Fixtures.rsaRoot.issuer == Fixtures.rsaRoot.subject)
        #expect(Fixtures.certificate("rsa-ip").subject.contains("CN=localhost"))
    }

    @Test("the serial number is non-empty lowercase hex, different per certificate")
    func serialNumber() {
        let serials = ["rsa-leaf", "rsa-intermediate", "rsa-root", "ec-leaf"].map { Fixtures.certificate($0).serialNumber }
        for serial in serials {
            #expect(!serial.isEmpty)
            #expect(serial.allSatisfy { "0123456789abcdef".contains($0) }, "\(serial)")
        }
        #expect(Set(serials).count == serials.count)
    }

    @Test("validity dates equal Certificates/README.md", arguments: [
        ("rsa-root", "2020-01-01T00:00:00Z", "2100-01-01T00:00:00Z"),
        ("rsa-intermediate", "2020-01-01T00:00:00Z", "2100-01-01T00:00:00Z"),
        ("ec-root", "2020-01-01T00:00:00Z", "2100-01-01T00:00:00Z"),
        ("rsa-leaf", "2024-01-01T00:00:00Z", "2099-12-31T23:59:59Z"),
        ("ed448-leaf", "2024-01-01T00:00:00Z", "2099-12-31T23:59:59Z"),
        ("rsa-expired", "2020-01-01T00:00:00Z", "2021-01-01T00:00:00Z"),
        ("rsa-not-yet-valid", "2090-01-01T00:00:00Z", "2091-01-01T00:00:00Z"),
    ])
    func validity(name: String, notBefore: String, notAfter: String) {
        let certificate = Fixtures.certificate(name)
        #expect(certificate.notBefore == Self.date(notBefore))
        #expect(certificate.notAfter == Self.date(notAfter))
    }

    @Test("rsa-ip carries IP 127.0.0.1, IP ::1 and DNS localhost, in that order")
    func ipSubjectAltNames() {
        let certificate = Fixtures.certificate("rsa-ip")
        #expect(certificate.subjectAlternativeNames == [.ipAddress("127.0.0.1"), .ipAddress("::1"), .dnsName("localhost")])
        #expect(certificate.ipAddresses == ["127.0.0.1", "::1"])
        #expect(certificate.dnsNames == ["localhost"])
        #expect(certificate.subjectAlternativeNames.map(\.description) == ["IP:127.0.0.1", "IP:::1", "DNS:localhost"])
    }

    @Test("DNS names of the good leaf and the absence of SANs on rsa-cn-only")
    func dnsNames() {
        #expect(Fixtures.certificate("rsa-leaf").dnsNames == ["www.example.test", "example.test"])
        #expect(Fixtures.certificate("rsa-wildcard").dnsNames == ["*.example.test"])
        #expect(Fixtures.certificate("rsa-cn-only").subjectAlternativeNames.isEmpty)
    }

    @Test("key type and size", arguments: [
        ("rsa-leaf", PublicKeyDescription.Algorithm.rsa, 2048),
        ("rsa-3072-leaf", .rsa, 3072),
        ("rsa-4096-leaf", .rsa, 4096),
        ("rsa-root", .rsa, 4096),
        ("ec-leaf", .ecdsa(curve: "prime256v1"), 256),
        ("ec-p384-leaf", .ecdsa(curve: "secp384r1"), 384),
        ("ec-root", .ecdsa(curve: "secp384r1"), 384),
        ("ec-p521-leaf", .ecdsa(curve: "secp521r1"), 521),
        ("ed25519-leaf", .ed25519, 256),
        ("ed448-leaf", .ed448, 456),
    ])
    func keyTypeAndSize(name: String, algorithm: PublicKeyDescription.Algorithm, bits: Int) {
        let key = Fixtures.certificate(name).publicKey
        #expect(key.algorithm == algorithm)
        #expect(key.bits == bits)
    }

    @Test("CA and self-signed flags follow basicConstraints and the issuer")
    func flags() {
        #expect(Fixtures.rsaRoot.isCertificateAuthority && Fixtures.rsaRoot.isSelfSigned)
        #expect(Fixtures.rsaIntermediate.isCertificateAuthority && !Fixtures.rsaIntermediate.isSelfSigned)
        #expect(!Fixtures.certificate("rsa-leaf").isCertificateAuthority)
        #expect(!Fixtures.certificate("rsa-nonca-intermediate").isCertificateAuthority)
        let selfSigned = Fixtures.certificate("self-signed")
        #expect(selfSigned.isSelfSigned && !selfSigned.isCertificateAuthority)
    }

    // MARK: Encoding and identity

    @Test("pemEncoded round-trips and equals the openssl CLI's PEM", arguments: ["rsa-leaf", "rsa-root", "ec-p521-leaf", "ed448-leaf"])
    func pemRoundTrip(name: String) throws {
        let certificate = Fixtures.certificate(name)
        let reparsed = try Certificate(pemEncoded: certificate.pemEncoded)
        #expect(reparsed == certificate)
        #expect(reparsed.derBytes == certificate.derBytes)
        #expect(certificate.pemEncoded == (try String(contentsOfFile: Fixtures.path("\(name).pem"), encoding: .utf8)))
        #expect(certificate.pemEncoded.split(separator: "\n").allSatisfy { $0.count <= 64 })
    }

    @Test("equality and hashing are by DER bytes")
    func equality() {
        let a = Fixtures.certificate("rsa-leaf")
        let b = Fixtures.certificate("rsa-leaf")
        #expect(a == b)
        #expect(Set([a, b, Fixtures.certificate("rsa-leaf-rotated")]).count == 2)
        #expect(a != Fixtures.certificate("rsa-leaf-rotated"))
        // Same names and issuer, new key: the leaf pin changes.
        #expect(a.publicKeyPin != Fixtures.certificate("rsa-leaf-rotated").publicKeyPin)
    }
}

/// PKCS #7 bundles (`.p7b`), which Java's `CertificateFactory.generateCertificates` reads: an
/// Android `@raw` resource or a Windows export may be one.
@Suite("PKCS #7 certificate bundles")
struct PKCS7BundleTests {
    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name))))
    }

    @Test("a DER bundle out of chain order is read leaf first, and verifies as served")
    func unordered() throws {
        let certificates = try Certificate.parseBundle(try Self.bytes("chains/rsa-deep-unordered.p7b"), source: "deep.p7b")
        #expect(certificates == ["rsa-deep-leaf", "rsa-deep-intermediate-2", "rsa-deep-intermediate-1"].map { Fixtures.certificate($0) })
        let verdict = try Evaluator(policy: TrustPolicy(anchors: Fixtures.anchors)).evaluate(certificates, host: "www.example.test", at: Fixtures.time)
        #expect(verdict.isTrusted, "\(verdict.failures)")
    }

    @Test("a PEM PKCS7 block reads as the chain it holds")
    func pem() throws {
        #expect(try Certificate.load(contentsOf: Fixtures.path("chains/rsa-good-p7.pem")) == Fixtures.chain("rsa-good"))
    }

    @Test("certificates that are not one chain keep their encoded order")
    func unrelatedRoots() throws {
        #expect(try Certificate.parseBundle(try Self.bytes("roots.p7b")) == [Fixtures.certificate("rsa-root"), Fixtures.certificate("ec-root")])
    }

    @Test("a bundle with no certificate, or with bytes after it, is an error naming it")
    func malformed() throws {
        // `openssl crl2pkcs7 -nocrl -certfile /dev/null -outform DER`: a SignedData with an empty SET.
        let empty: [UInt8] = [0x30, 0x25, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02, 0xA0, 0x18, 0x30, 0x16,
                              0x02, 0x01, 0x01, 0x31, 0x00, 0x30, 0x0B, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07,
                              0x01, 0xA0, 0x00, 0x31, 0x00]
        let none = #expect(throws: PincheckError.self) { try Certificate.parseBundle(empty, source: "empty.p7b") }
        #expect(none?.code == .emptyInput)
        #expect(none?.message.contains("PKCS #7 bundle with no certificate") == true, "\(String(describing: none))")
        let trailing = #expect(throws: PincheckError.self) { try Certificate.parseBundle(try Self.bytes("roots.p7b") + [0, 0], source: "roots.p7b") }
        #expect(trailing?.code == .malformedDER)
        #expect(trailing?.message.contains("2 bytes after the end of the PKCS #7 bundle") == true, "\(String(describing: trailing))")
        let cut = #expect(throws: PincheckError.self) { try Certificate.parseBundle(Array(try Self.bytes("roots.p7b").dropLast(40)), source: "roots.p7b") }
        #expect(cut?.code == .malformedDER)
    }
}
