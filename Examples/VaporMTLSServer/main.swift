// Example: a Vapor server that requires client certificates and lets Pincheck judge them (mTLS).
//
//   swift run --traits Vapor vapor-mtls-server SERVER_CHAIN_PEM SERVER_KEY_PEM CLIENT_CA_PEM [REQUIRED_URI…]
//
// Listens on 127.0.0.1 (a free port, printed as "listening on https://127.0.0.1:PORT"). Every client
// must present a certificate that chains to CLIENT_CA_PEM and, when REQUIRED_URIs are given
// (SPIFFE IDs, say), carries one of them; otherwise the handshake fails and no route runs. GET
// /whoami answers with the identities of the verified client certificate and the verified path
// Vapor was handed (Request.peerCertificateChain). Each decision is printed as it is made.
// Exit status: 2 bad input; otherwise it serves until stopped.
#if Vapor
import Foundation
import NIOSSL
import PincheckVapor
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO
import Vapor

/// One line on standard output, written at once (a supervisor or a test reads it as it comes).
@Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: vapor-mtls-server SERVER_CHAIN_PEM SERVER_KEY_PEM CLIENT_CA_PEM [REQUIRED_URI…]\n".utf8))
    exit(2)
}
let files = Array(arguments)
let verifier: PincheckClientCertificateVerifier
let chain: [NIOSSLCertificate]
let key: NIOSSLPrivateKey
do {
    verifier = try PincheckClientCertificateVerifier(
        policy: TrustPolicy(anchors: try TrustAnchors(contentsOf: [files[2]])),
        requiredIdentities: files.dropFirst(3).map { .uri($0) })
    chain = try NIOSSLCertificate.fromPEMFile(files[0])
    key = try NIOSSLPrivateKey(file: files[1], format: .pem)
} catch {
    FileHandle.standardError.write(Data("vapor-mtls-server: \(error)\n".utf8))
    exit(2)
}

let app = try await Application.make(Environment(name: "production", arguments: ["vapor-mtls-server"]))
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = 0
app.http.server.configuration.requireClientCertificates(judgedBy: verifier, certificateChain: chain.map { .certificate($0) },
                                                        privateKey: .privateKey(key)) { decision in
    let codes = decision.verdict?.failures.map { "\($0.code)" }.joined(separator: ",") ?? ""
    say("decision: \(decision.rule.map { "\($0)" } ?? "none")\(codes.isEmpty ? "" : " \(codes)")")
}
app.get("whoami") { req -> String in
    let identities = req.pincheckClientIdentities(from: verifier).map(\.description)
    let path = req.peerCertificateChain?.map { "\($0.subject)" } ?? []
    return "identities: \(identities.joined(separator: ", "))\nverified path: \(path.joined(separator: " → "))\n"
}
try await app.startup()
say("listening on https://127.0.0.1:\(app.http.server.shared.localAddress?.port ?? 0)")
try await app.running?.onStop.get()
try await app.asyncShutdown()
#else
import Foundation

FileHandle.standardError.write(Data("vapor-mtls-server needs Pincheck's Vapor trait: swift run --traits Vapor vapor-mtls-server …\n".utf8))
exit(2)
#endif  // Vapor trait
