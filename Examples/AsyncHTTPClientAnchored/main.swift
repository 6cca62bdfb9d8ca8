// Example: AsyncHTTPClient anchored on a private root, the most Pincheck can do inside AHC.
//
//   swift run ahc-anchored-client URL ROOT_PEM…
//
// AsyncHTTPClient builds its own TLS handler and has no verification hook, so Pincheck cannot run
// in its handshakes. What it can do is root anchoring: the served chain must end at one of the
// given self-signed roots and carry the URL's host name (NIOSSL checks both). An intermediate or
// a leaf given as ROOT_PEM is refused before any connection (`policy.invalid`): BoringSSL could
// never end a path there. SPKI pins and Pincheck's reasons need TrustEvaluatorNIO or gRPC.
// Exit status: 0 an HTTP response came back, 1 the TLS handshake or request failed, 2 bad input.
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import TrustEvaluator
import TrustEvaluatorNIO

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    print("usage: ahc-anchored-client URL ROOT_PEM…")
    exit(2)
}
let tls: TLSConfiguration
do {
    let roots = try arguments.dropFirst(2).flatMap { try Certificate.load(contentsOf: $0) }
    tls = try PincheckNIOVerifier.makeAnchoredConfiguration(anchors: roots)
} catch {
    print("error: \(error)")
    exit(2)
}
// AHC retries a connection whose handshake failed until the connect timeout (10 s by default),
// so a refused server surfaces only then: 5 s here.
let client = HTTPClient(eventLoopGroupProvider: .singleton,
                        configuration: HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: .seconds(5))))
var status: Int32 = 0
do {
    let response = try await client.execute(HTTPClientRequest(url: arguments[1]), timeout: .seconds(15))
    print("HTTP \(response.status.code)")
} catch {
    print("request failed: \(error)")
    status = 1
}
try await client.shutdown().get()
exit(status)
