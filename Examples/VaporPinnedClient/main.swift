// Example: Vapor's own client (app.client) pinned by Pincheck.
//
//   swift run --traits Vapor vapor-pinned-client URL ROOT_PEM PIN…
//
// app.client is AsyncHTTPClient underneath, configured by app.http.client.configuration: pinning
// that configuration (PincheckAsyncHTTPClient) pins every request the application makes. The
// server's chain must end at ROOT_PEM and carry the URL's host, and its leaf's key must be one of
// the PINs; otherwise the request fails with Pincheck's refusal before any request byte is sent.
// Exit status: 0 an HTTP response came back, 1 the server was refused or the request failed,
// 2 bad input or a policy this road cannot enforce.
#if Vapor
import Foundation
import PincheckVapor  // brings PincheckAsyncHTTPClient: .pinned(by:base:)
import TrustEvaluator
import TrustEvaluatorNIO
import Vapor

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    print("usage: vapor-pinned-client URL ROOT_PEM PIN…")
    exit(2)
}
let app = try await Application.make(Environment(name: "production", arguments: ["vapor-pinned-client"]))
do {
    let policy = TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(parsing: Array(arguments.dropFirst(3)))),
                             anchors: try TrustAnchors(contentsOf: [arguments[2]]))
    app.http.client.configuration = try .pinned(by: policy, base: app.http.client.configuration)
} catch {
    print("error: \(error)")
    try await app.asyncShutdown()
    exit(2)
}
var status: Int32 = 0
do {
    let response: ClientResponse = try await app.client.get(URI(string: arguments[1]))
    print("HTTP \(response.status.code)")
} catch let refusal as PincheckTrustError {
    print("refused: \(refusal.codes.map(\.description).joined(separator: ", "))")
    status = 1
} catch {
    print("request failed: \(error)")
    status = 1
}
try await app.asyncShutdown()
exit(status)
#else
import Foundation

FileHandle.standardError.write(Data("vapor-pinned-client needs Pincheck's Vapor trait: swift run --traits Vapor vapor-pinned-client …\n".utf8))
exit(2)
#endif  // Vapor trait
