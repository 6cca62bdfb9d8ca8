import Foundation
import ServerTrust
import TrustEvaluator
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Conversions between ServerTrust's challenge model and Foundation's URL loading types.
//
// On Linux, FoundationNetworking (swift-corelibs-foundation, over libcurl) has no
// `URLProtectionSpace.serverTrust`, no `URLCredential(trust:)`, no `SecIdentity` and never
// delivers server-trust challenges to delegates: libcurl verifies the chain itself. So the
// bridge maps methods, dispositions, password credentials and protection spaces both ways, and
// maps server-trust and identity credentials to `nil` (to be answered through the NIO adapter
// or by Pincheck before the request, never silently accepted).

extension Disposition {
    /// The same answer as URLSession's type (raw values are equal).
    public var urlSessionDisposition: URLSession.AuthChallengeDisposition {
        switch self {
        case .useCredential: .useCredential
        case .performDefaultHandling: .performDefaultHandling
        case .cancelAuthenticationChallenge: .cancelAuthenticationChallenge
        case .rejectProtectionSpace: .rejectProtectionSpace
        }
    }

    /// Converts URLSession's disposition.
    /// - Parameter disposition: URLSession's disposition.
    public init(_ disposition: URLSession.AuthChallengeDisposition) {
        switch disposition {
        case .useCredential: self = .useCredential
        case .performDefaultHandling: self = .performDefaultHandling
        case .cancelAuthenticationChallenge: self = .cancelAuthenticationChallenge
        case .rejectProtectionSpace: self = .rejectProtectionSpace
        @unknown default: self = .cancelAuthenticationChallenge
        }
    }
}

extension Persistence {
    /// Foundation's persistence with the same meaning.
    public var urlPersistence: URLCredential.Persistence {
        switch self {
        case .none: .none
        case .forSession: .forSession
        case .permanent: .permanent
        }
    }

    /// Converts Foundation's persistence (`.synchronizable` has no Linux meaning and becomes `.permanent`).
    /// - Parameter persistence: Foundation's persistence.
    public init(_ persistence: URLCredential.Persistence) {
        switch persistence {
        case .none: self = .none
        case .forSession: self = .forSession
        default: self = .permanent
        }
    }
}

extension Credential {
    /// Foundation's credential for a password credential; `nil` for server-trust and identity
    /// credentials, which FoundationNetworking on Linux cannot represent.
    public var urlCredential: URLCredential? {
        guard case .password(let user, let password) = kind else { return nil }
        return URLCredential(user: user, password: password, persistence: persistence.urlPersistence)
    }

    /// Converts a Foundation password credential; `nil` when it holds no user.
    /// - Parameter credential: Foundation's credential.
    public init?(_ credential: URLCredential) {
        guard let user = credential.user else { return nil }
        self.init(user: user, password: credential.password ?? "", persistence: Persistence(credential.persistence))
    }
}

extension ProtectionSpace {
    /// Converts Foundation's protection space (it carries no served chain on Linux).
    /// - Parameter space: Foundation's protection space.
    public init(_ space: URLProtectionSpace) {
        self.init(
            host: space.host, port: space.port, protocol: space.protocol, realm: space.realm,
            authenticationMethod: AuthenticationMethod(rawValue: space.authenticationMethod))
    }

    /// Foundation's protection space (without the served chain, which it cannot hold on Linux).
    public var urlProtectionSpace: URLProtectionSpace {
        URLProtectionSpace(
            host: host, port: port, protocol: self.protocol, realm: realm,
            authenticationMethod: authenticationMethod.rawValue)
    }
}

extension Challenge {
    /// Converts Foundation's challenge.
    /// - Parameter challenge: Foundation's challenge.
    public init(_ challenge: URLAuthenticationChallenge) {
        let response = (challenge.failureResponse as? HTTPURLResponse).map { response in
            FailureResponse(
                statusCode: response.statusCode,
                headers: Dictionary(
                    response.allHeaderFields.compactMap { key, value in (key as? String).map { ($0, "\(value)") } },
                    uniquingKeysWith: { first, _ in first }))
        }
        self.init(
            protectionSpace: ProtectionSpace(challenge.protectionSpace),
            proposedCredential: challenge.proposedCredential.flatMap(Credential.init),
            previousFailureCount: challenge.previousFailureCount, failureResponse: response)
    }
}

extension ChallengeDecision {
    /// The pair URLSession's completion handler takes. A `useCredential` decision whose credential
    /// Foundation cannot represent (server trust, identity) becomes `performDefaultHandling`, so the
    /// stack's own validation still runs: nothing is accepted unchecked.
    public var urlSessionAnswer: (URLSession.AuthChallengeDisposition, URLCredential?) {
        if disposition == .useCredential {
            guard let credential = credential?.urlCredential else { return (.performDefaultHandling, nil) }
            return (.useCredential, credential)
        }
        return (disposition.urlSessionDisposition, nil)
    }

    /// ``urlSessionAnswer`` adjusted for the platform's URLSession.
    ///
    /// On Linux, FoundationNetworking (6.3.1) never finishes a task whose HTTP challenge gets
    /// `performDefaultHandling` when it has no proposed credential (swift-corelibs-foundation
    /// issue 5456): the task hangs. The bridge answers `cancelAuthenticationChallenge` instead, so
    /// the task ends (with `NSURLErrorCancelled`; the 401 is the challenge's `failureResponse`).
    /// - Parameter challenge: The challenge being answered.
    public func urlSessionAnswer(for challenge: Challenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        let answer = urlSessionAnswer
        #if os(Linux) || os(Windows)
        if answer.0 == .performDefaultHandling, challenge.proposedCredential == nil,
            challenge.protectionSpace.authenticationMethod != .serverTrust
        {
            return (.cancelAuthenticationChallenge, nil)
        }
        #endif
        return answer
    }
}

/// A URLSession delegate that routes challenges through a `ChallengeSession` (its router,
/// handlers and policies), and records which challenges URLSession actually delivered.
///
/// Install it as the session delegate: `URLSession(configuration:delegate:delegateQueue:)`.
/// `urlSession(_:didBecomeInvalidWithError:)` forwards to the session's invalidation, so
/// `ChallengeSession/onInvalidation(_:)` observers hear about it (AFNetworking's
/// `sessionDidBecomeInvalid` block).
// @unchecked Sendable: NSObject subclasses cannot be checked; every stored property is immutable
// and Sendable, and `delivered` is guarded by its lock.
public final class RoutingURLSessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    /// Which delegate method a challenge arrived at.
    public enum Level: String, Sendable, Hashable {
        /// `urlSession(_:didReceive:completionHandler:)`.
        case session
        /// `urlSession(_:task:didReceive:completionHandler:)`.
        case task
    }

    /// The session that owns the router and the lifecycle.
    public let session: ChallengeSession
    private let log = DeliveryLog()

    /// - Parameter session: The session that owns the router and its handlers.
    public init(session: ChallengeSession) {
        self.session = session
    }

    /// Every challenge URLSession delivered so far, in order, with the level it arrived at.
    public var delivered: [(level: Level, challenge: Challenge)] { log.entries }

    /// Session-level challenges (server trust, client certificate, NTLM, negotiate on Apple systems).
    public func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        forward(Challenge(challenge), level: .session, completionHandler)
    }

    /// Task-level challenges (HTTP basic and digest; on Linux, every challenge).
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        forward(Challenge(challenge), level: .task, completionHandler)
    }

    /// Forwards URLSession's invalidation to the challenge session.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        self.session.finishTasksAndInvalidate()
    }

    private func forward(
        _ challenge: Challenge, level: Level,
        _ completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        log.append(level, challenge)
        do {
            try session.handle(challenge) { decision in
                let (disposition, credential) = decision.urlSessionAnswer(for: challenge)
                completionHandler(disposition, credential)
            }
        } catch {
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
}

private final class DeliveryLog: Sendable {
    private let state = Locked<[(level: RoutingURLSessionDelegate.Level, challenge: Challenge)]>([])
    func append(_ level: RoutingURLSessionDelegate.Level, _ challenge: Challenge) { state.withLock { $0.append((level, challenge)) } }
    var entries: [(level: RoutingURLSessionDelegate.Level, challenge: Challenge)] { state.withLock { $0 } }
}
