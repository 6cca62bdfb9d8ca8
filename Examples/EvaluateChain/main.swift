// Example: the README's "library in ten lines" — judge a served chain with an SPKI pin.
//
//   swift run evaluate-chain CHAIN_PEM HOST sha256/PIN [ROOT_PEM]
//
// Trusted when the chain verifies (against ROOT_PEM, or the system store) for HOST and some
// certificate of the verified path has the pinned key. Exit status: 0 trusted, 1 not, 2 bad input.
import Foundation
import TrustEvaluator

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5 else {
    print("usage: evaluate-chain CHAIN_PEM HOST sha256/PIN [ROOT_PEM]")
    exit(2)
}
do {
    let served = try Certificate.load(contentsOf: arguments[1])          // leaf first, as served
    let policy = TrustPolicy(
        pinning: .publicKeys(try PinnedPublicKeys(parsing: [arguments[3]])),
        anchors: arguments.count == 5 ? try TrustAnchors(contentsOf: [arguments[4]]) : .system)
    let verdict = try Evaluator(policy: policy).evaluate(served, host: arguments[2], at: Date())
    if !verdict.isTrusted {
        for reason in verdict.failures { print(reason.code, reason.message) }  // e.g. pin.mismatch
        exit(1)
    }
    print("trusted: \(arguments[2])")
} catch {
    print("error: \(error)")
    exit(2)
}
