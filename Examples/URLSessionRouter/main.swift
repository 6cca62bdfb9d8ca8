// Example: a URLSession whose authentication challenges go through Pincheck's router and adapter.
//
//   swift run urlsession-router URL USER PASSWORD
//
// Basic and Digest challenges reach the task-level handler, which answers with the credential
// once and never loops on a rejected one: a second challenge for the same credential cancels the
// request. Exit status: 0 for a 2xx response, 1 otherwise, 2 bad input. (On Linux, URLSession delivers no server-trust
// challenges: pin TLS with TrustEvaluatorNIO.)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerTrust
import ServerTrustFoundation
import TrustEvaluator

let arguments = CommandLine.arguments
guard arguments.count == 4, let url = URL(string: arguments[1]) else {
    print("usage: urlsession-router URL USER PASSWORD")
    exit(2)
}
let adapter = ChallengeAdapter(trustManager: TrustManager(allHostsMustBeEvaluated: false),
    credential: Credential(user: arguments[2], password: arguments[3], persistence: .forSession))
let delegate = RoutingURLSessionDelegate(session: ChallengeSession(router: ChallengeRouter(
    sessionHandler: .adapter(adapter), taskHandler: .adapter(adapter))))
let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)

let status: Int? = await withCheckedContinuation { continuation in
    session.dataTask(with: url) { _, response, error in
        if let error { print("request failed: \(error.localizedDescription)") }
        continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode)
    }.resume()
}
session.finishTasksAndInvalidate()
print("HTTP status: \(status.map(String.init) ?? "none")")
exit(status.map { (200..<300).contains($0) } == true ? 0 : 1)
