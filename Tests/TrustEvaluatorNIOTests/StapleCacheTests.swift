import Foundation
import Synchronization
import Testing
@testable import TrustEvaluatorNIO

/// The bookkeeping behind the NIO verifier's staple connections, without a network.
@Suite("StapleCache")
struct StapleCacheTests {
    static func key(_ host: String) -> StapleCache.Key { StapleCache.Key(host: host, port: 443, leaf: [1, 2, 3]) }

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
        cache.finish(Self.key("a"), staple: [0x30], failed: false)
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
        cache.finish(Self.key("failed"), staple: nil, failed: true)
        #expect(cache.claim(Self.key("nothing"), waiter: received.waiter()))
        cache.finish(Self.key("nothing"), staple: nil, failed: false)
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
            cache.finish(Self.key(host), staple: staple, failed: false)
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
        cache.finish(Self.key("a"), staple: [1], failed: false)
        cache.removeAll()
        #expect(cache.claim(Self.key("a"), waiter: received.waiter()))
    }
}
