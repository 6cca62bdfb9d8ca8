// Example: a gRPC Swift 2 client pinned by Pincheck.
//
//   swift run grpc-pinned-client ADDRESS PORT HOST sha256/PIN [CA_FILE]
//
// Connects to ADDRESS:PORT (an IP literal or a name), requires a certificate for HOST whose
// verified path has the pinned key, and calls the unary method pincheck.example.Echo/Unary with
// raw bytes. A refused server fails the RPC with Pincheck's reasons in the error.
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import ServerTrust
import TrustEvaluator
import TrustEvaluatorGRPC
import TrustEvaluatorNIO

struct RawBytes: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> [UInt8] {
        serializedMessageBytes.withUnsafeBytes { Array($0) }
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 5, let port = Int(arguments[2]) else {
    print("usage: grpc-pinned-client ADDRESS PORT HOST sha256/PIN [CA_FILE]")
    exit(2)
}
let (address, host) = (arguments[1], arguments[3])
let anchors = arguments.count > 5 ? try TrustAnchors(contentsOf: [arguments[5]]) : TrustAnchors.system
let verifier = PincheckNIOVerifier(policy: TrustPolicy(
    pinning: .publicKeys(try PinnedPublicKeys(parsing: [arguments[4]])), anchors: anchors))
let settings = try PincheckGRPCClientSettings(verifier: verifier, host: host, port: port)
let transport = try settings.makeTransport(connectingTo: .dns(host: address, port: port))
do {
    let answer = try await withGRPCClient(transport: transport) { client in
        try await client.unary(request: ClientRequest(message: Array("ping".utf8)),
                               descriptor: MethodDescriptor(fullyQualifiedService: "pincheck.example.Echo", method: "Unary"),
                               serializer: RawBytes(), deserializer: RawBytes(), options: .defaults) { try $0.message }
    }
    print("answer: \(String(decoding: answer, as: UTF8.self))")
} catch let error as RPCError {
    print(error.pincheckTrustError.map { "refused: \($0)" } ?? "RPC failed: \(error)")
    exit(1)
}
