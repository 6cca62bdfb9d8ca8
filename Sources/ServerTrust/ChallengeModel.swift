import FoundationEssentials
import TrustEvaluator

/// How a server asks to be authenticated to, or how it proves itself (Foundation's
/// `NSURLAuthenticationMethod*` constants, with the same string values).
public struct AuthenticationMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// Foundation's string for the method, such as `NSURLAuthenticationMethodServerTrust`.
    public let rawValue: String
    /// Wraps one of Foundation's method strings (unknown strings are kept as they are).
    /// - Parameter rawValue: The `NSURLAuthenticationMethod*` string.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The server's certificate chain must be judged (`NSURLAuthenticationMethodServerTrust`).
    public static let serverTrust = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodServerTrust")
    /// HTTP Basic (`NSURLAuthenticationMethodHTTPBasic`).
    public static let httpBasic = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodHTTPBasic")
    /// HTTP Digest (`NSURLAuthenticationMethodHTTPDigest`).
    public static let httpDigest = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodHTTPDigest")
    /// A TLS client certificate is requested (`NSURLAuthenticationMethodClientCertificate`).
    public static let clientCertificate = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodClientCertificate")
    /// NTLM (`NSURLAuthenticationMethodNTLM`).
    public static let ntlm = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodNTLM")
    /// Kerberos or NTLM through SPNEGO (`NSURLAuthenticationMethodNegotiate`).
    public static let negotiate = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodNegotiate")
    /// The protocol's default (`NSURLAuthenticationMethodDefault`).
    public static let `default` = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodDefault")

    /// Every method Pincheck knows, for tables.
    public static let all: [AuthenticationMethod] = [.serverTrust, .httpBasic, .httpDigest, .clientCertificate, .ntlm, .negotiate, .default]

    /// Whether URLSession sends this challenge to the session-level delegate first
    /// (server trust, client certificate, NTLM, negotiate); all others are task-specific.
    public var isSessionWide: Bool {
        self == .serverTrust || self == .clientCertificate || self == .ntlm || self == .negotiate
    }

    /// The short name, such as `serverTrust`.
    public var description: String {
        rawValue.hasPrefix("NSURLAuthenticationMethod") ? String(rawValue.dropFirst("NSURLAuthenticationMethod".count)) : rawValue
    }
}

/// What to do with a challenge (`URLSession.AuthChallengeDisposition`, same raw values).
public enum Disposition: Int, Sendable, Hashable, CaseIterable {
    /// Answer with the given credential (for server trust: the peer is trusted).
    case useCredential = 0
    /// Let the stack do what it does by default (for server trust: its own chain and name validation).
    case performDefaultHandling = 1
    /// Cancel the challenge, and with it the request or connection.
    case cancelAuthenticationChallenge = 2
    /// Decline this protection space; the stack may offer another one, or give up with the response.
    case rejectProtectionSpace = 3
}

/// The peer's certificate chain as served, for a server-trust challenge (what `SecTrust` carries on Apple systems).
public struct PeerTrust: Sendable {
    /// What the peer sent, leaf first.
    public let servedChain: [Certificate]
    /// Pincheck's judgement, once one was made.
    public let verdict: Verdict?
    /// The OCSP response the peer stapled for its leaf (DER), if the stack received one: it is
    /// judged with the chain, and a *revoked* status refuses it.
    public let stapledOCSPResponse: [UInt8]?
    /// CRLs fetched from the chain's distribution points before the challenge is judged
    /// (``ChallengeAdapter/revocationLists``); nil when none were.
    package var revocationLists: FetchedRevocationLists?

    /// - Parameters:
    ///   - servedChain: What the peer sent, leaf first.
    ///   - verdict: A verdict already reached for this chain, if any.
    ///   - stapledOCSPResponse: The stapled OCSP response (DER), if the stack has one.
    public init(servedChain: [Certificate], verdict: Verdict? = nil, stapledOCSPResponse: [UInt8]? = nil) {
        self.servedChain = servedChain
        self.verdict = verdict
        self.stapledOCSPResponse = stapledOCSPResponse
    }
}

/// The server, realm and method a challenge is about (`URLProtectionSpace`).
///
/// Two protection spaces are equal when host (case-insensitively), port, protocol, realm and
/// method are; the served chain is not part of identity, so it can key credential storage.
public struct ProtectionSpace: Sendable, Hashable, CustomStringConvertible {
    /// The server's host name or IP literal.
    public let host: String
    /// The server's port.
    public let port: Int
    /// The protocol, such as `https` (`nil` when unknown).
    public let `protocol`: String?
    /// The realm from `WWW-Authenticate` (`nil` when none).
    public let realm: String?
    /// How the server asks to be authenticated to.
    public let authenticationMethod: AuthenticationMethod
    /// For server trust: the served chain (Foundation's `serverTrust`).
    public let serverTrust: PeerTrust?

    /// - Parameters:
    ///   - host: The server's host name or IP literal.
    ///   - port: The server's port.
    ///   - protocol: The protocol, such as `https`.
    ///   - realm: The realm, if the server named one.
    ///   - authenticationMethod: The method.
    ///   - serverTrust: For server trust: the served chain.
    public init(
        host: String, port: Int, protocol: String? = "https", realm: String? = nil,
        authenticationMethod: AuthenticationMethod, serverTrust: PeerTrust? = nil
    ) {
        self.host = host
        self.port = port
        self.protocol = `protocol`
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.serverTrust = serverTrust
    }

    /// Whether the protection space's credentials are sent in clear (`receivesCredentialSecurely`, inverted).
    public var receivesCredentialSecurely: Bool { self.protocol == "https" || authenticationMethod == .httpDigest }

    public static func == (lhs: ProtectionSpace, rhs: ProtectionSpace) -> Bool {
        lhs.host.lowercased() == rhs.host.lowercased() && lhs.port == rhs.port && lhs.protocol == rhs.protocol
            && lhs.realm == rhs.realm && lhs.authenticationMethod == rhs.authenticationMethod
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(host.lowercased())
        hasher.combine(port)
        hasher.combine(self.protocol)
        hasher.combine(realm)
        hasher.combine(authenticationMethod)
    }

    /// `https://host:port realm=… (method)`.
    public var description: String {
        "\(self.protocol ?? "?")://\(host):\(port)" + (realm.map { " realm=\"\($0)\"" } ?? "") + " (\(authenticationMethod))"
    }
}

/// The HTTP response that failed authentication (Foundation's `failureResponse`).
public struct FailureResponse: Sendable, Hashable {
    /// The status code, such as 401.
    public let statusCode: Int
    /// The response headers (names as sent).
    public let headers: [String: String]

    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The response headers.
    public init(statusCode: Int, headers: [String: String] = [:]) {
        self.statusCode = statusCode
        self.headers = headers
    }

    /// The value of a header, looked up case-insensitively.
    /// - Parameter name: The header name.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// An authentication challenge (`URLAuthenticationChallenge`).
public struct Challenge: Sendable {
    /// What the challenge is about.
    public let protectionSpace: ProtectionSpace
    /// A credential the stack proposes (from the URL or storage), if any.
    public let proposedCredential: Credential?
    /// How many times this protection space already failed for this request.
    public let previousFailureCount: Int
    /// The response that caused the challenge, for HTTP methods.
    public let failureResponse: FailureResponse?

    /// - Parameters:
    ///   - protectionSpace: What the challenge is about.
    ///   - proposedCredential: A credential the stack proposes.
    ///   - previousFailureCount: Failures so far for this request.
    ///   - failureResponse: The response that caused the challenge.
    public init(
        protectionSpace: ProtectionSpace, proposedCredential: Credential? = nil,
        previousFailureCount: Int = 0, failureResponse: FailureResponse? = nil
    ) {
        self.protectionSpace = protectionSpace
        self.proposedCredential = proposedCredential
        self.previousFailureCount = previousFailureCount
        self.failureResponse = failureResponse
    }

    /// Makes the challenge an HTTP response asks for, or `nil` when it asks for none.
    ///
    /// A 401 (or 407) without a `WWW-Authenticate` (`Proxy-Authenticate`) header is not a challenge:
    /// the response is simply delivered.
    /// - Parameters:
    ///   - response: The response.
    ///   - host: The server's host.
    ///   - port: The server's port.
    ///   - protocol: `http` or `https`.
    ///   - previousFailureCount: Failures so far for this request.
    ///   - proposedCredential: A credential the stack proposes.
    public static func http(
        response: FailureResponse, host: String, port: Int, protocol: String,
        previousFailureCount: Int = 0, proposedCredential: Credential? = nil
    ) -> Challenge? {
        let headerName = response.statusCode == 407 ? "Proxy-Authenticate" : "WWW-Authenticate"
        guard response.statusCode == 401 || response.statusCode == 407, let header = response.header(headerName) else { return nil }
        let scheme = header.split(separator: " ", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        let method: AuthenticationMethod
        switch scheme {
        case "basic": method = .httpBasic
        case "digest": method = .httpDigest
        case "ntlm": method = .ntlm
        case "negotiate": method = .negotiate
        default: method = .default
        }
        var realm: String?
        if let range = header.firstRange(of: "realm=\"") {
            let rest = header[range.upperBound...]
            realm = rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
        return Challenge(
            protectionSpace: ProtectionSpace(host: host, port: port, protocol: `protocol`, realm: realm, authenticationMethod: method),
            proposedCredential: proposedCredential, previousFailureCount: previousFailureCount, failureResponse: response)
    }
}

extension Challenge {
    /// The same challenge with another peer trust (the one the CRLs were fetched for).
    func replacing(serverTrust trust: PeerTrust) -> Challenge {
        let space = protectionSpace
        return Challenge(
            protectionSpace: ProtectionSpace(
                host: space.host, port: space.port, protocol: space.protocol, realm: space.realm,
                authenticationMethod: space.authenticationMethod, serverTrust: trust),
            proposedCredential: proposedCredential, previousFailureCount: previousFailureCount, failureResponse: failureResponse)
    }
}
