import Foundation
import PincheckTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats
@testable import PincheckTLS

@Suite("ProbeTarget parsing")
struct TLSProbeTargetTests {
    @Test("HOST, HOST:PORT, [IPV6]:PORT and bare IPv6", arguments: [
        ("example.test", "example.test", UInt16(443)),
        ("example.test:8443", "example.test", 8443),
        ("127.0.0.1:1", "127.0.0.1", 1),
        ("[::1]:4433", "::1", 4433),
        ("[::1]", "::1", 443),
        ("::1", "::1", 443),
        ("  www.example.test:10443 ", "www.example.test", 10443),
        ("Bücher.Example.:8443", "xn--bcher-kva.example", 8443),   // looked up by its A-labels, as browsers do
    ])
    func parses(text: String, host: String, port: UInt16) throws {
        let target = try ProbeTarget(parsing: text)
        #expect(target.host == host)
        #expect(target.port == port)
    }

    @Test("rejects what cannot be a target", arguments: ["", ":443", "example.test:0", "example.test:65536", "example.test:x",
                                                        "[::1", "[::1]x", "a:b:c", "exa mple.test", "http://example.test"])
    func rejects(text: String) {
        #expect(throws: PincheckError.self) { try ProbeTarget(parsing: text) }
    }

    @Test("description brackets IPv6")
    func description() {
        #expect(ProbeTarget(host: "::1", port: 8443).description == "[::1]:8443")
        #expect(ProbeTarget(host: "example.test", port: 443).description == "example.test:443")
    }
}

/// The libssl client against `openssl s_server` and raw sockets on loopback.
@Suite("TLSProbe", .serialized)
struct TLSProbeTests {
    let probe = TLSProbe(timeout: .seconds(2))

    @Test("captures the chain as served, the protocol, cipher, ALPN and a stapled OCSP response")
    func handshake() throws {
        let ocsp = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-ocsp-\(UUID().uuidString).der")
        // A minimal OCSPResponse (status "unauthorized"): s_server only needs parseable DER to staple.
        try Data([0x30, 0x03, 0x0A, 0x01, 0x06]).write(to: ocsp)
        defer { try? FileManager.default.removeItem(at: ocsp) }
        let server = try TLSProbeTestServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"],
                                            extra: ["-alpn", "h2", "-status_file", ocsp.path])
        defer { server.stop() }
        let result = try probe.probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: "www.example.test")
        #expect(result.servedChain == [Fixtures.certificate("rsa-leaf"), Fixtures.certificate("rsa-intermediate")])
        #expect(result.protocolVersion == "TLSv1.3")
        #expect(!result.cipher.isEmpty && result.cipher != "unknown")
        #expect(result.alpn == "h2")
        #expect(result.stapledOCSPResponse == [0x30, 0x03, 0x0A, 0x01, 0x06])
        #expect(result.stapledOCSPStatus == "unauthorized")
        #expect(result.peerAddress == "127.0.0.1")
        #expect(result.serverName == "www.example.test")
        // The probe judges nothing: the evaluator does, on exactly what was served.
        let verdict = try Evaluator(policy: TrustPolicy(anchors: Fixtures.anchors)).evaluate(result.servedChain, host: Fixtures.host, at: Fixtures.time)
        #expect(verdict.isTrusted)
    }

    @Test("TLS 1.2 works too, and no session is resumed between probes")
    func tls12() throws {
        let server = try TLSProbeTestServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"], extra: ["-tls1_2"])
        defer { server.stop() }
        let target = ProbeTarget(host: "127.0.0.1", port: server.port)
        let first = try probe.probe(target, serverName: "www.example.test")
        let second = try probe.probe(target, serverName: "www.example.test")
        #expect(first.protocolVersion == "TLSv1.2")
        #expect(!first.sessionResumed && !second.sessionResumed)
        #expect(second.servedChain.count == 2, "a full handshake again: the certificate is sent every time")
    }

    @Test("an IP literal is never sent as SNI; IPv6 loopback connects")
    func ipv6() throws {
        let server = try TLSProbeTestServer(certificate: "rsa-ip", chain: ["rsa-intermediate"], ipv6: true)
        defer { server.stop() }
        let result = try probe.probe(ProbeTarget(host: "::1", port: server.port), serverName: "::1")
        #expect(result.serverName == nil)
        #expect(result.peerAddress == "::1")
        #expect(result.servedChain.first == Fixtures.certificate("rsa-ip"))
    }

    @Test("an internationalised server name is sent as SNI in A-labels (RFC 6066)")
    func internationalisedSNI() throws {
        // The server refuses any other name with a fatal alert.
        let server = try TLSProbeTestServer(certificate: "rsa-leaf", extra: ["-servername", "xn--bcher-kva.example", "-servername_fatal",
            "-cert2", Fixtures.path("rsa-wrong-host.pem"), "-key2", Fixtures.path("keys/rsa-wrong-host.key")])
        defer { server.stop() }
        let result = try probe.probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: "Bücher.example")
        #expect(result.serverName == "xn--bcher-kva.example")
        #expect(result.servedChain.first == Fixtures.certificate("rsa-wrong-host"), "the server answered for the name it was asked")
    }

    @Test("a fatal TLS alert from the server is tls.alert, naming the alert")
    func alert() throws {
        let server = try TLSProbeTestServer(certificate: "rsa-leaf", extra: ["-servername", "only.example.test", "-servername_fatal",
            "-cert2", Fixtures.path("rsa-wrong-host.pem"), "-key2", Fixtures.path("keys/rsa-wrong-host.key")])
        defer { server.stop() }
        let error = #expect(throws: ProbeError.self) {
            try probe.probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: "www.example.test")
        }
        #expect(error?.code == .tlsAlert)
        #expect(error?.message.contains("unrecognized name") == true)
    }

    @Test("refused, silent and plain-HTTP ports fail with their own codes within the timeout",
          arguments: [(TLSProbeRawServer.Behaviour.refuse, ProbeError.Code.refused),
                      (.silent, .timeout),
                      (.plainHTTP, .notTLS)])
    func failures(behaviour: TLSProbeRawServer.Behaviour, code: ProbeError.Code) throws {
        let server = try TLSProbeRawServer(behaviour)
        defer { server.stop() }
        let started = ContinuousClock.now
        let error = #expect(throws: ProbeError.self) {
            try TLSProbe(timeout: .milliseconds(500)).probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: nil)
        }
        #expect(error?.code == code)
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test("a name that does not resolve is a DNS failure")
    func dns() {
        let error = #expect(throws: ProbeError.self) {
            try probe.probe(ProbeTarget(host: "no-such-host.invalid", port: 443), serverName: nil)
        }
        #expect(error?.code == .dnsFailure)
    }

    @Test("probes run concurrently from many threads without interfering")
    func concurrent() async throws {
        let server = try TLSProbeTestServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let target = ProbeTarget(host: "127.0.0.1", port: server.port)
        let probe = self.probe
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try probe.probe(target, serverName: "www.example.test").servedChain.count } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 2, count: 8))
    }
}

@Suite("local TLS server")
struct LocalTLSServerTests {
    @Test("serves its chain as given, and refuses a key that does not match")
    func servesChain() throws {
        let chain = Fixtures.chain("rsa-deep")
        let key = try String(contentsOfFile: Fixtures.path("keys/rsa-deep-leaf.key"), encoding: .utf8)
        let server = try LocalTLSServer(chain: chain, privateKeyPEM: key)
        defer { server.stop() }
        let result = try TLSProbe(timeout: .seconds(5)).probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: "www.example.test")
        #expect(result.servedChain == chain)
        let otherKey = try String(contentsOfFile: Fixtures.path("keys/rsa-leaf.key"), encoding: .utf8)
        #expect(throws: PincheckError.self) { try LocalTLSServer(chain: chain, privateKeyPEM: otherKey) }
        #expect(throws: PincheckError.self) { try LocalTLSServer(chain: chain, privateKeyPEM: "not a key") }
    }

    @Test("staples its OCSP response to a client that asks, and nothing when it has none")
    func staples() throws {
        let chain = Fixtures.chain("rsa-deep")
        let key = try String(contentsOfFile: Fixtures.path("keys/rsa-deep-leaf.key"), encoding: .utf8)
        let response = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("revocation/ocsp-good.der"))))
        let stapling = try LocalTLSServer(chain: chain, privateKeyPEM: key, stapledOCSPResponse: response)
        defer { stapling.stop() }
        let probed = try TLSProbe(timeout: .seconds(5)).probe(ProbeTarget(host: "127.0.0.1", port: stapling.port), serverName: "www.example.test")
        #expect(probed.stapledOCSPResponse == response)
        let silent = try LocalTLSServer(chain: chain, privateKeyPEM: key)
        defer { silent.stop() }
        #expect(try TLSProbe(timeout: .seconds(5)).probe(ProbeTarget(host: "127.0.0.1", port: silent.port), serverName: "www.example.test")
            .stapledOCSPResponse == nil)
    }

    @Test("serves a second connection while a first one has not finished its handshake")
    func concurrentConnections() throws {
        let chain = Fixtures.chain("rsa-deep")
        let key = try String(contentsOfFile: Fixtures.path("keys/rsa-deep-leaf.key"), encoding: .utf8)
        let server = try LocalTLSServer(chain: chain, privateKeyPEM: key)
        defer { server.stop() }
        // A client that connects and sends nothing: the server waits on it for 30 seconds.
        let idle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(idle >= 0)
        defer { close(idle) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = server.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(idle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        usleep(100_000)  // let the server accept it first
        // While the idle client holds a server that serves one connection at a time.
        let probed = try TLSProbe(timeout: .seconds(4)).probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: "www.example.test")
        #expect(probed.servedChain == chain)
    }

    @Test("a server whose accept thread cannot start throws at once, and its deinit neither waits nor frees twice")
    func noThread() throws {
        let chain = Fixtures.chain("rsa-deep")
        let key = try String(contentsOfFile: Fixtures.path("keys/rsa-deep-leaf.key"), encoding: .utf8)
        let started = ContinuousClock.now
        for _ in 0..<3 {
            let error = #expect(throws: PincheckError.self) {
                _ = try LocalTLSServer(chain: chain, privateKeyPEM: key, startingThread: { _ in false })
            }
            #expect(error?.message.contains("accept thread") == true)
        }
        // The failed servers' deinits ran above; before the fix the first one blocked for ever.
        #expect(ContinuousClock.now - started < .seconds(5))
        // And a server that does start still serves.
        let server = try LocalTLSServer(chain: chain, privateKeyPEM: key)
        defer { server.stop() }
        #expect(try TLSProbe(timeout: .seconds(5)).probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: "www.example.test").servedChain == chain)
    }
}
