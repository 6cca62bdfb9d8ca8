import Testing

@testable import TrustEvaluatorCore

/// The one single-flight type the CRL fetcher, the issuer lookup and the staple cache share.
@Suite("SingleFlight")
struct SingleFlightTests {
    typealias Flights = SingleFlight<String, Int>

    /// Counts the flights started per key; the test lands them itself.
    final class Starts: Sendable {
        let counts = Locked<[String: Int]>([:])
        func start(_ key: String) -> @Sendable () -> Void { { self.counts.withLock { $0[key, default: 0] += 1 } } }
        subscript(key: String) -> Int { counts.withLock { $0[key] ?? 0 } }
    }

    /// Collects what waiters were given.
    final class Received: Sendable {
        let values = Locked<[Int]>([])
        func waiter() -> @Sendable (Int) -> Void { { value in self.values.withLock { $0.append(value) } } }
        var all: [Int] { values.withLock { $0 } }
    }

    @Test("many asks for one key share one flight, and every waiter gets its landing once")
    func oneFlightPerKey() {
        let flights = Flights(memoryLimit: 8)
        let starts = Starts()
        let received = Received()
        let answers = (0..<5).map { _ in flights.ask(.init("a", refused: -1, start: starts.start("a")), waiter: received.waiter()) }
        #expect(answers == [.launched, .joined, .joined, .joined, .joined])
        #expect(starts["a"] == 1)
        #expect(flights.waiters(for: "a") == 5)
        flights.land("a", 7)
        #expect(received.all == [7, 7, 7, 7, 7])
        #expect(flights.waiters(for: "a") == 0)
        // Nothing remembered: the next ask flies again.
        #expect(flights.ask(.init("a", refused: -1, start: starts.start("a")), waiter: received.waiter()) == .launched)
        #expect(starts["a"] == 2)
    }

    @Test("a remembered answer is given at once until it expires; then the key flies again")
    func memoryExpires() async throws {
        let flights = Flights(memoryLimit: 8)
        let starts = Starts()
        let received = Received()
        flights.ask(.init("a", refused: -1, start: starts.start("a")), waiter: received.waiter())
        flights.land("a", 1, remembering: (value: 2, for: .milliseconds(200)))
        #expect(flights.ask(.init("a", refused: -1, start: starts.start("a")), waiter: received.waiter()) == .remembered)
        #expect(received.all == [1, 2], "the waiter of the flight got the landing; the later ask the remembered value")
        try await Task.sleep(for: .milliseconds(400))
        #expect(flights.ask(.init("a", refused: -1, start: starts.start("a")), waiter: received.waiter()) == .launched)
        #expect(starts["a"] == 2)
    }

    @Test("past the slots a flight is queued and started when one lands; past the queue an ask is refused")
    func slotsAndQueue() {
        let flights = Flights(memoryLimit: 0, maximumInFlight: 1, queueLimit: 1)
        let starts = Starts()
        let received = Received()
        #expect(flights.ask(.init("a", refused: -1, start: starts.start("a")), waiter: received.waiter()) == .launched)
        #expect(flights.ask(.init("b", refused: -1, start: starts.start("b")), waiter: received.waiter()) == .launched)
        #expect(starts["b"] == 0, "queued: the one slot is taken")
        #expect(flights.queuedFlights == 1)
        #expect(flights.ask(.init("b", refused: -1, start: starts.start("b")), waiter: received.waiter()) == .joined, "a queued flight is joined too")
        #expect(flights.ask(.init("c", refused: -3, start: starts.start("c")), waiter: received.waiter()) == .refused)
        #expect(received.all == [-3], "the refused ask is answered at once with its refusal")
        flights.land("a", 1)
        #expect(starts["b"] == 1, "the landing started the queued flight")
        flights.land("b", 2)
        #expect(received.all.sorted() == [-3, 1, 2, 2])
        #expect(flights.ask(.init("c", refused: -3, start: starts.start("c")), waiter: received.waiter()) == .launched, "the slots are free again")
    }

    @Test("a waiter whose deadline passes gets its late answer; the flight goes on and its other waiters get the landing")
    func deadlines() async throws {
        let flights = Flights(memoryLimit: 0)
        let starts = Starts()
        let received = Received()
        flights.ask(.init("a", deadline: (.milliseconds(50), -9), refused: -1, start: starts.start("a")), waiter: received.waiter())
        flights.ask(.init("a", refused: -1, start: starts.start("a")), waiter: received.waiter())
        for _ in 0..<400 where received.all.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        #expect(received.all == [-9])
        #expect(flights.waiters(for: "a") == 1)
        flights.land("a", 4)
        #expect(received.all == [-9, 4], "the late waiter is not answered twice")
    }

    @Test("values(_:) starts every flight before it waits for any, and answers in order")
    func valuesInOrder() async {
        let flights = Flights(memoryLimit: 0)
        let asks = ["x", "y", "z"].map { key in
            Flights.Ask(key, refused: -1) { [flights] in
                Task.detached { flights.land(key, Int(key.unicodeScalars.first!.value)) }
            }
        }
        let values = await flights.values(asks)
        #expect(values == [120, 121, 122])
        #expect(flights.valuesWaiting(asks) == [120, 121, 122])
    }

    @Test("a full memory drops the expired first, then the answer that expires soonest")
    func memoryBound() {
        var memory = ExpiringMemory<String, Int>(limit: 2)
        let now = ContinuousClock.now
        memory.remember(1, for: "soon", until: now + .seconds(10))
        memory.remember(2, for: "late", until: now + .seconds(100))
        memory.remember(3, for: "new", until: now + .seconds(50))
        #expect(memory.count == 2)
        #expect(memory.value(for: "soon") == nil)
        #expect(memory.value(for: "late") == 2)
        #expect(memory.value(for: "new") == 3)
        #expect(memory.value(for: "late", now: now + .seconds(200)) == nil, "expired at its instant")
        #expect(memory.count == 1)
    }
}
