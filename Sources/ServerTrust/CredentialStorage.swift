import FoundationEssentials
import TrustEvaluator
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Credentials per protection space, with URLCredentialStorage's three persistences.
///
/// `.none` credentials are never stored; `.forSession` ones live in memory; `.permanent` ones are
/// also written to the file the caller names (created with mode 0600, replaced atomically).
/// Only password credentials can be permanent. Nothing here logs or prints a password.
/// - Warning: The permanent file holds passwords in clear, protected only by its 0600 mode, like
///   `~/.netrc`. Name a file on a private directory.
public final class CredentialStorage: Sendable {
    private struct Entry: Codable {
        var host: String, port: Int, proto: String?, realm: String?, method: String
        var user: String, password: String
    }
    private struct State {
        var credentials: [ProtectionSpace: [String: Credential]] = [:]
        var defaults: [ProtectionSpace: String] = [:]
    }
    private let state = Locked(State())
    /// The file permanent credentials are written to; `nil` when permanent storage is off.
    public let permanentFile: URL?

    /// - Parameter permanentFile: Where `.permanent` credentials go; read now if it exists. `nil`
    ///   refuses permanent credentials. Pincheck never picks a default path.
    /// - Throws: ``ServerTrustError`` `.storage` when the file exists but cannot be read or decoded.
    public init(permanentFile: URL? = nil) throws(ServerTrustError) {
        self.permanentFile = permanentFile
        guard let permanentFile, FileManager.default.fileExists(atPath: permanentFile.path) else { return }
        let entries: [Entry]
        do {
            entries = try JSONDecoder().decode([Entry].self, from: Data(contentsOf: permanentFile))
        } catch {
            throw ServerTrustError(.storage, "could not read the credential file \(permanentFile.path)")
        }
        state.withLock { state in
            for e in entries {
                let space = ProtectionSpace(
                    host: e.host, port: e.port, protocol: e.proto, realm: e.realm,
                    authenticationMethod: AuthenticationMethod(rawValue: e.method))
                state.credentials[space, default: [:]][e.user] = Credential(user: e.user, password: e.password, persistence: .permanent)
            }
        }
    }

    /// Stores a credential for a protection space (a `.none` credential is not stored).
    /// - Parameters:
    ///   - credential: The credential; its ``Credential/persistence`` decides where it goes.
    ///   - space: The protection space.
    ///   - asDefault: Also make it the space's default credential.
    /// - Throws: ``ServerTrustError`` `.storage` for a permanent credential without a file, a
    ///   non-password permanent credential, or a failed write.
    public func set(_ credential: Credential, for space: ProtectionSpace, asDefault: Bool = false) throws(ServerTrustError) {
        guard credential.persistence != .none else { return }
        guard let user = credential.user else {
            guard credential.persistence != .permanent else {
                throw ServerTrustError(.storage, "only password credentials can be stored permanently")
            }
            return
        }
        if credential.persistence == .permanent, permanentFile == nil {
            throw ServerTrustError(.storage, "permanent credential for \(space) refused: no credential file was named")
        }
        let snapshot = state.withLock { state -> [ProtectionSpace: [String: Credential]] in
            state.credentials[space, default: [:]][user] = credential
            if asDefault || state.defaults[space] == nil { state.defaults[space] = user }
            return state.credentials
        }
        if credential.persistence == .permanent { try writePermanent(snapshot) }
    }

    /// Removes a user's credential for a space (from the file too, if it was permanent).
    /// - Parameters:
    ///   - user: The user name.
    ///   - space: The protection space.
    /// - Throws: ``ServerTrustError`` `.storage` if the file cannot be rewritten.
    public func remove(user: String, for space: ProtectionSpace) throws(ServerTrustError) {
        let (removed, snapshot) = state.withLock { state in
            let removed = state.credentials[space]?.removeValue(forKey: user)
            if state.defaults[space] == user { state.defaults[space] = nil }
            return (removed, state.credentials)
        }
        if removed?.persistence == .permanent { try writePermanent(snapshot) }
    }

    /// The credentials stored for a space, by user name.
    /// - Parameter space: The protection space.
    public func credentials(for space: ProtectionSpace) -> [String: Credential] {
        state.withLock { $0.credentials[space] ?? [:] }
    }

    /// The space's default credential (the first stored, or the one set `asDefault`).
    /// - Parameter space: The protection space.
    public func defaultCredential(for space: ProtectionSpace) -> Credential? {
        state.withLock { state in state.defaults[space].flatMap { state.credentials[space]?[$0] } }
    }

    private func writePermanent(_ all: [ProtectionSpace: [String: Credential]]) throws(ServerTrustError) {
        guard let file = permanentFile else { return }
        var entries: [Entry] = []
        for (space, users) in all {
            for (user, credential) in users.sorted(by: { $0.key < $1.key }) where credential.persistence == .permanent {
                entries.append(
                    Entry(
                        host: space.host, port: space.port, proto: space.protocol, realm: space.realm,
                        method: space.authenticationMethod.rawValue, user: user, password: credential.password ?? ""))
            }
        }
        let data: Data
        do { data = try JSONEncoder().encode(entries) } catch {
            throw ServerTrustError(.storage, "could not encode the credentials")
        }
        // 0600 from the first byte, written whole or not at all (see PrivateFile).
        if let problem = PrivateFile.write(Array(data), to: file.path)?.description {
            throw ServerTrustError(.storage, "\(problem) (the credential file)")
        }
    }
}
