// Example: AFNetworking's AFSecurityPolicy, ported to Linux with Pincheck's SecurityPolicy.
//
//   swift run afnetworking-port CHAIN_PEM HOST PINNED_CERTIFICATES_FOLDER [ROOT_PEM]
//
// Certificate pinning as an iOS app wrote it: every certificate in a folder is a pin, and a served
// chain is trusted when it validates for HOST and its verified path contains one of them.
// Exit status: 0 trusted, 1 not trusted (the reasons are printed), 2 bad input.
import Foundation
import TrustEvaluator

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5 else {
    print("usage: afnetworking-port CHAIN_PEM HOST PINNED_CERTIFICATES_FOLDER [ROOT_PEM]")
    exit(2)
}
do {
    let served = try Certificate.load(contentsOf: arguments[1])
    // AFNetworking: [AFSecurityPolicy policyWithPinningMode:AFSSLPinningModeCertificate withPinnedCertificates:…]
    let policy = SecurityPolicy(pinningMode: .certificate,
                                pinnedCertificates: try SecurityPolicy.certificates(inDirectory: arguments[3]))
    // The anchor step. On iOS the SecTrust handed to the delegate already knows the system's roots
    // and, in certificate mode, AFNetworking re-anchors it on the pinned certificates. On Linux the
    // anchors are the caller's: the system store by default (`TrustAnchors.system`), or, for a
    // private CA, the roots named here. Certificate mode still re-anchors on the pins.
    if arguments.count == 5 { policy.anchors = try TrustAnchors(contentsOf: [arguments[4]]) }

    // AFNetworking: [policy evaluateServerTrust:serverTrust forDomain:host] → BOOL.
    // `evaluate` is the same judgement with its reasons.
    let verdict = try policy.evaluate(served, forDomain: arguments[2])
    if verdict.isTrusted {
        print("trusted: \(arguments[2]), pinned certificate at depth \(verdict.matchedPins.map { "\($0.depth)" }.joined(separator: ", "))")
        exit(0)
    }
    print("not trusted: \(arguments[2])")
    for reason in verdict.failures { print("  \(reason.code): \(reason.message)") }
    exit(1)
} catch {
    print("error: \(error)")
    exit(2)
}
