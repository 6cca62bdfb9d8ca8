// Example: AsyncHTTPClient pinned by Pincheck (the PincheckAsyncHTTPClient product).
//
//   swift run ahc-pinned-client URL ROOT_PEM [PIN…]
//
// The server's chain must end at ROOT_PEM and carry the URL's host (NIOSSL checks both), and with
// PINs its leaf's key must be one of them (Pincheck checks it in AsyncHTTPClient's connection
// initializers, before any request is written). A PIN of ROOT_PEM's key makes it the only root.
// What AsyncHTTPClient cannot show Pincheck is refused before connecting: an intermediate's pin
// with a root's, an intermediate as the anchor.
// Exit status: 0 an HTTP response came back, 1 the server was refused or the request failed,
// 2 bad input or a policy this road cannot enforce.
#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import PincheckAsyncHTTPClient
import TrustEvaluator
import TrustEvaluatorNIO

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    print("usage: ahc-pinned-client URL ROOT_PEM [PIN…]")
    exit(2)
}
let configuration: HTTPClient.Configuration
do {
    let roots = try Certificate.load(contentsOf: arguments[2])
    let pins = Array(arguments.dropFirst(3))
    let policy = TrustPolicy(pinning: pins.isEmpty ? .none : .publicKeys(try PinnedPublicKeys(parsing: pins)),
                             anchors: try TrustAnchors(certificates: roots))
    configuration = try .pinned(by: policy, base: HTTPClient.Configuration(timeout: .init(connect: .seconds(5))))
} catch {
    print("error: \(error)")
    exit(2)
}
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
var status: Int32 = 0
do {
    let response = try await client.execute(HTTPClientRequest(url: arguments[1]), timeout: .seconds(15))
    print("HTTP \(response.status.code)")
} catch let refusal as PincheckTrustError {
    print("refused: \(refusal.codes.map(\.description).joined(separator: ", "))")
    status = 1
} catch {
    print("request failed: \(error)")
    status = 1
}
try await client.shutdown().get()
exit(status)
#else
import Foundation

FileHandle.standardError.write(Data("ahc-pinned-client needs Pincheck's AsyncHTTPClient trait: swift run --traits AsyncHTTPClient ahc-pinned-client …\n".utf8))
exit(2)
#endif  // AsyncHTTPClient trait
