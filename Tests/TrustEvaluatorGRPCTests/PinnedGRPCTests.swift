import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import PincheckTestSupport
import ServerTrust
import Testing
import TrustEvaluator
import TrustEvaluatorGRPC
import TrustEvaluatorNIO

/// Messages as raw bytes: no protoc needed.
struct RawBytes: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> [UInt8] {
        serializedMessageBytes.withUnsafeBytes { Array($0) }
    }
}

/// Echo.Unary: answers each request with its bytes reversed, as `pincheck.test.Echo` and as
/// `pincheck.example.Echo` (the service the grpc-pinned-client example calls).
struct EchoService: RegistrableRPCService {
    static let method = MethodDescriptor(fullyQualifiedService: "pincheck.test.Echo", method: "Unary")
    static let exampleMethod = MethodDescriptor(fullyQualifiedService: "pincheck.example.Echo", method: "Unary")

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        for method in [Self.method, Self.exampleMethod] {
            router.registerHandler(forMethod: method, deserializer: RawBytes(), serializer: RawBytes()) { request, _ in
                let message = try await ServerRequest(stream: request).message
                return StreamingServerResponse(single: ServerResponse(message: Array(message.reversed())))
            }
        }
    }
}

@Suite("gRPC Swift 2 over TLS, pinned by Pincheck", .serialized)
struct PinnedGRPCTests {
    static func verifier(pin: String, nameValidation: ValidationPolicy.NameValidation = .required) throws -> PincheckNIOVerifier {
        PincheckNIOVerifier(policy: TrustPolicy(
            pinning: .publicKeys(try PinnedPublicKeys(certificates: [TestPKI.certificate(pin)])),
            anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")]), nameValidation: nameValidation),
            now: { TestPKI.time })
    }

    /// A TLS gRPC server on 127.0.0.1 (ephemeral port) serving rsa-leaf + rsa-intermediate.
    static func server() -> HTTP2ServerTransport.Posix {
        HTTP2ServerTransport.Posix(
            address: .ipv4(host: "127.0.0.1", port: 0),
            transportSecurity: .tls(
                certificateChain: [.file(path: TestPKI.path("rsa-leaf.pem"), format: .pem),
                                   .file(path: TestPKI.path("rsa-intermediate.pem"), format: .pem)],
                privateKey: .file(path: TestPKI.path("keys/rsa-leaf.key"), format: .pem)))
    }

    /// Starts ``server()`` and makes one unary call to its IP address with Pincheck's settings for `host`.
    static func call(host: String, verifier: PincheckNIOVerifier) async throws -> [UInt8] {
        try await withGRPCServer(transport: server(), services: [EchoService()]) { server in
            let address = try #require(try await server.listeningAddress?.ipv4)
            let settings = try PincheckGRPCClientSettings(verifier: verifier, host: host, port: address.port)
            let transport = try settings.makeTransport(connectingTo: .ipv4(address: address.host, port: address.port))
            return try await withGRPCClient(transport: transport) { client in
                try await client.unary(request: ClientRequest(message: Array("ping".utf8)), descriptor: EchoService.method,
                                       serializer: RawBytes(), deserializer: RawBytes(), options: .defaults) { response in
                    try response.message
                }
            }
        }
    }

    @Test("the right pin: the RPC to the server's IP, pinned for its host name, answers")
    func rightPin() async throws {
        let answer = try await Self.call(host: "www.example.test", verifier: try Self.verifier(pin: "rsa-intermediate"))
        #expect(answer == Array("gnip".utf8))
    }

    @Test("a wrong pin: the RPC fails, and its error carries Pincheck's reasons")
    func wrongPin() async throws {
        let error = await #expect(throws: RPCError.self) {
            _ = try await Self.call(host: "www.example.test", verifier: try Self.verifier(pin: "attacker-root"))
        }
        let refusal = try #require(Self.pincheckError(in: error), "no PincheckTrustError in \(String(describing: error))")
        #expect(refusal.codes == [.pinMismatch])
        // The road's answer is the one decider's.
        #expect(!refusal.decision.allowsConnection)
        #expect(refusal.verdict.map { Disposition(serverTrust: $0) } == .cancelAuthenticationChallenge)
    }

    @Test("an IP target with the name check disabled by the policy: the pins decide, NIOSSL does not check the IP")
    func ipTarget() async throws {
        let answer = try await Self.call(host: "127.0.0.1", verifier: try Self.verifier(pin: "rsa-intermediate", nameValidation: .disabled(because: "IP target")))
        #expect(answer == Array("gnip".utf8))
    }

    @Test("the grpc-pinned-client example: right pin → the answer; wrong pin → refused with pin.mismatch")
    func exampleProgram() async throws {
        let runs = try await withGRPCServer(transport: Self.server(), services: [EchoService()]) { server in
            let port = String(try #require(try await server.listeningAddress?.ipv4).port)
            var runs: [ExampleProgram.Result] = []
            for pin in [TestPKI.certificate("rsa-intermediate").publicKeyPin, TestPKI.certificate("attacker-root").publicKeyPin] {
                let arguments = ["127.0.0.1", port, "www.example.test", "\(pin)", TestPKI.path("rsa-root.pem")]
                // The program is a child process: wait for it off the cooperative pool.
                runs.append(try await withCheckedThrowingContinuation { continuation in
                    DispatchQueue.global().async { continuation.resume(with: Result { try ExampleProgram.run("grpc-pinned-client", arguments) }) }
                })
            }
            return runs
        }
        #expect(runs[0].status == 0, "\(runs[0].output)")
        #expect(runs[0].output.contains("answer: gnip"))
        #expect(runs[1].status == 1, "\(runs[1].output)")
        #expect(runs[1].output.contains("refused:") && runs[1].output.contains("pin.mismatch"), "\(runs[1].output)")
    }

    /// The PincheckTrustError somewhere in an error's chain of causes.
    /// The library's one call (`RPCError.pincheckTrustError`).
    static func pincheckError(in error: (any Error)?) -> PincheckTrustError? {
        (error as? RPCError)?.pincheckTrustError
    }
}
