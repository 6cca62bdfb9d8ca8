import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Signed pin-set updates: accepted only with a good signature, a greater serial and a future
/// expiry; stored for the next start; expired ones fall back to the compiled-in pins.
@Suite("Signed pin-set updates", .serialized)
struct PinSetUpdateTests {
    static let good = Fixtures.referencePins["rsa-intermediate"]!, attacker = Fixtures.referencePins["attacker-root"]!
    static let attackerLeaf = Fixtures.referencePins["attacker-leaf"]!
    static let time = Fixtures.time   // 2030-06-01

    /// The compiled-in configuration pins www.example.test to keys the served chain does not have.
    static func compiledIn() throws -> TrustManager {
        try Configuration.decode(Data(configuration(pins: [attackerLeaf, attacker]).utf8), baseDirectory: Fixtures.root.path,
                                 publicSuffixes: Fixtures.psl).trustManager
    }

    static func configuration(pins: [String]) -> String {
        #"{ "version": 1, "anchors": ["rsa-root.pem"], "hosts": [ { "pattern": "www.example.test", "pins": [\#(pins.map { "\"\($0)\"" }.joined(separator: ", "))] } ] }"#
    }

    static func document(serial: Int, expires: String = "2031-01-01T00:00:00Z", pins: [String] = [good, attacker]) -> [UInt8] {
        Array(#"{ "serial": \#(serial), "expires": "\#(expires)", "configuration": \#(configuration(pins: pins)) }"#.utf8)
    }

    typealias Signer = PinSetSigner

    static func manager(_ signer: Signer, storage: String? = nil, events: (@Sendable (UpdatableTrustManager.Event) -> Void)? = nil) throws -> UpdatableTrustManager {
        UpdatableTrustManager(compiledIn: try compiledIn(), keys: [signer.key], storageDirectory: storage, baseDirectory: Fixtures.root.path,
                              at: time, events: events)
    }

    static func trusted(_ manager: UpdatableTrustManager, at time: Date = time) throws -> Bool {
        try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: time).allowsConnection
    }

    @Test("a signed update with a greater serial is accepted and its pins are in force at once")
    func accepted() throws {
        let signer = try Signer()
        let manager = try Self.manager(signer)
        #expect(try !Self.trusted(manager), "the compiled-in pins refuse the chain")
        let document = Self.document(serial: 1)
        #expect(try manager.apply(document: document, signature: signer.sign(document), at: Self.time) == 1)
        #expect(manager.serial == 1)
        #expect(try Self.trusted(manager))
        // The signature as pincheck sign writes it (base64 text) works too.
        let next = Self.document(serial: 2)
        try manager.apply(document: next, signature: Array((Base64.encode(try signer.sign(next)) + "\n").utf8), at: Self.time)
        #expect(manager.serial == 2)
    }

    @Test("refusals, each with its code, leave the pins in force unchanged")
    func refusals() throws {
        let signer = try Signer(), stranger = try Signer()
        let manager = try Self.manager(signer)
        let document = Self.document(serial: 5)
        try manager.apply(document: document, signature: signer.sign(document), at: Self.time)
        func code(_ document: [UInt8], _ signature: [UInt8]) -> PinSetUpdateError.Code? {
            do { try manager.apply(document: document, signature: signature, at: Self.time); return nil } catch { return error.code }
        }
        var tampered = Self.document(serial: 6)
        let signature = try signer.sign(tampered)
        tampered[tampered.count - 3] ^= 0x01
        #expect(code(tampered, signature) == .badSignature)
        #expect(code(Self.document(serial: 6), try stranger.sign(Self.document(serial: 6))) == .badSignature, "another key's signature")
        #expect(code(document, try signer.sign(document)) == .rollback, "the same update replayed")
        #expect(code(Self.document(serial: 4), try signer.sign(Self.document(serial: 4))) == .rollback, "an older update")
        let expired = Self.document(serial: 7, expires: "2030-05-31T00:00:00Z")
        #expect(code(expired, try signer.sign(expired)) == .expired)
        let notJSON = Array("serial 8".utf8)
        #expect(code(notJSON, try signer.sign(notJSON)) == .malformed)
        for envelope in [#"{ "serial": "8", "expires": "2031-01-01", "configuration": {} }"#,
                         #"{ "serial": 8, "expires": "2031-01-01", "configuration": {}, "removesPins": "yes" }"#,
                         #"{ "serial": 8, "expires": "2031-01-01" }"#] {
            let bytes = Array(envelope.utf8)
            #expect(code(bytes, try signer.sign(bytes)) == .malformed, "\(envelope)")
        }
        let badPins = Self.document(serial: 8, pins: ["sha256/not-a-pin"])
        #expect(code(badPins, try signer.sign(badPins)) == .invalidConfiguration)
        let weakening = Array(#"{ "serial": 9, "expires": "2031-01-01", "configuration": { "version": 1, "hosts": [ { "pattern": "www.example.test", "mode": "none", "allowInvalidCertificates": true } ] } }"#.utf8)
        #expect(code(weakening, try signer.sign(weakening)) == .weakensValidation, "a stolen key cannot switch validation off")
        #expect(manager.serial == 5)
        #expect(try Self.trusted(manager), "update 5's pins are still in force")
    }

    @Test("when the update in force expires, evaluations fall back to the compiled-in pins, never to unpinned")
    func expiryFallsBack() throws {
        let signer = try Signer()
        let manager = try Self.manager(signer)
        let document = Self.document(serial: 1, expires: "2030-06-02T00:00:00Z")
        try manager.apply(document: document, signature: signer.sign(document), at: Self.time)
        #expect(try Self.trusted(manager, at: Self.time))
        let after = try manager.evaluate(Fixtures.chain("rsa-good"), host: "www.example.test", at: Self.time.addingTimeInterval(2 * 86_400))
        #expect(!after.allowsConnection)
        #expect(after.failures.map(\.code) == [.pinMismatch], "the compiled-in pins judge it")
    }

    @Test("an accepted update is stored 0600 and applied again at the next start; a rollback stays refused; a tampered store is ignored")
    func persistence() throws {
        let signer = try Signer()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-updates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try Self.manager(signer, storage: folder.path)
        let document = Self.document(serial: 3)
        try first.apply(document: document, signature: signer.sign(document), at: Self.time)
        let stored = folder.appendingPathComponent(UpdatableTrustManager.storedName).path
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: stored)[.posixPermissions] as? Int)
        #expect(mode == 0o600)

        let restarted = try Self.manager(signer, storage: folder.path)
        #expect(restarted.serial == 3)
        #expect(try Self.trusted(restarted))
        let older = Self.document(serial: 2)
        #expect(throws: PinSetUpdateError.self) { try restarted.apply(document: older, signature: signer.sign(older), at: Self.time) }

        var bytes = try Data(contentsOf: URL(fileURLWithPath: stored))
        bytes[bytes.count - 5] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: stored))
        let ignored = Box()
        let tampered = try Self.manager(signer, storage: folder.path, events: { event in
            if case .storedUpdateIgnored(let error) = event { ignored.set(error.code) }
        })
        #expect(tampered.serial == 0)
        #expect(ignored.get() == .badSignature)
        #expect(try !Self.trusted(tampered), "the compiled-in pins, not unpinned")
    }

    @Test("two processes sharing storage: one cannot roll back what the other stored; an unreadable store is said")
    func sharedStorage() throws {
        let signer = try Signer()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-updates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let a = try Self.manager(signer, storage: folder.path)
        let ten = Self.document(serial: 10)
        try a.apply(document: ten, signature: signer.sign(ten), at: Self.time)
        let b = try Self.manager(signer, storage: folder.path)
        let fifty = Self.document(serial: 50)
        try b.apply(document: fifty, signature: signer.sign(fifty), at: Self.time)
        // A still has 10 in memory; 11 is newer than that but older than what is stored.
        let eleven = Self.document(serial: 11)
        let refused = #expect(throws: PinSetUpdateError.self) { try a.apply(document: eleven, signature: signer.sign(eleven), at: Self.time) }
        #expect(refused?.code == .rollback)
        #expect(refused?.message.contains("stored by another process") == true, "\(String(describing: refused))")
        #expect(try Self.manager(signer, storage: folder.path).serial == 50, "after a restart, 50 is in force")

        // A stored update that cannot be read is not dropped in silence.
        let stored = folder.appendingPathComponent(UpdatableTrustManager.storedName).path
        try FileManager.default.removeItem(atPath: stored)
        try FileManager.default.createDirectory(atPath: stored, withIntermediateDirectories: false)
        let ignored = Box()
        _ = try Self.manager(signer, storage: folder.path, events: { event in
            if case .storedUpdateIgnored(let error) = event { ignored.set(error.code) }
        })
        #expect(ignored.get() == .storage)
    }

    @Test("updates swapped under concurrent evaluations: every verdict is wholly one configuration's")
    func concurrentSwap() async throws {
        let signer = try Signer()
        let manager = try Self.manager(signer)
        // Odd serials pin the served intermediate (trusted); even ones pin keys it does not have.
        let updates = try (1...40).map { serial in
            let document = Self.document(serial: serial, pins: serial % 2 == 1 ? [Self.good, Self.attacker] : [Self.attackerLeaf, Self.attacker])
            return (document, try signer.sign(document))
        }
        let chain = Fixtures.chain("rsa-good")
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for (document, signature) in updates { try manager.apply(document: document, signature: signature, at: Self.time) }
                return 0
            }
            for _ in 0..<3 {
                group.addTask {
                    var inconsistent = 0
                    for _ in 0..<300 {
                        let verdict = try manager.evaluate(chain, host: "www.example.test", at: Self.time)
                        let pins = verdict.hostPolicy?.pinSets.flatMap { set -> [String] in
                            if case .publicKeys(let pinned) = set.pinning { return pinned.pins.map(\.description) } else { return [] }
                        } ?? []
                        let pinsGood = pins.contains(Self.good)
                        if verdict.allowsConnection != pinsGood || pins.count != 2 { inconsistent += 1 }
                    }
                    return inconsistent
                }
            }
            var total = 0
            for try await inconsistent in group { total += inconsistent }
            #expect(total == 0)
        }
        #expect(manager.serial == 40)
    }
}

/// A value set from a @Sendable closure.
private final class Box: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: PinSetUpdateError.Code?
    func set(_ code: PinSetUpdateError.Code) { lock.withLock { value = code } }
    func get() -> PinSetUpdateError.Code? { lock.withLock { value } }
}
