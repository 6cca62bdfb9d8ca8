// Example: a swift-openapi-generator client whose transport is AsyncHTTPClient pinned by Pincheck.
//
//   swift run openapi-pinned-client SERVER_URL ROOT_PEM PIN…
//
// Client.swift and Types.swift were generated once from openapi.yaml by swift-openapi-generator
// 1.14.3 (`swift-openapi-generator generate openapi.yaml --config openapi-generator-config.yaml`)
// and are committed, so building the example needs no generator. The client's transport is
// AsyncHTTPClientTransport over an HTTPClient from PincheckAsyncHTTPClient: a server whose leaf
// key is not pinned is refused before the request is written, and the generated client's
// ClientError carries Pincheck's refusal (PincheckTrustError) as its underlying error.
// Exit status: 0 a response came back, 1 the server was refused or the call failed, 2 bad input.
#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import PincheckAsyncHTTPClient
import TrustEvaluator
import TrustEvaluatorNIO

let arguments = CommandLine.arguments
guard arguments.count >= 4, let serverURL = URL(string: arguments[1]) else {
    print("usage: openapi-pinned-client SERVER_URL ROOT_PEM PIN…")
    exit(2)
}
let httpClient: HTTPClient
do {
    let policy = TrustPolicy(pinning: .publicKeys(try PinnedPublicKeys(parsing: Array(arguments.dropFirst(3)))),
                             anchors: try TrustAnchors(certificates: try Certificate.load(contentsOf: arguments[2])))
    httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try .pinned(by: policy))
} catch {
    print("error: \(error)")
    exit(2)
}
let client = Client(serverURL: serverURL, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient)))
var status: Int32 = 0
do {
    switch try await client.getStatus() {
    case .ok(let ok):
        let page = try await String(collecting: try ok.body.html, upTo: 1 << 20)
        print("HTTP 200, \(page.utf8.count) bytes")
    case .undocumented(let code, _):
        print("HTTP \(code)")
    }
} catch let error as ClientError {
    if let refusal = error.underlyingError as? PincheckTrustError {
        print("refused: \(refusal.codes.map(\.description).joined(separator: ", "))")
    } else {
        print("call failed: \(error)")
    }
    status = 1
} catch {
    print("call failed: \(error)")
    status = 1
}
try await httpClient.shutdown().get()
exit(status)
#else
import Foundation

FileHandle.standardError.write(Data("openapi-pinned-client needs Pincheck's AsyncHTTPClient trait: swift run --traits AsyncHTTPClient openapi-pinned-client …\n".utf8))
exit(2)
#endif  // AsyncHTTPClient trait
