import Foundation
import ServerTrust
import Synchronization
import PincheckTestSupport
import TrustEvaluator

typealias PKI = TestPKI

extension TestPKI {
    static let root = certificate("rsa-root")
    static let intermediate = certificate("rsa-intermediate")
    static let leaf = certificate("rsa-leaf")
    static let anchors = try! TrustAnchors(certificates: [root])

    static func pinned(_ pin: Certificate) -> TrustPolicy {
        TrustPolicy(pinning: .publicKeys(try! PinnedPublicKeys(certificates: [pin])), anchors: anchors)
    }

    static func serverTrust(host: String = "www.example.test", chain: [Certificate] = [leaf, intermediate]) -> Challenge {
        Challenge(protectionSpace: ProtectionSpace(host: host, port: 443, authenticationMethod: .serverTrust,
                                                   serverTrust: PeerTrust(servedChain: chain)))
    }

    static func http(_ method: AuthenticationMethod = .httpBasic, failures: Int = 0, proposed: Credential? = nil) -> Challenge {
        Challenge(protectionSpace: ProtectionSpace(host: "api.example.test", port: 443, realm: "api", authenticationMethod: method),
                  proposedCredential: proposed, previousFailureCount: failures,
                  failureResponse: FailureResponse(statusCode: 401, headers: ["WWW-Authenticate": "Basic realm=\"api\""]))
    }
}

/// Collects values from any task.
final class Box<T: Sendable>: Sendable {
    private let list = Mutex<[T]>([])
    func append(_ value: T) { list.withLock { $0.append(value) } }
    var all: [T] { list.withLock { $0 } }
}

/// Holds a completion a handler stored to call later.
final class Stored: Sendable {
    private let slot = Mutex<ChallengeCompletion?>(nil)
    func keep(_ completion: ChallengeCompletion) { slot.withLock { $0 = completion } }
    func take() -> ChallengeCompletion? { slot.withLock { value in defer { value = nil }; return value } }
}
