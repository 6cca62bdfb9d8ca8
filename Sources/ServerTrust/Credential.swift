import TrustEvaluator

/// A credential's lifetime in storage (`URLCredential.Persistence`, same raw values).
public enum Persistence: UInt, Sendable, Hashable, CaseIterable, Codable {
    /// Used for this one request; never stored.
    case none = 0
    /// Kept in memory until the storage (the session) goes away.
    case forSession = 1
    /// Written to the file the caller named for the storage (mode 0600).
    case permanent = 2
}

/// A client's private key, kept opaque: Pincheck never prints it.
public struct PrivateKeyMaterial: Sendable, Hashable, CustomStringConvertible {
    /// The key, as PEM or DER bytes.
    public let bytes: [UInt8]
    /// - Parameter bytes: The key, as PEM or DER bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }
    /// Always `<private key redacted>`.
    public var description: String { "<private key redacted>" }
}

/// An answer to a challenge (`URLCredential`).
///
/// Printing a credential never shows a password or a key.
public struct Credential: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What the credential holds.
    public enum Kind: Sendable {
        /// A user name and password, for HTTP Basic/Digest, NTLM, negotiate.
        case password(user: String, password: String)
        /// A client identity: its certificate chain (leaf first) and private key.
        case identity(certificates: [Certificate], privateKey: PrivateKeyMaterial)
        /// Acceptance of the peer's served chain (`URLCredential(trust:)`).
        case serverTrust(PeerTrust)
    }

    /// What the credential holds.
    public let kind: Kind
    /// How long storage keeps it (server-trust credentials are always `.none`).
    public let persistence: Persistence

    /// A user name and password.
    /// - Parameters:
    ///   - user: The user name.
    ///   - password: The password.
    ///   - persistence: How long storage keeps it.
    public init(user: String, password: String, persistence: Persistence) {
        self.kind = .password(user: user, password: password)
        self.persistence = persistence
    }

    /// A client identity.
    /// - Parameters:
    ///   - certificates: The client certificate chain, leaf first.
    ///   - privateKey: The leaf's private key.
    ///   - persistence: How long storage keeps it.
    public init(certificates: [Certificate], privateKey: PrivateKeyMaterial, persistence: Persistence) {
        self.kind = .identity(certificates: certificates, privateKey: privateKey)
        self.persistence = persistence
    }

    /// Acceptance of a served chain.
    /// - Parameter trust: The chain (and verdict) being accepted.
    public init(trust: PeerTrust) {
        self.kind = .serverTrust(trust)
        self.persistence = .none
    }

    /// The user name, for password credentials.
    public var user: String? { if case .password(let user, _) = kind { user } else { nil } }
    /// The password, for password credentials.
    public var password: String? { if case .password(_, let password) = kind { password } else { nil } }
    /// Whether a password is present (`hasPassword`).
    public var hasPassword: Bool { password.map { !$0.isEmpty } ?? false }
    /// The accepted chain, for server-trust credentials.
    public var serverTrust: PeerTrust? { if case .serverTrust(let trust) = kind { trust } else { nil } }

    /// Whether two credentials hold the same secret material (server trust: the same leaf).
    /// - Parameter other: The other credential.
    public func sameSecret(as other: Credential) -> Bool {
        switch (kind, other.kind) {
        case let (.password(u1, p1), .password(u2, p2)): u1 == u2 && p1 == p2
        case let (.identity(c1, k1), .identity(c2, k2)): c1 == c2 && k1 == k2
        case let (.serverTrust(t1), .serverTrust(t2)): t1.servedChain.first == t2.servedChain.first
        default: false
        }
    }

    /// A redacted description: user names are shown, passwords and keys never.
    public var description: String {
        switch kind {
        case .password(let user, _): "Credential(user: \(user), password: <redacted>, persistence: \(persistence))"
        case .identity(let certificates, _):
            "Credential(identity: \(certificates.first?.subject ?? "?"), key: <redacted>, persistence: \(persistence))"
        case .serverTrust(let trust): "Credential(serverTrust: \(trust.servedChain.first?.subject ?? "?"))"
        }
    }

    /// Same as ``description``: redacted.
    public var debugDescription: String { description }
}
