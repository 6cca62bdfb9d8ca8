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

    @Test("fetches in flight are bounded; connections waiting for the same URL share one fetch")
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
        let refused = await lookup.certificates(above: other.certificate, anchors: [second.root.certificate], intermediates: [])
        gate.signal()
        let (ra, rb) = await (a, b)
        #expect(try ra.get().map(\.certificate) == [first.cas[0].certificate])
        #expect(try rb.get().map(\.certificate) == [first.cas[0].certificate])
        guard case .failure(let problem) = refused else {
            Issue.record("expected the second URL to be refused while one fetch is under way, got \(refused)")
            return
        }
        #expect(problem.text.contains("under way"), "\(problem.text)")
        #expect(transport.counts.withLock { $0 } == ["http://aia.pincheck.test/ca-1.cer": 1])
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
            #expect(attempt == 1 || problem.text.contains("not asked again yet"), "\(problem.text)")
        }
        #expect(server.requests(for: "/ca-1.cer") == 1, "the second lookup meets the remembered failure")
    }

    @Test("a kept issuer that did not issue the next leaf naming its URL is dropped, and the URL fetched again once")
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
        // The old leaf now meets the new intermediate: dropped in turn, fetched again, and refused
        // by what the URL serves, not by what was kept.
        let old = await lookup.certificates(above: before.leaf.certificate, anchors: [before.root.certificate], intermediates: [])
        guard case .failure(let problem) = old else {
            Issue.record("the old leaf was given an issuer the URL no longer serves")
            return
        }
        #expect(problem.text.contains("holds no certificate whose key signed"), "\(problem.text)")
        #expect(fetches.withLock { $0 } == 3)
    }
}
