import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// The caIssuers lookup (AsyncHTTPClient's road to a leaf's issuer) on the chains public CAs
/// issued: each served intermediate is put at the caIssuers URL of the certificate below it, as
/// its CA publishes it, and the lookup must climb from the leaf to the chain's Mozilla root by
/// those URLs alone. This reads the URLs real leaves carry (Let's Encrypt's `http://r11.i.lencr.org/`,
/// DigiCert's `.crt` paths, …) and checks real signatures (RSA, ECDSA, both hash sizes).
@Suite("The real world: a leaf's issuers found at its caIssuers URLs",
       SharedData.requires("realworld"))
struct RealWorldIssuerLookupTests {
    /// The certificate of `pool` that issued `subject` (by name and signature).
    static func issuer(of subject: Certificate, in pool: [Certificate]) -> Certificate? {
        pool.first { $0 != subject && $0.handle.mayHaveIssued(subject.handle) && $0.handle.signatureVerifies(on: subject.handle) }
    }

    @Test("every leaf whose served intermediates sit at caIssuers URLs reaches its root through them, one fetch per step")
    func climbsRealChains() async throws {
        var climbed = 0, pem = 0
        for (index, file) in RealWorldCorpus.chainFiles.enumerated() {
            let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(file)").path)
            let anchors = RealWorldCorpus.anchors(for: chain)
            guard let leaf = chain.first, !anchors.isEmpty else { continue }
            // The path a CA's URLs lead along: each step the served issuer of the one below,
            // published at that one's first caIssuers URL, until an anchor signed it.
            var served: [String: [UInt8]] = [:]
            var expected: [Certificate] = []
            var current = leaf
            var complete = false
            while expected.count <= IssuerLookup.maximumFetchesPerLeaf {
                if Self.issuer(of: current, in: anchors) != nil { complete = true; break }
                guard let url = current.handle.caIssuersURLs.first, let issuer = Self.issuer(of: current, in: Array(chain.dropFirst())),
                      !expected.contains(issuer) else { break }
                // CAs publish DER; some publish PEM. Every third chain is served as PEM.
                served[url] = index % 3 == 0 ? Array(issuer.pemEncoded.utf8) : issuer.derBytes
                expected.append(issuer)
                current = issuer
            }
            guard complete, !expected.isEmpty, expected.count <= IssuerLookup.maximumFetchesPerLeaf else { continue }
            let transport = IssuerLookupTests.Transport(served)
            let found = await IssuerLookupTests.lookup(transport).certificates(above: leaf, anchors: anchors, intermediates: [])
            switch found {
            case .success(let issuers):
                #expect(issuers.map(\.certificate) == expected, "\(file)")
                #expect(transport.total == expected.count, "\(file): one fetch per certificate above the leaf")
                climbed += 1
                if index % 3 == 0 { pem += 1 }
            case .failure(let problem):
                Issue.record("\(file): \(problem.text)")
            }
        }
        // Public leaves name their issuer's URL, and servers send that issuer along: 196 of the 197.
        #expect(climbed >= 190, "only \(climbed) of \(RealWorldCorpus.chainFiles.count) chains could be climbed")
        #expect(pem > 0)
    }

    @Test("a real leaf's URL serving another CA's intermediate is refused, and nothing is taken from it")
    func refusesAnotherCAsIntermediate() async throws {
        // The first chain whose leaf names a caIssuers URL, and an intermediate of another CA.
        let chains = try RealWorldCorpus.chainFiles.map { file in
            try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(file)").path)
        }
        let first = try #require(chains.first { $0.count >= 2 && $0[0].handle.caIssuersURLs.first != nil })
        let other = try #require(chains.first { $0.count >= 2 && $0[1].subject != first[1].subject })
        let pair = (leaf: first[0], anchors: RealWorldCorpus.anchors(for: first), wrong: other[1])
        let url = try #require(pair.leaf.handle.caIssuersURLs.first)
        let transport = IssuerLookupTests.Transport([url: pair.wrong.derBytes])
        let found = await IssuerLookupTests.lookup(transport).certificates(above: pair.leaf, anchors: pair.anchors, intermediates: [])
        guard case .failure = found else {
            Issue.record("another CA's intermediate was taken as \(pair.leaf.subject)'s issuer")
            return
        }
        #expect(transport.total == 1)
    }

    /// ISRG Root X1 in the system store, where Debian's ca-certificates puts it.
    static let systemHoldsISRGRootX1: Bool = {
        guard case .system(let file, _) = TrustAnchors.system.origin, let bundle = try? Certificate.load(contentsOf: file) else { return false }
        return bundle.contains { $0.subject.contains("CN=ISRG Root X1") }
    }()

    @Test("with the system store's anchors (AsyncHTTPClient's default) the climb ends at a root the store holds, not at the list of anchors, which is empty",
          .enabled(if: systemHoldsISRGRootX1, "needs Debian's ca-certificates in the system store (ISRG Root X1)"))
    func systemAnchors() async throws {
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/gnutls-33a1b6303f.pem").path)
        let (leaf, intermediate) = (chain[0], chain[1])
        #expect(TrustAnchors.system.certificates.isEmpty, "the system store lists no certificates: a lookup must ask the store")
        #expect(TrustAnchors.system.mayHaveIssued(intermediate), "ISRG Root X1, in the store, issued R3")
        #expect(!TrustAnchors.system.mayHaveIssued(leaf), "no root issued the leaf")
        // The policy holds R3: nothing to fetch, and the lookup ends at the store's root.
        let transport = IssuerLookupTests.Transport([:])
        let found = await IssuerLookupTests.lookup(transport).certificates(above: leaf, anchoredBy: .system, intermediates: [intermediate])
        #expect(try found.get().isEmpty)
        // By the anchors' list alone (empty), the climb would never end at an anchor.
        let byList = await IssuerLookupTests.lookup(transport).certificates(above: leaf, anchors: TrustAnchors.system.certificates, intermediates: [intermediate])
        #expect(throws: (any Error).self) { try byList.get() }
        #expect(transport.total <= 1, "R3 names its caIssuers URL once; nothing serves it here")
    }
}
