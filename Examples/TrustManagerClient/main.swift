// Example: per-host pinning from a configuration file, through a TrustManager, over SwiftNIO.
//
//   swift run trust-manager-client CONFIG HOST PORT [ADDRESS]
//
// Loads a Pincheck JSON configuration (the same file `pincheck verify --config` reads), connects to
// ADDRESS (HOST by default) and lets the host's policy judge the handshake for HOST: its pins, or,
// for a host the file does not list, what `allHostsMustBeEvaluated` says. Report-only mismatches
// and failures are appended to pin-reports.jsonl in the current folder as RFC 7469 reports.
// Exit status: 0 connected, 1 refused (the reasons are printed), 2 bad input or no connection.
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5, let port = Int(arguments[3]) else {
    print("usage: trust-manager-client CONFIG HOST PORT [ADDRESS]")
    exit(2)
}
let host = arguments[2]
let address = arguments.count == 5 ? arguments[4] : host

let configuration: Configuration
do {
    configuration = try Configuration.load(contentsOf: arguments[1])
} catch {
    print("error: \(error)")
    exit(2)
}
let verifier = PincheckNIOVerifier(trustManager: configuration.trustManager,
                                   reporter: FileReporter(path: "pin-reports.jsonl"))
let tls = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
var status: Int32 = 0
do {
    let (channel, handshake) = try await ClientBootstrap(group: group).connect(host: address, port: port) { channel in
        channel.eventLoop.makeCompletedFuture {
            let handshake = try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: tls, host: host, port: port) { decision in
                let policy = decision.verdict?.hostPolicy.map { "policy \($0.pattern)" } ?? "no host policy"
                print("\(decision.disposition.name) (\(decision.verdict.map { "\($0.coverage)" } ?? "no verdict"), \(policy))")
            }
            return (channel, handshake)
        }
    }
    defer { channel.close(promise: nil) }
    try await handshake.get()
    print("connected to \(host) at \(address):\(port)")
} catch let refused as PincheckTrustError {
    print("refused: \(refused.codes.map { "\($0)" }.joined(separator: ", "))")
    for reason in refused.verdict?.failures ?? [] { print("  \(reason.code): \(reason.message)") }
    status = 1
} catch {
    print("connection failed: \(error)")
    status = 2
}
try await group.shutdownGracefully()
// Reports go out without delaying the handshake: wait for them, or the last ones are lost at exit.
await verifier.reportsDelivered()
exit(status)
