import Foundation
import Synchronization
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorNIO

/// The bookkeeping behind the NIO verifier's staple connections, without a network.
@Suite("StapleCache")
struct StapleCacheTests {
    static func key(_ host: String) -> StapleCache.Key { StapleCache.Key(host: host, port: 443, leaf: [1, 2, 3]) }
    static let leaf = TestPKI.certificate("rsa-leaf")

    /// Collects what waiters receive.
    final class Received: Sendable {
        private let list = Mutex<[[UInt8]?]>([])
        func waiter() -> @Sendable ([UInt8]?) -> Void { { staple in self.list.withLock { $0.append(staple) } } }
        var all: [[UInt8]?] { list.withLock { $0 } }
    }

    @Test("handshakes that ask at once share one second connection, and later ones are answered from the cache")
    func coalescesAndCaches() {
        let cache = StapleCache()
        let received = Received()
        #expect(cache.claim(Self.key("a"), waiter: received.waiter()), "the first asks: it makes the connection")
        #expect(!cache.claim(Self.key("a"), waiter: received.waiter()), "the second joins it")
        #expect(received.all.isEmpty)
        cache.finish(Self.key("a"), staple: [0x30], failed: false, leaf: Self.leaf)
        #expect(received.all == [[0x30], [0x30]])
        #expect(!cache.claim(Self.key("a"), waiter: received.waiter()), "answered from the cache")
        #expect(received.all.count == 3 && received.all.last == [0x30])
        #expect(cache.claim(Self.key("b"), waiter: received.waiter()), "another server is another connection")
        #expect(cache.statistics.fetches == 2)
        #expect(cache.statistics.hits == 2)
    }

    @Test("a failed connection is forgotten after lifetimeAfterFailure; \"staples nothing\" is kept longer")
    func lifetimes() throws {
        let cache = StapleCache(lifetime: .seconds(3600), lifetimeWithoutStaple: .seconds(3600), lifetimeAfterFailure: .milliseconds(20))
        let received = Received()
        #expect(cache.claim(Self.key("failed"), waiter: received.waiter()))
        cache.finish(Self.key("failed"), staple: nil, failed: true, leaf: Self.leaf)
        #expect(cache.claim(Self.key("nothing"), waiter: received.waiter()))
        cache.finish(Self.key("nothing"), staple: nil, failed: false, leaf: Self.leaf)
        #expect(!cache.claim(Self.key("failed"), waiter: received.waiter()), "still remembered at once")
        Thread.sleep(forTimeInterval: 0.1)
        #expect(cache.claim(Self.key("failed"), waiter: received.waiter()), "asked again once the failure is forgotten")
        #expect(!cache.claim(Self.key("nothing"), waiter: received.waiter()))
        #expect(received.all.allSatisfy { $0 == nil })
    }

    @Test("past its capacity the cache drops the answer that expires soonest")
    func capacity() {
        let cache = StapleCache(lifetime: .seconds(3600), lifetimeWithoutStaple: .seconds(60), capacity: 2)
        let received = Received()
        for (host, staple) in [("soon", nil), ("late", [UInt8(1)]), ("new", [UInt8(2)])] as [(String, [UInt8]?)] {
            #expect(cache.claim(Self.key(host), waiter: received.waiter()))
            cache.finish(Self.key(host), staple: staple, failed: false, leaf: Self.leaf)
        }
        #expect(cache.claim(Self.key("soon"), waiter: received.waiter()), "dropped: it expired first")
        #expect(!cache.claim(Self.key("late"), waiter: received.waiter()))
        #expect(!cache.claim(Self.key("new"), waiter: received.waiter()))
    }

    @Test("removeAll forgets every answer")
    func removeAll() {
        let cache = StapleCache()
        let received = Received()
        #expect(cache.claim(Self.key("a"), waiter: received.waiter()))
        cache.finish(Self.key("a"), staple: [1], failed: false, leaf: Self.leaf)
        cache.removeAll()
        #expect(cache.claim(Self.key("a"), waiter: received.waiter()))
    }
}

/// A kept staple never outlives its own freshness.
@Suite("StapleCache lifetimes against nextUpdate")
struct StapleCacheFreshnessTests {
    /// `ocsp-stale.der`'s nextUpdate; `ocsp-good.der`'s is a century later.
    static let staleNextUpdate = Date(timeIntervalSince1970: 1_795_438_061) // 2026-11-23T12:47:41Z

    static func response(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: TestPKI.path("revocation/\(name)"))))
    }

    @Test("a staple is kept for the lifetime, or until the nextUpdate of its answer about the leaf when that comes first")
    func boundedByNextUpdate() throws {
        let cache = StapleCache(lifetime: .seconds(3600), lifetimeWithoutStaple: .seconds(600), lifetimeAfterFailure: .seconds(30))
        let stale = try Self.response("ocsp-stale.der"), good = try Self.response("ocsp-good.der")
        let halfAnHourBefore = Self.staleNextUpdate.addingTimeInterval(-1800)
        #expect(cache.keep(stale, about: StapleCacheTests.leaf, failed: false, now: halfAnHourBefore) == .seconds(1800))
        #expect(cache.keep(good, about: StapleCacheTests.leaf, failed: false, now: halfAnHourBefore) == .seconds(3600))
        #expect(cache.keep(stale, about: StapleCacheTests.leaf, failed: false, now: Self.staleNextUpdate.addingTimeInterval(-7200)) == .seconds(3600))
        let otherLeaf = TestPKI.certificate("revocation/rsa-direct-leaf")
        #expect(cache.keep(stale, about: otherLeaf, failed: false, now: halfAnHourBefore) == .seconds(3600),
                "only the answers about the leaf's serial number count")
    }

    @Test("a staple already stale when fetched is kept only as long as a failure; a response without answers for the lifetime")
    func staleAndUnreadable() throws {
        let cache = StapleCache(lifetime: .seconds(3600), lifetimeWithoutStaple: .seconds(600), lifetimeAfterFailure: .seconds(30))
        let stale = try Self.response("ocsp-stale.der")
        #expect(cache.keep(stale, about: StapleCacheTests.leaf, failed: false, now: Self.staleNextUpdate.addingTimeInterval(1)) == .seconds(30))
        #expect(cache.keep([0x30, 0x03, 0x0A, 0x01, 0x00], about: StapleCacheTests.leaf, failed: false, now: Self.staleNextUpdate) == .seconds(3600))
        #expect(cache.keep(nil, about: StapleCacheTests.leaf, failed: false, now: Self.staleNextUpdate) == .seconds(600))
        #expect(cache.keep(nil, about: StapleCacheTests.leaf, failed: true, now: Self.staleNextUpdate) == .seconds(30))
    }
}
