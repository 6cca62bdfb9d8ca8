import Foundation
import ServerTrust
import Testing

@Suite("Credential storage")
struct CredentialStorageTests {
    static let space = ProtectionSpace(host: "api.example.test", port: 443, realm: "api", authenticationMethod: .httpBasic)

    static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-credentials-\(UUID().uuidString).json")
    }

    @Test("each persistence goes where it should", arguments: Persistence.allCases)
    func persistence(_ persistence: Persistence) throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let storage = try CredentialStorage(permanentFile: file)
        try storage.set(Credential(user: "alice", password: "hunter2-\(persistence.rawValue)", persistence: persistence), for: Self.space)

        #expect((storage.credentials(for: Self.space)["alice"] != nil) == (persistence != .none))
        #expect(FileManager.default.fileExists(atPath: file.path) == (persistence == .permanent))
        let reopened = try CredentialStorage(permanentFile: file)
        #expect((reopened.credentials(for: Self.space)["alice"]?.password == "hunter2-2") == (persistence == .permanent))
        if persistence == .permanent {
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test("permanent storage needs a file the caller named")
    func noFile() throws {
        let storage = try CredentialStorage()
        #expect(throws: ServerTrustError.self) {
            try storage.set(Credential(user: "a", password: "b", persistence: .permanent), for: Self.space)
        }
    }

    @Test("removing a permanent credential rewrites the file")
    func remove() throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let storage = try CredentialStorage(permanentFile: file)
        try storage.set(Credential(user: "a", password: "b", persistence: .permanent), for: Self.space)
        try storage.remove(user: "a", for: Self.space)
        #expect(try CredentialStorage(permanentFile: file).credentials(for: Self.space).isEmpty)
    }

    @Test("descriptions never show the secret")
    func redaction() {
        let credential = Credential(user: "alice", password: "hunter2", persistence: .permanent)
        let identity = Credential(certificates: [PKI.leaf], privateKey: PrivateKeyMaterial(bytes: Array("KEYBYTES".utf8)), persistence: .none)
        for text in ["\(credential)", String(reflecting: credential), "\(identity)", String(reflecting: identity)] {
            #expect(!text.contains("hunter2") && !text.contains("KEYBYTES") && !text.contains("75, 69, 89"))
        }
        #expect("\(credential)".contains("alice"))
    }

    @Test("a symbolic link planted at the old temporary name is not followed, and no temporary file is left")
    func plantedLink() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("credentials.json")
        let victim = folder.appendingPathComponent("victim.txt")
        try "do not overwrite".write(to: victim, atomically: true, encoding: .utf8)
        // The name the old code wrote through (FILE.tmp-PID), planted as a link to the victim.
        try FileManager.default.createSymbolicLink(atPath: file.path + ".tmp-\(getpid())", withDestinationPath: victim.path)
        let storage = try CredentialStorage(permanentFile: file)
        try storage.set(Credential(user: "alice", password: "hunter2", persistence: .permanent), for: Self.space)
        #expect(try String(contentsOf: victim, encoding: .utf8) == "do not overwrite")
        #expect(try CredentialStorage(permanentFile: file).credentials(for: Self.space)["alice"]?.password == "hunter2")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp-") && $0 != "credentials.json.tmp-\(getpid())" }
        #expect(left.isEmpty, "\(left)")
    }
}
