import Dispatch
import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats
@testable import PincheckTLS

/// Name resolution within the probe's deadline, through the resolver's test seam: lookups that
/// stall until released, lookups that must never be called, and lookups that answer at once.
@Suite("NameResolver", .serialized)
struct NameResolverTests {
    /// Holds every lookup until `open()`; afterwards lookups pass at once.
    final class Gate: Sendable {
        private let group = DispatchGroup()
        init() { group.enter() }
        func pass() { group.wait() }
        func open() { group.leave() }
    }

    /// Counts lookups that must not happen (they would run on a worker thread, outside the test).
    final class Unreachable: @unchecked Sendable {
        // @unchecked Sendable: `hosts` is only touched under `lock`.
        private let lock = NSLock()
        private var hosts: [String] = []
        var looked: [String] { lock.withLock { hosts } }

        var lookup: NameResolver.Lookup {
            { host, _ in
                self.lock.withLock { self.hosts.append(host) }
                return .failure(ProbeError(.dnsFailure, "looked up \(host)"))
            }
        }
    }

    /// A lookup that waits for `gate`, then answers 127.0.0.1.
    static func gated(_ gate: Gate) -> NameResolver.Lookup {
        { _, port in
            gate.pass()
            return .success(NameResolver.numeric("127.0.0.1", port: port) ?? [])
        }
    }

    @Test("IP literals are used as they are, without a lookup", arguments: ["127.0.0.1", "::1"])
    func numeric(host: String) throws {
        let unreachable = Unreachable()
        let resolver = NameResolver(lookup: unreachable.lookup)
        let addresses = try resolver.resolve(host, port: 443, deadline: .now + .seconds(1))
        #expect(addresses.map(\.numericHost) == [host])
        #expect(unreachable.looked.isEmpty)
    }

    @Test("a probe of an IP literal connects without a lookup")
    func numericProbe() throws {
        let server = try TLSProbeTestServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let unreachable = Unreachable()
        var probe = TLSProbe(timeout: .seconds(5))
        probe.resolver = NameResolver(lookup: unreachable.lookup)
        let result = try probe.probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: "www.example.test")
        #expect(result.peerAddress == "127.0.0.1")
        #expect(unreachable.looked.isEmpty)
    }

    @Test("names under .invalid fail at once, without a lookup (RFC 6761)",
          arguments: ["no-such-host.invalid", "INVALID", "a.b.Invalid."])
    func invalid(host: String) {
        let unreachable = Unreachable()
        let resolver = NameResolver(lookup: unreachable.lookup)
        let started = ContinuousClock.now
        let error = #expect(throws: ProbeError.self) { try resolver.resolve(host, port: 443, deadline: .now + .seconds(5)) }
        #expect(error?.code == .dnsFailure)
        #expect(unreachable.looked.isEmpty)
        #expect(ContinuousClock.now - started < .milliseconds(500))
    }

    @Test("a name is looked up on a worker, and the probe connects to what it found")
    func lookedUp() throws {
        let server = try TLSProbeTestServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let gate = Gate()
        gate.open()
        var probe = TLSProbe(timeout: .seconds(5))
        probe.resolver = NameResolver(lookup: Self.gated(gate))
        let result = try probe.probe(ProbeTarget(host: "www.example.test", port: server.port), serverName: "www.example.test")
        #expect(result.peerAddress == "127.0.0.1")
        #expect(result.serverName == "www.example.test")
    }

    @Test("a lookup still running at the deadline is abandoned: network.dns-failure at the deadline, not a hang")
    func stalled() throws {
        let gate = Gate()
        defer { gate.open() }
        var probe = TLSProbe(timeout: .milliseconds(300))
        probe.resolver = NameResolver(lookup: Self.gated(gate))
        let started = ContinuousClock.now
        let error = #expect(throws: ProbeError.self) {
            try probe.probe(ProbeTarget(host: "slow.example.test", port: 443), serverName: nil)
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.code == .dnsFailure)
        #expect(error?.message.contains("no answer within the timeout") == true)
        #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(2))
    }

    @Test("an abandoned lookup that answers later is dropped, and its slot comes back")
    func abandonedThenFinished() throws {
        let gate = Gate()
        let resolver = NameResolver(maximumLookups: 1, lookup: Self.gated(gate))
        #expect(throws: ProbeError.self) { try resolver.resolve("slow.example.test", port: 443, deadline: .now + .milliseconds(100)) }
        // The only slot is still held by the abandoned worker.
        let busy = #expect(throws: ProbeError.self) { try resolver.resolve("other.example.test", port: 443, deadline: .now + .milliseconds(100)) }
        #expect(busy?.code == .dnsFailure)
        #expect(busy?.message.contains("still running") == true)
        // Released, the abandoned worker answers nobody, frees its slot, and the next lookup succeeds.
        gate.open()
        let addresses = try resolver.resolve("fast.example.test", port: 8443, deadline: .now + .seconds(5))
        #expect(addresses.map(\.numericHost) == ["127.0.0.1"])
    }

    @Test("the lookup's own failure is passed on as it is")
    func lookupFailure() {
        let resolver = NameResolver { host, _ in .failure(ProbeError(.dnsFailure, "cannot resolve \"\(host)\": Name or service not known")) }
        let error = #expect(throws: ProbeError.self) { try resolver.resolve("gone.example.test", port: 443, deadline: .now + .seconds(5)) }
        #expect(error?.code == .dnsFailure)
        #expect(error?.message == "cannot resolve \"gone.example.test\": Name or service not known")
    }

    @Test("the system resolver answers localhost from the hosts file through the worker")
    func localhost() throws {
        let addresses = try NameResolver.system.resolve("localhost", port: 443, deadline: .now + .seconds(5))
        #expect(!addresses.isEmpty)
        #expect(addresses.allSatisfy { ["127.0.0.1", "::1"].contains($0.numericHost) })
    }
}
