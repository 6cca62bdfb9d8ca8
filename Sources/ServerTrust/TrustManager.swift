import Foundation
import TrustEvaluator

/// Which ``TrustPolicy`` applies to which host, and what happens to hosts no policy names.
public struct TrustManager: Sendable {
    /// A policy for one host, optionally until a date (an expired pin set no longer applies,
    /// TrustKit's `expirationDate`).
    public struct HostPolicy: Sendable {
        /// The policy.
        public let policy: TrustPolicy
        /// After this instant the policy no longer applies and the host counts as unlisted.
        public let expires: Date?
        /// - Parameters:
        ///   - policy: The policy.
        ///   - expires: When it stops applying; `nil` never.
        public init(_ policy: TrustPolicy, expires: Date? = nil) {
            self.policy = policy
            self.expires = expires
        }
    }

    /// What happens to a host with no applicable policy.
    public enum UnlistedHosts: Sendable {
        /// Refuse the connection (fail closed).
        case refuse
        /// Fall back to default validation (chain and name against these anchors), and
        /// answer `performDefaultHandling`.
        case defaultValidation(anchors: TrustAnchors)
    }

    /// What a host resolves to.
    public enum Resolution: Sendable {
        /// A policy applies.
        case policy(TrustPolicy)
        /// No policy applies; default validation with this policy stands in for the stack's own.
        case unlisted(defaultValidation: TrustPolicy)
        /// No policy applies and unlisted hosts are refused.
        case refused
    }

    /// Policies by lower-cased host name or IP literal.
    public var hosts: [String: HostPolicy]
    /// The rule for other hosts.
    public var unlistedHosts: UnlistedHosts

    /// - Parameters:
    ///   - hosts: Policies by host (matched case-insensitively, exactly).
    ///   - unlistedHosts: The rule for other hosts; refuse by default.
    public init(hosts: [String: HostPolicy] = [:], unlistedHosts: UnlistedHosts = .refuse) {
        self.hosts = Dictionary(hosts.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.unlistedHosts = unlistedHosts
    }

    /// One policy for every host (what a NIO client pinning one upstream usually wants).
    /// - Parameter policy: The policy.
    public static func single(_ policy: TrustPolicy) -> TrustManager {
        TrustManager(hosts: [:], unlistedHosts: .refuse).with(everyHost: policy)
    }

    private var everyHost: TrustPolicy?

    private func with(everyHost policy: TrustPolicy) -> TrustManager {
        var copy = self
        copy.everyHost = policy
        return copy
    }

    /// Finds what applies to a host at a time.
    /// - Parameters:
    ///   - host: The host connected to.
    ///   - time: The evaluation time (pin-set expiry is judged at it).
    public func resolve(host: String, at time: Date) -> Resolution {
        if let entry = hosts[host.lowercased()], entry.expires.map({ time < $0 }) ?? true {
            return .policy(entry.policy)
        }
        if let everyHost { return .policy(everyHost) }
        switch unlistedHosts {
        case .refuse: return .refused
        case .defaultValidation(let anchors): return .unlisted(defaultValidation: TrustPolicy(anchors: anchors))
        }
    }
}
