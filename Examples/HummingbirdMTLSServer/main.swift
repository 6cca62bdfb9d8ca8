// Example: a Hummingbird server that requires client certificates and lets Pincheck judge them (mTLS).
//
//   swift run --traits Hummingbird hummingbird-mtls-server SERVER_CHAIN_PEM SERVER_KEY_PEM CLIENT_CA_PEM [REQUIRED_URI…]
//
// Listens on 127.0.0.1 (a free port, printed as "listening on https://127.0.0.1:PORT"). Every client
// must present a certificate that chains to CLIENT_CA_PEM and, when REQUIRED_URIs are given
// (SPIFFE IDs, say), carries one of them; otherwise the handshake fails and no route runs. GET
// /whoami answers with the identities and the verified path of Pincheck's decision (Hummingbird
// 2.28 keeps no validated chain of its own). Each decision is printed as it is made.
// Exit status: 2 bad input; otherwise it serves until stopped.
#if Hummingbird
import Foundation
import Hummingbird
import HummingbirdTLS
import NIOSSL
import PincheckHummingbird
import ServerTrust
import TrustEvaluator
import TrustEvaluatorNIO

/// One line on standard output, written at once (a supervisor or a test reads it as it comes).
@Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let files = Array(CommandLine.arguments.dropFirst())
guard files.count >= 3 else {
    FileHandle.standardError.write(Data("usage: hummingbird-mtls-server SERVER_CHAIN_PEM SERVER_KEY_PEM CLIENT_CA_PEM [REQUIRED_URI…]\n".utf8))
    exit(2)
}
let verifier: PincheckClientCertificateVerifier
let tls: TLSChannelConfiguration
do {
    verifier = try PincheckClientCertificateVerifier(
        policy: TrustPolicy(anchors: try TrustAnchors(contentsOf: [files[2]])),
        requiredIdentities: files.dropFirst(3).map { .uri($0) })
    let chain = try NIOSSLCertificate.fromPEMFile(files[0])
    let key = try NIOSSLPrivateKey(file: files[1], format: .pem)
    tls = verifier.hummingbirdTLSConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)) { decision in
        let codes = decision.verdict?.failures.map { "\($0.code)" }.joined(separator: ",") ?? ""
        say("decision: \(decision.rule.map { "\($0)" } ?? "none")\(codes.isEmpty ? "" : " \(codes)")")
    }
} catch {
    FileHandle.standardError.write(Data("hummingbird-mtls-server: \(error)\n".utf8))
    exit(2)
}

let router = Router(context: PincheckBasicRequestContext.self)
router.get("whoami") { _, context -> String in
    let decision = await verifier.decision(in: context)
    let identities = decision?.verdict?.verifiedPath?.certificates.first?.subjectAlternativeNames.map(\.description) ?? []
    let path = decision?.verdict?.verifiedPath?.certificates.map(\.subject) ?? []
    return "identities: \(identities.joined(separator: ", "))\nverified path: \(path.joined(separator: " → "))\n"
}
let app = Application(router: router, server: try .tls(.http1(), configuration: tls),
                      configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                      onServerRunning: { channel in say("listening on https://127.0.0.1:\(channel.localAddress?.port ?? 0)") })
try await app.runService()
#else
import Foundation

FileHandle.standardError.write(Data("hummingbird-mtls-server needs Pincheck's Hummingbird trait: swift run --traits Hummingbird hummingbird-mtls-server …\n".utf8))
exit(2)
#endif  // Hummingbird trait
