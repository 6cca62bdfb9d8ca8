import Foundation
import NIOCore
import NIOPosix
import PincheckTestSupport
import ServerTrust
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats
import TrustEvaluatorNIO

/// Real handshakes judged by an ``UpdatableTrustManager`` while signed updates swap its pins.
@Suite("NIO handshakes under pin-set updates", .serialized)
struct UpdatableHandshakeTests {
    static let good = TestPKI.certificate("rsa-intermediate").publicKeyPin.description
    static let attacker = TestPKI.certificate("attacker-root").publicKeyPin.description
    static let attackerLeaf = TestPKI.certificate("attacker-leaf").publicKeyPin.description

    static func configuration(_ pins: [String]) -> String {
        #"{ "version": 1, "anchors": ["rsa-root.pem"], "hosts": [ { "pattern": "www.example.test", "pins": [\#(pins.map { "\"\($0)\"" }.joined(separator: ", "))] } ] }"#
    }

    @Test("handshakes in flight while updates land: each is judged wholly by one update's pins")
    func concurrentHandshakes() async throws {
        let pair = try Ed25519.generate()
        let key = try PinSetVerificationKey(rawRepresentation: pair.publicKey)
        let compiledIn = try Configuration.decode(Data(Self.configuration([Self.attackerLeaf, Self.attacker]).utf8),
                                                  baseDirectory: TestCertificates.root.path).trustManager
        let manager = UpdatableTrustManager(compiledIn: compiledIn, keys: [key], baseDirectory: TestCertificates.root.path, at: TestPKI.time)
        let verifier = PincheckNIOVerifier(updatableTrustManager: manager, now: { TestPKI.time })
        let updates = try (1...20).map { serial in
            let pins = serial % 2 == 1 ? [Self.good, Self.attacker] : [Self.attackerLeaf, Self.attacker]
            let document = Array(#"{ "serial": \#(serial), "expires": "2031-01-01", "configuration": \#(Self.configuration(pins)) }"#.utf8)
            return (document, try Ed25519.sign(document, privateKeyPEM: Array(pair.privateKeyPEM.utf8)).signature)
        }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let server = try await TLSEchoServer.start(group: group, leaf: "rsa-leaf", key: "rsa-leaf")
        let decisions = Decisions()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for (document, signature) in updates {
                    try manager.apply(document: document, signature: signature, at: TestPKI.time)
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            for _ in 0..<2 {
                tasks.addTask {
                    for _ in 0..<15 {
                        _ = await capture { try await exchange(group: group, port: server.port, host: "www.example.test", verifier: verifier, decisions: decisions) }
                    }
                }
            }
            try await tasks.waitForAll()
        }
        try await server.stop()
        try await group.shutdownGracefully()

        #expect(decisions.all.count == 30)
        for decision in decisions.all {
            let verdict = try #require(decision.verdict)
            let pins = verdict.hostPolicy?.pinSets.flatMap { set -> [String] in
                if case .publicKeys(let pinned) = set.pinning { return pinned.pins.map(\.description) } else { return [] }
            } ?? []
            #expect(pins.count == 2)
            #expect(decision.allowsConnection == pins.contains(Self.good), "\(pins) → \(decision.disposition)")
        }
        #expect(manager.serial == 20)
    }
}
