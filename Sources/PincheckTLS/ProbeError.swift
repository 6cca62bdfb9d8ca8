import TrustEvaluator
/// Why a handshake produced no chain to evaluate: the network or the peer failed, not the
/// certificate. Untrusted certificates are never probe errors; they are verdicts.
public struct ProbeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable code. New codes may be added; match on the ones you handle.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable, Hashable, CaseIterable {
            case dnsFailure = "network.dns-failure"
            case refused = "network.refused"
            case timeout = "network.timeout"
            case connectionFailed = "network.connection-failed"
            case connectionClosed = "network.connection-closed"
            case notTLS = "tls.not-tls"
            case tlsAlert = "tls.alert"
            case noCertificate = "tls.no-certificate"
            case handshakeFailed = "tls.handshake-failed"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// Every code there is (the Reason codes article's list is checked against it).
        static var all: [Code] { Base.allCases.map(Code.init) }

        /// The code's stable text, such as `network.refused`.
        public var description: String { base.rawValue }

        /// The host name did not resolve: the resolver said so, or gave no answer before the
        /// probe's deadline (the message says which).
        public static let dnsFailure = Code(.dnsFailure)
        /// Nothing listens on the port (TCP RST).
        public static let refused = Code(.refused)
        /// The connect or the handshake did not finish before the timeout. (A lookup that does not
        /// finish in time is ``dnsFailure``: the code names the step that failed.)
        public static let timeout = Code(.timeout)
        /// Any other socket failure (unreachable network, no route…).
        public static let connectionFailed = Code(.connectionFailed)
        /// The peer closed the connection in the middle of the handshake.
        public static let connectionClosed = Code(.connectionClosed)
        /// The peer answered, but not with TLS (plain HTTP, SSH…).
        public static let notTLS = Code(.notTLS)
        /// The peer ended the handshake with a TLS alert (unrecognized name, handshake failure…).
        public static let tlsAlert = Code(.tlsAlert)
        /// The handshake completed without a server certificate.
        public static let noCertificate = Code(.noCertificate)
        /// Any other handshake failure; the message carries OpenSSL's error queue.
        public static let handshakeFailed = Code(.handshakeFailed)
    }

    /// What kind of failure this is.
    public let code: Code
    /// What happened, in words, with the address and step.
    public let message: String

    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: What happened.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
