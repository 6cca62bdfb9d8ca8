// Built with the Vapor or Hummingbird trait, whose suites use it (its AsyncHTTPClient dependency is
// conditional on them in Package.swift).
#if Vapor || Hummingbird
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorNIO

/// An HTTPS client for the framework servers' mTLS tests: trusts the test root, presents a
/// certificate chain (or none), and returns "STATUS BODY" or the error the request ended with.
public enum MTLSClient {
    /// GET `path` on 127.0.0.1's `port` (as `localhost`) presenting `chain` (PEM files, leaf first)
    /// with `key`; no key: no certificate.
    public static func get(port: Int, path: String = "/whoami", chain: [String], key: String?) async -> Result<String, any Error> {
        do {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(TestPKI.path("rsa-root.pem"))
            if let key {
                tls.certificateChain = try chain.flatMap { try NIOSSLCertificate.fromPEMFile($0) }.map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            }
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.timeout.connect = .seconds(5)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            defer { _ = client.shutdown() }
            let response = try await client.execute(HTTPClientRequest(url: "https://localhost:\(port)\(path)"), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 16)
            return .success("\(response.status.code) \(String(buffer: body))")
        } catch {
            return .failure(error)
        }
    }

    /// The clients a server requiring the SPIFFE identity must refuse: another CA's certificate, one
    /// of the right CA without the identity, and none (certificate and key paths under the test PKI).
    public static let refusedClients: [(certificate: String, key: String)] = [
        ("attacker-leaf.pem", "keys/attacker-leaf.key"), ("rsa-client-only.pem", "keys/rsa-client-only.key"), ("", ""),
    ]

    /// Asks a server on `port` as one of ``refusedClients`` and records an issue if a route answered.
    public static func askRefused(_ client: (certificate: String, key: String), port: Int) async {
        let presented = client.certificate.isEmpty ? nil : client
        let result = await get(port: port, chain: presented.map { [TestPKI.path($0.certificate), TestPKI.path("rsa-intermediate.pem")] } ?? [],
                               key: presented.map { TestPKI.path($0.key) })
        if case .success(let answer) = result { Issue.record("a route answered: \(answer)") }
    }

    /// What the server's verifier must have decided for one of ``refusedClients``: nothing without
    /// a certificate (the handshake fails first), otherwise refusals only, `identity.mismatch`
    /// among the reasons for the client without the identity.
    public static func expectRefusals(_ seen: [ChallengeDecision], for client: (certificate: String, key: String)) {
        if client.certificate.isEmpty {
            #expect(seen.isEmpty, "no certificate: the handshake fails before Pincheck is asked")
        } else {
            #expect(!seen.isEmpty && seen.allSatisfy { $0.rule != .trusted }, "\(seen.map(\.rule))")
        }
        if client.certificate == "rsa-client-only.pem" {
            #expect(seen.first?.verdict?.failures.map(\.code).contains(.identityMismatch) == true)
        }
    }

    /// The verifier of the framework servers' tests: clients of the RSA test root that carry the
    /// SPIFFE identity of ``SPIFFEClient``, judged at the test time.
    public static func spiffeVerifier() throws -> PincheckClientCertificateVerifier {
        try PincheckClientCertificateVerifier(policy: TrustPolicy(anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")])),
                                              requiredIdentities: [.uri(SPIFFEClient.identity)], now: { TestPKI.time })
    }

    /// Starts one of the example servers (built beside the tests) and returns it with the port its
    /// first line names ("listening on https://127.0.0.1:PORT"); terminate it when done.
    public static func launch(_ example: String, _ arguments: [String]) throws -> (process: Process, port: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(example)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        ServerReaper.register(process.processIdentifier)
        // Read byte by byte: the server keeps writing after its first line.
        var firstLine = [UInt8]()
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != 0x0A { firstLine.append(byte) }
        let line = String(decoding: firstLine, as: UTF8.self)
        guard let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            process.terminate()
            throw MTLSExampleError(message: "\(example) printed \"\(line)\", not its port")
        }
        return (process, port)
    }

    /// Stops a server `launch` started.
    public static func stop(_ process: Process) {
        process.terminate()
        process.waitUntilExit()
        ServerReaper.unregister(process.processIdentifier)
    }

    /// The example servers' arguments: the RSA server chain and key, the test root as the client
    /// CA, the SPIFFE identity as required.
    public static var exampleServerArguments: [String] {
        [TestPKI.path("chains/rsa-ip.pem"), TestPKI.path("keys/rsa-ip.key"), TestPKI.path("rsa-root.pem"), SPIFFEClient.identity]
    }

    /// Asks an example server as the SPIFFE client (must get its identity and path) and as a client
    /// without the identity (must get no answer).
    public static func expectExampleServer(port: Int) async throws {
        let right = try await get(port: port, chain: [SPIFFEClient.files.certificate, TestPKI.path("rsa-intermediate.pem")],
                                  key: SPIFFEClient.files.key).get()
        #expect(right.hasPrefix("200 identities: URI:\(SPIFFEClient.identity)"), "\(right)")
        #expect(right.contains("verified path: CN=api workload"), "\(right)")
        let wrong = await get(port: port, chain: [TestPKI.path("rsa-client-only.pem"), TestPKI.path("rsa-intermediate.pem")],
                              key: TestPKI.path("keys/rsa-client-only.key"))
        if case .success(let answer) = wrong { Issue.record("a client without the identity got an answer: \(answer)") }
    }
}

/// An example server that did not start as expected.
public struct MTLSExampleError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
#endif  // Vapor || Hummingbird
