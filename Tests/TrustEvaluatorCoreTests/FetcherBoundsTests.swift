import Foundation
import PincheckTestSupport
@testable import PincheckOpenSSL
import Testing
@testable import TrustEvaluatorCore

/// What bounds a CRL fetch that the transport's own timeout does not: a resolver that hangs, and
/// the number of CRLs kept in memory.
@Suite("CRL fetcher bounds")
struct FetcherBoundsTests {
    static let crl = DistributionPointCRLTests.intermediateCRL

    /// A request whose CRL is taken as verified (these tests are about bounds, not verification).
    static func request(_ url: String) -> RevocationListFetcher.Request {
        RevocationListFetcher.Request(url: url, issuer: SHA256Digest(hashing: Array(url.utf8))) { _ in nil }
    }

    @Test("a fetch stuck outside the transport's bound (a slow resolver) is answered at the deadline; its CRL serves the next evaluation")
    func stuckFetchAnsweredAtDeadline() async throws {
        let release = Latch()
        let fetcher = RevocationListFetcher(limits: .init(timeout: .milliseconds(200)), cacheDirectory: nil) { _ in
            // Stands for getaddrinfo waiting on an unanswering name server: the transport's
            // timeout has not started yet. Released by the test (or after 30 s, so a broken
            // deadline fails the expectations below instead of hanging the suite).
            _ = release.wait(timeout: .seconds(30))
            return .success(Self.crl)
        }
        let url = "http://crl.pincheck.test/intermediate.crl"
        let first = await fetcher.lists([Self.request(url)], at: TestPKI.time)
        guard case .failed(let why, nil)? = first.byURL[url] else {
            Issue.record("expected a failure at the deadline, got \(String(describing: first.byURL[url]))")
            release.signal()
            return
        }
        #expect(why.contains("took longer than"), "\(why)")
        release.signal()
        // The fetch goes on and keeps its CRL: the next evaluation has it at hand.
        var atHand: FetchedRevocationLists? = nil
        for _ in 0..<200 where atHand == nil {
            try await Task.sleep(for: .milliseconds(25))
            atHand = fetcher.fresh([url], at: TestPKI.time)
        }
        guard case .list? = atHand?.byURL[url] else {
            Issue.record("the late fetch's CRL was not kept")
            return
        }
        #expect(fetcher.fetchCount == 1)
    }

    @Test("at most cachedListLimit CRLs are kept: the least recently used is fetched again")
    func cacheIsBounded() async throws {
        let fetcher = RevocationListFetcher(limits: .init(), cacheDirectory: nil) { _ in .success(Self.crl) }
        let urls = (0...RevocationListFetcher.cachedListLimit).map { "http://crl\($0).pincheck.test/ca.crl" }
        for url in urls { _ = await fetcher.lists([Self.request(url)], at: TestPKI.time) }
        #expect(fetcher.fetchCount == urls.count)
        #expect(fetcher.fresh([urls[0]], at: TestPKI.time) == nil, "the oldest was evicted")
        #expect(fetcher.fresh([urls.last!], at: TestPKI.time) != nil)
        _ = await fetcher.lists([Self.request(urls[0])], at: TestPKI.time)
        #expect(fetcher.fetchCount == urls.count + 1, "fetched again after eviction")
    }
}
