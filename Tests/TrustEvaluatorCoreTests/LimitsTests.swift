import Foundation
import Testing
import PincheckTestSupport
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Hostile sizes are refused quickly, with a typed error or reason (Limits).
@Suite("resource limits")
struct LimitsTests {
    @Test("a served chain longer than the limit is rejected as too long, without verification")
    func longChain() throws {
        let good = Fixtures.chain("rsa-good")
        let long = good + Array(repeating: Fixtures.certificate("rsa-intermediate"), count: Limits.maximumServedChainLength)
        let verdict = try Evaluator(policy: TrustPolicy(anchors: Fixtures.anchors)).evaluate(long, host: "www.example.test", at: Fixtures.time)
        #expect(!verdict.isTrusted)
        #expect(verdict.failures.map(\.code) == [.tooLong])
        let atLimit = good + Array(repeating: Fixtures.certificate("ec-intermediate"), count: Limits.maximumServedChainLength - good.count)
        #expect(try Evaluator(policy: TrustPolicy(anchors: Fixtures.anchors)).evaluate(atLimit, host: "www.example.test", at: Fixtures.time).isTrusted,
                "junk up to the limit is still evaluated")
    }

    @Test("an oversized certificate is refused before parsing, in DER and in PEM")
    func bigCertificate() throws {
        let huge = [UInt8](repeating: 0x30, count: Limits.maximumCertificateBytes + 1)
        #expect(throws: PincheckError.self) { try Certificate(derEncoded: huge) }
        do { _ = try Certificate(derEncoded: huge) } catch { #expect(error.code == .tooLarge) }
        let pem = "-----BEGIN CERTIFICATE-----\n" + Base64.encode(huge) + "\n-----END CERTIFICATE-----\n"
        do { _ = try Certificate.parseBundle(Array(pem.utf8)); Issue.record("must throw") } catch { #expect(error.code == .tooLarge) }
    }

    @Test("a bundle of more certificates than the limit is refused before any is parsed")
    func bigBundle() throws {
        let one = Fixtures.certificate("rsa-leaf").pemEncoded
        let text = String(repeating: one, count: Limits.maximumBundleCertificates + 1)
        do {
            _ = try Certificate.parseBundle(Array(text.utf8))
            Issue.record("must throw")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("\(Limits.maximumBundleCertificates + 1) blocks"))
        }
    }
}

/// A served chain longer than `maximumChainDepth` but within the served-chain limit: OpenSSL stops
/// at the depth limit and says it found no issuer; the issuer was served, so the reason is the length.
@Suite("a path past maximumChainDepth is too long, not an unknown issuer")
struct DeepChainTests {
    /// A root, `count` intermediates in a line below it, and a leaf (EC P-256, made with the openssl CLI).
    static func chain(intermediates count: Int) throws -> (served: [Certificate], root: Certificate) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-deep-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ext = folder + "/ext.cnf"
        try """
            [ca]
            basicConstraints = critical,CA:TRUE
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            [leaf]
            basicConstraints = CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = DNS:www.example.test
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            """.write(toFile: ext, atomically: true, encoding: .utf8)
        func run(_ arguments: [String]) throws { try #require(try OpenSSLCLI.run(arguments) == 0, "openssl \(arguments)") }
        // Valid from now for 100 years: the tests verify at 2030-06-01.
        let dates = ["-days", "36500"]
        try run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", folder + "/0.key",
                 "-out", folder + "/0.pem", "-subj", "/CN=Deep Root", "-days", "30000",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        for index in 1...(count + 1) {
            let isLeaf = index == count + 1
            try run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", folder + "/\(index).key",
                     "-out", folder + "/\(index).csr", "-subj", isLeaf ? "/CN=www.example.test" : "/CN=Deep CA \(index)"])
            try run(["x509", "-req", "-in", folder + "/\(index).csr", "-CA", folder + "/\(index - 1).pem", "-CAkey", folder + "/\(index - 1).key",
                     "-set_serial", "\(1000 + index)", "-extfile", ext, "-extensions", isLeaf ? "leaf" : "ca", "-out", folder + "/\(index).pem"] + dates)
        }
        func load(_ index: Int) throws -> Certificate { try Certificate.load(contentsOf: folder + "/\(index).pem")[0] }
        let served = try (1...(count + 1)).reversed().map(load)
        return (served, try load(0))
    }

    @Test("14 intermediates, all served, against a depth of 10: chain.too-long; within the depth: trusted")
    func tooDeep() throws {
        let (served, root) = try Self.chain(intermediates: 14)
        let anchors = try TrustAnchors(certificates: [root])
        let verdict = try Evaluator(policy: TrustPolicy(anchors: anchors)).evaluate(served, host: "www.example.test", at: Fixtures.time)
        #expect(verdict.failures.map(\.code) == [.tooLong], "\(verdict.failures.map(\.message))")
        let deep = try Evaluator(policy: TrustPolicy(anchors: anchors, maximumChainDepth: 14)).evaluate(served, host: "www.example.test", at: Fixtures.time)
        #expect(deep.isTrusted, "\(deep.failures)")
        // A missing intermediate is still an unknown issuer, however deep.
        var gapped = served
        gapped.remove(at: 5)
        let missing = try Evaluator(policy: TrustPolicy(anchors: anchors, maximumChainDepth: 14)).evaluate(gapped, host: "www.example.test", at: Fixtures.time)
        #expect(missing.failures.map(\.code).contains(.unknownIssuer), "\(missing.failures)")
    }
}
