import Foundation
import PincheckTestSupport
@testable import PincheckOpenSSL
import Testing
@testable import TrustEvaluatorCore

/// The bounds on finding a leaf's issuers at caIssuers URLs (AsyncHTTPClient's road): fetches per
/// leaf, fetches in flight, one fetch per URL however many wait, and nothing kept until told.
/// The certificates are made here, each naming its issuer at http://aia.pincheck.test/NAME.cer.
@Suite("caIssuers lookup bounds")
struct IssuerLookupTests {
    /// root → ca-1 → … → ca-`depth` → leaf, each below the root naming its issuer's URL.
    struct Ladder {
        let pki: MadePKI
        let root: MadePKI.Held
        let cas: [MadePKI.Held]
        let leaf: MadePKI.Held
        /// What each URL serves.
        let served: [String: [UInt8]]

        init(depth: Int) throws {
            pki = try MadePKI()
            root = try pki.make("Ladder Root", ca: 9)
            var served: [String: [UInt8]] = ["http://aia.pincheck.test/root.cer": root.certificate.derBytes]
            var issuer = root
            var issuerURL = "http://aia.pincheck.test/root.cer"
            var cas: [MadePKI.Held] = []
            for step in 1...depth {
                let ca = try pki.make("Ladder CA \(step)", ca: 9, signedBy: issuer, extensions: ["authorityInfoAccess=caIssuers;URI:\(issuerURL)"])
                issuerURL = "http://aia.pincheck.test/ca-\(step).cer"
                served[issuerURL] = ca.certificate.derBytes
                cas.append(ca)
                issuer = ca
            }
            leaf = try pki.make("leaf.example.test", dnsNames: ["leaf.example.test"], signedBy: issuer,
                                extensions: ["authorityInfoAccess=caIssuers;URI:\(issuerURL)"])
            self.cas = cas
            self.served = served
        }
    }

    /// A transport serving `served`, counting each URL's fetches.
    final class Transport: Sendable {
        let served: [String: [UInt8]]
        let counts = Locked([String: Int]())
        let gate: Latch?
        init(_ served: [String: [UInt8]], gate: Latch? = nil) {
            self.served = served
            self.gate = gate
        }
        var total: Int { counts.withLock { $0.values.reduce(0, +) } }
        func fetch(_ url: String) -> Result<[UInt8], HTTPFetch.Failure> {
            counts.withLock { $0[url, default: 0] += 1 }
            if let gate { _ = gate.wait(timeout: .seconds(30)) }
            return served[url].map { .success($0) } ?? .failure(.unavailable("404"))
        }
    }

    static func lookup(_ transport: Transport, inFlight: Int = 4) -> IssuerLookup {
        var limits = RevocationListFetcher.Limits()
        limits.maximumFetchesInFlight = inFlight
        // Longer than any test takes under ThreadSanitizer (a 10 s default expired mid-test there):
        // a test that expects a remembered failure must not see it forgotten.
        limits.failureMemory = .seconds(600)
        return RevocationListFetcher(limits: limits, cacheDirectory: nil, transport: { transport.fetch($0) }).issuers
    }

    @Test("two certificates above the leaf: two fetches, lowest first; fetched again until kept, then not at all")
    func climbsAndKeeps() async throws {
        let ladder = try Ladder(depth: 2)
        let transport = Transport(ladder.served)
        let lookup = Self.lookup(transport)
        let found = try await lookup.certificates(above: ladder.leaf.certificate, anchors: [ladder.root.certificate], intermediates: []).get()
        #expect(found.map(\.certificate) == [ladder.cas[1].certificate, ladder.cas[0].certificate])
        #expect(transport.total == 2)
        _ = try await lookup.certificates(above: ladder.leaf.certificate, anchors: [ladder.root.certificate], intermediates: []).get()
        #expect(transport.total == 4, "nothing is kept before a path through it verified")
        lookup.keep(found)
        let again = try await lookup.certificates(above: ladder.leaf.certificate, anchors: [ladder.root.certificate], intermediates: []).get()
        #expect(again.map(\.certificate) == found.map(\.certificate))
        #expect(transport.total == 4)
        // An intermediate the policy holds is not fetched.
        let partly = try await Self.lookup(transport).certificates(above: ladder.leaf.certificate, anchors: [ladder.root.certificate],
                                                                   intermediates: [ladder.cas[1].certificate]).get()
        #expect(partly.map(\.certificate) == [ladder.cas[0].certificate])
        #expect(transport.total == 5)
    }

    @Test("no anchor within maximumFetchesPerLeaf fetches: refused after exactly that many")
    func fetchesPerLeafBounded() async throws {
        let ladder = try Ladder(depth: IssuerLookup.maximumFetchesPerLeaf + 1)
        let transport = Transport(ladder.served)
        let result = await Self.lookup(transport).certificates(above: ladder.leaf.certificate, anchors: [ladder.root.certificate], intermediates: [])
        guard case .failure(let problem) = result else {
            Issue.record("expected a refusal, got \(result)")
            return
        }
        #expect(problem.text.contains("within \(IssuerLookup.maximumFetchesPerLeaf) caIssuers fetches"), "\(problem.text)")
        #expect(transport.total == IssuerLookup.maximumFetchesPerLeaf)
    }

    @Test("fetches in flight are bounded, and a lookup past them waits for a slot; connections waiting for the same URL share one fetch")
    func inFlightBounded() async throws {
        let first = try Ladder(depth: 1)
        let second = try Ladder(depth: 1)
        let gate = Latch()
        // Both ladders name the same URL for their CA; the second's is served under another name.
        var served = first.served
        let otherURL = "http://aia.pincheck.test/other.cer"
        served[otherURL] = second.cas[0].certificate.derBytes
        let transport = Transport(served, gate: gate)
        let lookup = Self.lookup(transport, inFlight: 1)
        let other = try first.pki.make("other.example.test", signedBy: second.cas[0], extensions: ["authorityInfoAccess=caIssuers;URI:\(otherURL)"])
        let (leaf, root) = (first.leaf.certificate, first.root.certificate)
        async let a = lookup.certificates(above: leaf, anchors: [root], intermediates: [])
        async let b = lookup.certificates(above: leaf, anchors: [root], intermediates: [])
        let url = "http://aia.pincheck.test/ca-1.cer"
        for _ in 0..<2000 where lookup.waiters(for: url) < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(lookup.waiters(for: url) == 2)
        async let c = lookup.certificates(above: other.certificate, anchors: [second.root.certificate], intermediates: [])
        for _ in 0..<2000 where lookup.queuedLookups < 1 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(lookup.queuedLookups == 1, "the third lookup waits for the one slot")
        #expect(transport.counts.withLock { $0 } == [url: 1], "nothing else fetched while the slot is taken")
        gate.signal()
        let (ra, rb, rc) = await (a, b, c)
        #expect(try ra.get().map(\.certificate) == [first.cas[0].certificate])
        #expect(try rb.get().map(\.certificate) == [first.cas[0].certificate])
        #expect(try rc.get().map(\.certificate) == [second.cas[0].certificate], "the queued lookup ran once the slot was free")
        #expect(transport.counts.withLock { $0 } == [url: 1, otherURL: 1])
    }

    /// A leaf forged under the ladder's CA: the CA's name and key identifier, another key's signature.
    static func forgedLeaf(under ladder: Ladder, url: String) throws -> Certificate {
        let identifier = try #require(ladder.cas[0].certificate.handle.facts.subjectKeyIdentifier)
        let impostor = try ladder.pki.make("Ladder CA 1", ca: 0, signedBy: ladder.root,
                                           extensions: ["subjectKeyIdentifier=" + identifier.map { String(format: "%02X", $0) }.joined(separator: ":")])
        return try ladder.pki.make("victim.example.test", dnsNames: ["victim.example.test"], signedBy: impostor,
                                   extensions: ["authorityInfoAccess=caIssuers;URI:\(url)"]).certificate
    }

    @Test("a hostile leaf naming a CA's caIssuers URL blinds nobody: the CA's leaves still find their issuer, a kept issuer stays, and the hostile leaf costs no fetch the second time")
    func hostileLeafCannotBlind() async throws {
        let ladder = try Ladder(depth: 1)
        let url = "http://aia.pincheck.test/ca-1.cer"
        let forged = try Self.forgedLeaf(under: ladder, url: url)
        #expect(forged.issuer == ladder.leaf.certificate.issuer)
        #expect(forged.handle.facts.authorityKeyIdentifier == ladder.leaf.certificate.handle.facts.authorityKeyIdentifier)
        // Another hostile leaf names the URL for an issuer it does not serve at all.
        let stranger = try ladder.pki.make("Stranger CA", ca: 0, signedBy: ladder.root)
        let misnamed = try ladder.pki.make("misnamed.example.test", signedBy: stranger, extensions: ["authorityInfoAccess=caIssuers;URI:\(url)"]).certificate
        let transport = Transport(ladder.served)
        let lookup = Self.lookup(transport)
        let anchors = [ladder.root.certificate]

        for hostile in [forged, misnamed] {
            guard case .failure = await lookup.certificates(above: hostile, anchors: anchors, intermediates: []) else {
                Issue.record("a hostile leaf found an issuer")
                return
            }
        }
        #expect(transport.total == 2)
        // The CA's own leaf: its issuer is fetched (no failure of another leaf stands in its way) and kept.
        let found = try await lookup.certificates(above: ladder.leaf.certificate, anchors: anchors, intermediates: []).get()
        #expect(found.map(\.certificate) == [ladder.cas[0].certificate])
        #expect(transport.total == 3)
        lookup.keep(found)
        // The hostile leaves again: remembered as failed, no fetch; and the kept issuer is not dropped for them.
        for hostile in [forged, misnamed] {
            guard case .failure(let problem) = await lookup.certificates(above: hostile, anchors: anchors, intermediates: []) else {
                Issue.record("a hostile leaf found an issuer the second time")
                return
            }
            #expect(problem.text.contains("not tried again yet"), "\(problem.text)")
        }
        #expect(transport.total == 3)
        #expect(try await lookup.certificates(above: ladder.leaf.certificate, anchors: anchors, intermediates: []).get().map(\.certificate)
                == [ladder.cas[0].certificate])
        #expect(transport.total == 3, "the kept issuer answered")
    }

    @Test("every caIssuers URL of a certificate is tried, in order, until one serves its issuer")
    func everyURLTried() async throws {
        let ladder = try Ladder(depth: 1)
        let dead = "http://dead.pincheck.test/ca.cer", good = "http://aia.pincheck.test/ca-1.cer"
        let leaf = try ladder.pki.make("two.example.test", dnsNames: ["two.example.test"], signedBy: ladder.cas[0],
                                       extensions: ["authorityInfoAccess=caIssuers;URI:\(dead),caIssuers;URI:\(good)"]).certificate
        #expect(leaf.handle.caIssuersURLs == [dead, good])
        let transport = Transport(ladder.served)
        let found = try await Self.lookup(transport).certificates(above: leaf, anchors: [ladder.root.certificate], intermediates: []).get()
        #expect(found.map(\.url) == [good])
        #expect(transport.counts.withLock { $0 } == [dead: 1, good: 1])
    }

    @Test("a caIssuers server that trickles is cut at the fetcher's timeout, and the failure is remembered",
          .timeLimit(.minutes(1)))
    func trickleIsCut() async throws {
        let ladder = try Ladder(depth: 1)
        // One byte every half second: the certificate would take minutes to arrive.
        let server = try TestCRLServer(["/ca-1.cer": .trickle(ladder.cas[0].certificate.derBytes, chunk: 1, pause: 0.5)])
        defer { server.stop() }
        var limits = RevocationListFetcher.Limits(maximumBytes: 1 << 20, timeout: .seconds(1))
        limits.failureMemory = .seconds(600)
        let lookup = RevocationListFetcher(limits: limits, proxy: .url(server.proxyURL)).issuers
        for attempt in 1...2 {
            let found = await lookup.certificates(above: ladder.leaf.certificate, anchors: [ladder.root.certificate], intermediates: [])
            guard case .failure(let problem) = found else {
                Issue.record("attempt \(attempt): a trickling server's certificate was taken")
                return
            }
            #expect(problem.text.contains("took too long"), "\(problem.text)")
            // The second time the leaf's own failure answers (or the URL's, for another leaf).
            #expect(attempt == 1 || problem.text.contains("again yet"), "\(problem.text)")
        }
        #expect(server.requests(for: "/ca-1.cer") == 1, "the second lookup meets the remembered failure")
    }

    @Test("a CA that replaces what its URL serves: the new intermediate is fetched beside the kept one, and the kept one still answers its own leaves")
    func keptMismatchIsFetchedAgain() async throws {
        // Two PKIs with the same names and URLs: the CA replaced the intermediate it publishes.
        let before = try Ladder(depth: 1), after = try Ladder(depth: 1)
        let serving = Locked(before.served)
        let fetches = Locked(0)
        let lookup = RevocationListFetcher(limits: .init(), cacheDirectory: nil, transport: { url in
            fetches.withLock { $0 += 1 }
            return serving.withLock { $0[url] }.map { .success($0) } ?? .failure(.unavailable("404"))
        }).issuers
        let found = try await lookup.certificates(above: before.leaf.certificate, anchors: [before.root.certificate], intermediates: []).get()
        lookup.keep(found)
        serving.withLock { $0 = after.served }
        let again = try await lookup.certificates(above: after.leaf.certificate, anchors: [after.root.certificate], intermediates: []).get()
        #expect(again.map(\.certificate) == [after.cas[0].certificate])
        #expect(fetches.withLock { $0 } == 2)
        lookup.keep(again)
        // Both kept under the one URL: each leaf finds its own, with no fetch.
        #expect(try await lookup.certificates(above: before.leaf.certificate, anchors: [before.root.certificate], intermediates: []).get()
                .map(\.certificate) == [before.cas[0].certificate])
        #expect(try await lookup.certificates(above: after.leaf.certificate, anchors: [after.root.certificate], intermediates: []).get()
                .map(\.certificate) == [after.cas[0].certificate])
        #expect(fetches.withLock { $0 } == 2)
    }

    @Test("destinations, whatever the route: through a proxy, loopback and metadata names and IP literals in any spelling are refused before the proxy sees them; private networks go unless refused")
    func destinationsThroughProxy() throws {
        let proxy = try TestCRLServer(["/ca.cer": .bytes([0x30, 0x03, 0x02, 0x01, 0x01])])
        defer { proxy.stop() }
        func get(_ url: String, _ destinations: HTTPFetch.Destinations = .init()) -> Result<[UInt8], HTTPFetch.Failure> {
            HTTPFetch.get(url, maximumBytes: 1024, timeout: .seconds(5), proxy: proxy.proxyURL, destinations: destinations)
        }
        for host in ["localhost", "LOCALHOST.", "api.localhost", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "127.0.0.1", "[::1]",
                     "metadata.google.internal", "metadata.goog", "169.254.169.254", "2852039166", "0", "[::ffff:127.0.0.1]"] {
            guard case .failure(.refused(let why)) = get("http://\(host)/ca.cer") else {
                Issue.record("\(host) was handed to the proxy")
                continue
            }
            #expect(!why.isEmpty)
        }
        #expect(proxy.totalRequests == 0, "the proxy saw none of them")
        // The refusal names the knob that allows loopback.
        if case .failure(.refused(let why)) = get("http://localhost/ca.cer") { #expect(why.contains("Limits.allowsLoopback"), "\(why)") }
        // Private networks: fetched (through the proxy) by default, refused when the operator says so.
        guard case .success = get("http://10.1.2.3/ca.cer") else {
            Issue.record("a private address was refused by default")
            return
        }
        #expect(proxy.totalRequests == 1)
        for host in ["10.1.2.3", "172.16.0.9", "192.168.1.1", "100.64.0.1", "[fd00::1]", "012.1.2.3"] {
            guard case .failure(.refused(let why)) = get("http://\(host)/ca.cer", .init(privateNetworks: false)) else {
                Issue.record("\(host) was fetched with private networks refused")
                continue
            }
            #expect(why.contains("--refuse-private-fetches"), "\(why)")
        }
        #expect(proxy.totalRequests == 1)
        // Allowed loopback names go through.
        guard case .success = get("http://localhost/ca.cer", .init(loopback: true)) else {
            Issue.record("localhost was refused with loopback allowed")
            return
        }
        #expect(proxy.totalRequests == 2)
    }

    @Test("a public-facing lookup (the system's anchors) fetches no caIssuers URL of an unverified leaf from a private network")
    func publicFacingRefusesPrivate() async throws {
        let pki = try MadePKI()
        let root = try pki.make("Private Root", ca: 9)
        let url = "http://10.20.30.40/ca.cer"
        let ca = try pki.make("Private CA", ca: 0, signedBy: root)
        let leaf = try pki.make("internal.example.test", dnsNames: ["internal.example.test"], signedBy: ca,
                                extensions: ["authorityInfoAccess=caIssuers;URI:\(url)"]).certificate
        let proxy = try TestCRLServer(["/ca.cer": .bytes(ca.certificate.derBytes)])
        defer { proxy.stop() }
        let fetcher = RevocationListFetcher(limits: .init(maximumBytes: 1 << 20, timeout: .seconds(5)), proxy: .url(proxy.proxyURL))
        guard case .failure(let problem) = await fetcher.issuers.certificates(above: leaf, anchors: [root.certificate], intermediates: [],
                                                                             publicFacing: true) else {
            Issue.record("a public-facing lookup fetched from a private network")
            return
        }
        #expect(problem.text.contains("private"), "\(problem.text)")
        #expect(proxy.totalRequests == 0)
        // The same lookup for a private PKI (its own anchors) fetches it.
        let found = try await RevocationListFetcher(limits: .init(maximumBytes: 1 << 20, timeout: .seconds(5)), proxy: .url(proxy.proxyURL))
            .issuers.certificates(above: leaf, anchors: [root.certificate], intermediates: []).get()
        #expect(found.map(\.certificate) == [ca.certificate])
        #expect(proxy.totalRequests == 1)
    }
}
