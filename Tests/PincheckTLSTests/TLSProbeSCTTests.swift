import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats
import PincheckOpenSSL
@testable import PincheckTLS

/// SCT capture against `openssl s_server` with the fixtures of scripts/make-sct-fixtures.sh:
/// an SCT list sent as a TLS extension (`-serverinfo`), a leaf with an embedded SCT list, both,
/// neither, and a list that does not parse.
@Suite("TLSProbe: signed certificate timestamps", .serialized)
struct TLSProbeSCTTests {
    let probe = TLSProbe(timeout: .seconds(5))

    /// The fixed times in make-sct-fixtures.sh.
    static let tlsExtensionTime: UInt64 = 1_709_294_400_123    // 2024-03-01T12:00:00.123Z
    static let certificateTime: UInt64 = 1_704_067_200_456     // 2024-01-01T00:00:00.456Z

    /// Certificates/sct/log-ids.txt: `NAME → base64 log ID`.
    static let logIDs = Fixtures.referenceLines("sct/log-ids.txt")

    /// s_server serving `rsa-leaf` (or the embedded-SCT leaf) after the intermediate.
    static func server(embedded: Bool = false, serverinfo: String? = nil, extra: [String] = []) throws -> TLSProbeTestServer {
        var arguments = extra
        if let serverinfo { arguments += ["-serverinfo", Fixtures.path("sct/\(serverinfo).pem")] }
        if embedded {
            // The test server takes NAME.pem and keys/NAME.key; a later -cert/-key replaces them.
            arguments += ["-cert", Fixtures.path("sct/rsa-embedded-sct.pem"), "-key", Fixtures.path("sct/rsa-embedded-sct.key")]
        }
        return try TLSProbeTestServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"], extra: arguments)
    }

    func probe(_ server: TLSProbeTestServer) throws -> ProbeResult {
        try probe.probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: "www.example.test")
    }

    @Test("an SCT in the TLS extension is captured as sent: source, log ID, timestamp, algorithm",
          arguments: [("-tls1_3", "TLSv1.3"), ("-tls1_2", "TLSv1.2")])
    func tlsExtension(flag: String, version: String) throws {
        let server = try Self.server(serverinfo: "serverinfo-tls", extra: [flag])
        defer { server.stop() }
        let result = try probe(server)
        #expect(result.protocolVersion == version)
        #expect(result.servedChain == [Fixtures.certificate("rsa-leaf"), Fixtures.certificate("rsa-intermediate")])
        let sct = try #require(result.signedCertificateTimestamps.first)
        #expect(result.signedCertificateTimestamps.count == 1)
        #expect(sct.source == .tlsExtension)
        #expect(sct.version == 0 && sct.isVersion1)
        #expect(sct.logID.count == 32)
        #expect(sct.logIDBase64 == Self.logIDs["log-ec"])
        #expect(sct.logIDHex == Data(base64Encoded: try #require(Self.logIDs["log-ec"]))?.map { String(format: "%02x", $0) }.joined())
        #expect(sct.timestampMilliseconds == Self.tlsExtensionTime)
        #expect(sct.timestamp == Date(timeIntervalSince1970: 1_709_294_400.123))
        #expect(sct.signatureAlgorithm == "ecdsa-with-SHA256")
        #expect(sct.extensions.isEmpty)
        #expect(sct.signature.first == 0x30, "a DER ECDSA signature, captured as sent")
    }

    @Test("an SCT list embedded in the leaf is captured with source certificate, without the issuer's help")
    func embedded() throws {
        let server = try Self.server(embedded: true)
        defer { server.stop() }
        let result = try probe(server)
        #expect(result.servedChain.first == (try Certificate.load(contentsOf: Fixtures.path("sct/rsa-embedded-sct.pem"))[0]))
        let sct = try #require(result.signedCertificateTimestamps.first)
        #expect(result.signedCertificateTimestamps.count == 1)
        #expect(sct.source == .certificate)
        #expect(sct.logIDBase64 == Self.logIDs["log-rsa"])
        #expect(sct.timestampMilliseconds == Self.certificateTime)
        #expect(sct.signatureAlgorithm == "sha256WithRSAEncryption")
        #expect(sct.signature.count == 256)
    }

    @Test("SCTs from the TLS extension and the certificate are both captured")
    func both() throws {
        let server = try Self.server(embedded: true, serverinfo: "serverinfo-tls")
        defer { server.stop() }
        let scts = try probe(server).signedCertificateTimestamps
        #expect(scts.map(\.source) == [.tlsExtension, .certificate])
        #expect(scts.map(\.logIDBase64) == [Self.logIDs["log-ec"], Self.logIDs["log-rsa"]])
        #expect(scts.map(\.timestampMilliseconds) == [Self.tlsExtensionTime, Self.certificateTime])
    }

    @Test("a server that sends no SCT gives an empty list")
    func none() throws {
        let server = try Self.server()
        defer { server.stop() }
        let result = try probe(server)
        #expect(result.signedCertificateTimestamps.isEmpty)
        #expect(result.servedChain.count == 2)
    }

    @Test("an SCT list that does not parse costs nothing: the handshake and the chain are kept, the list is empty",
          arguments: ["-tls1_3", "-tls1_2"])
    func malformed(flag: String) throws {
        let server = try Self.server(serverinfo: "serverinfo-malformed", extra: [flag])
        defer { server.stop() }
        let result = try probe(server)
        #expect(result.signedCertificateTimestamps.isEmpty)
        #expect(result.servedChain.count == 2)
        // OpenSSL's complaint about the list ("CT routines: sct list invalid") does not stay queued
        // for the next OpenSSL call on this thread. ERR_GET_LIB: bits 23–30; ERR_LIB_CT is 50.
        #expect(!OpenSSLErrorStack.drain().contains { ($0.code >> 23) & 0xFF == 50 })
    }

    @Test("the model: base64 and hex of the log ID, the time from milliseconds, v1 only when version is 0")
    func model() {
        let sct = SignedCertificateTimestamp(source: .ocspResponse, version: 0, logID: [0x00, 0xff, 0x10],
                                             timestampMilliseconds: 1_500, signatureAlgorithm: nil)
        #expect(sct.logIDBase64 == "AP8Q")
        #expect(sct.logIDHex == "00ff10")
        #expect(sct.timestamp == Date(timeIntervalSince1970: 1.5))
        #expect(sct.isVersion1)
        #expect(!SignedCertificateTimestamp(source: .certificate, version: 1, logID: [], timestampMilliseconds: 0,
                                            signatureAlgorithm: nil).isVersion1)
        #expect(SignedCertificateTimestamp.Source.allCases.map(\.rawValue) == ["tls-extension", "certificate", "ocsp-response"])
    }
}
