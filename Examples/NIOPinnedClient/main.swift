// Example: a SwiftNIO client that pins a host with Pincheck.
//
//   swift run nio-pinned-client HOST PORT sha256/PIN [CA_FILE]
//
// The handshake fails unless the served chain verifies (against CA_FILE, or the system store) for
// HOST and some certificate of the verified path has the pinned key; the decision, with Pincheck's
// reasons, is printed either way. Exit status: 0 connected, 1 refused, 2 bad input or no connection.
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO

let arguments = CommandLine.arguments
guard arguments.count >= 4, let port = Int(arguments[2]) else {
    print("usage: nio-pinned-client HOST PORT sha256/PIN [CA_FILE]")
    exit(2)
}
let host = arguments[1]
let anchors = arguments.count > 4 ? try TrustAnchors(contentsOf: [arguments[4]]) : TrustAnchors.system

let verifier = PincheckNIOVerifier(policy: TrustPolicy(
    pinning: .publicKeys(try PinnedPublicKeys(parsing: [arguments[3]])), anchors: anchors))
let tls = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
var status: Int32 = 0
do {
    let (channel, handshake) = try await ClientBootstrap(group: group).connect(host: host, port: port) { channel in
        channel.eventLoop.makeCompletedFuture {
            let handshake = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: tls, host: host, port: port) { decision in
                print("\(decision.disposition.name) (\(decision.rule.map { "\($0)" } ?? "handler"))")
            }
            return (channel, handshake)
        }
    }
    defer { channel.close(promise: nil) }
    try await handshake.get()
    print("pinned connection to \(host):\(port) succeeded")
} catch let refused as PincheckTrustError {
    print("refused: \(refused)")
    status = 1
} catch {
    print("connection failed: \(error)")
    status = 2
}
try await group.shutdownGracefully()
exit(status)
