/// Values remembered until an instant each, at most `limit` of them: past it, the expired go
/// first, then the one that expires soonest. (Package access: the memory of ``SingleFlight``, and
/// of the lookups that remember failures by a key of their own.)
package struct ExpiringMemory<Key: Hashable, Value> {
    private var entries: [Key: (value: Value, until: ContinuousClock.Instant)] = [:]
    /// The most values remembered at once.
    package let limit: Int

    package init(limit: Int) { self.limit = max(0, limit) }

    /// How many values are remembered (expired ones included until they are dropped).
    package var count: Int { entries.count }

    /// The value remembered for `key`, if it has not expired (an expired one is dropped).
    package mutating func value(for key: Key, now: ContinuousClock.Instant = .now) -> Value? {
        guard let entry = entries[key] else { return nil }
        if now < entry.until { return entry.value }
        entries[key] = nil
        return nil
    }

    /// Remembers `value` for `key` until `until`, making room when the memory is full.
    package mutating func remember(_ value: Value, for key: Key, until: ContinuousClock.Instant) {
        guard limit > 0 else { return }
        if entries[key] == nil, entries.count >= limit {
            let now = ContinuousClock.now
            entries = entries.filter { $0.value.until > now }
            if entries.count >= limit, let soonest = entries.min(by: { $0.value.until < $1.value.until })?.key { entries[soonest] = nil }
        }
        entries[key] = (value, until)
    }

    package mutating func forget(_ key: Key) { entries[key] = nil }

    package mutating func removeAll() { entries.removeAll() }
}

/// One flight per key, however many callers want its answer, and what a flight answered remembered
/// for a while: the machinery the CRL fetcher, the issuer lookup and the staple cache share.
///
/// A caller ``ask(_:_:waiter:)``s for a key: it is answered from memory at once, or joins the
/// flight under way, or starts one (`start`, at once while fewer than `maximumInFlight` fly, else
/// queued, up to `queueLimit`; past that it is refused). Whoever runs the flight ends it with
/// ``land(_:_:remembering:)``, which answers every waiter, remembers what it is told to, and starts
/// the next queued flight. Each waiter is called exactly once: with the flight's answer, its
/// `late` value when its own deadline passes first (the flight goes on for the others), or the
/// `refused` value. Waiters are called with no lock held.
package final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// How a caller was answered.
    package enum Answer: Equatable, Sendable {
        /// From memory.
        case remembered
        /// By joining the flight under way.
        case joined
        /// By starting a flight (run at once, or queued for a free slot).
        case launched
        /// Not at all: every slot is taken and the queue is full (the waiter has its `refused` value).
        case refused
    }

    /// One ask, with what it waits for and how its flight starts.
    package struct Ask: Sendable {
        package let key: Key
        /// How long this caller waits at most, and what it is answered then; nil: until the landing.
        package let deadline: (after: Duration, late: Value)?
        /// The answer when the flight cannot even be queued.
        package let refused: Value
        /// Starts the flight; whoever runs it calls ``land(_:_:remembering:)`` once.
        package let start: @Sendable () -> Void

        package init(_ key: Key, deadline: (after: Duration, late: Value)? = nil, refused: Value, start: @escaping @Sendable () -> Void) {
            self.key = key
            self.deadline = deadline
            self.refused = refused
            self.start = start
        }
    }

    private enum Step {
        case answer(Value, Answer)
        case wait(id: Int, Answer, startNow: Bool)
    }

    private struct Flight {
        var waiters: [Int: @Sendable (Value) -> Void] = [:]
    }

    private struct State {
        var memory: ExpiringMemory<Key, Value>
        var flights: [Key: Flight] = [:]
        var queued: [(key: Key, start: @Sendable () -> Void)] = []
        var running = 0
        var nextWaiter = 0
    }

    private let state: Locked<State>
    private let maximumInFlight: Int
    private let queueLimit: Int

    /// - Parameters:
    ///   - memoryLimit: The most answers remembered (0: none).
    ///   - maximumInFlight: The most flights started and not landed.
    ///   - queueLimit: The most flights waiting for a slot.
    package init(memoryLimit: Int, maximumInFlight: Int = .max, queueLimit: Int = .max) {
        state = Locked(State(memory: ExpiringMemory(limit: memoryLimit)))
        self.maximumInFlight = max(1, maximumInFlight)
        self.queueLimit = max(0, queueLimit)
    }

    /// How many callers wait for the flight of `key`.
    package func waiters(for key: Key) -> Int { state.withLock { $0.flights[key]?.waiters.count ?? 0 } }

    /// How many flights wait for a slot.
    package var queuedFlights: Int { state.withLock { $0.queued.count } }

    /// Forgets every remembered answer (flights under way still land).
    package func forgetAll() { state.withLock { $0.memory.removeAll() } }

    /// Answers `ask` through `waiter`, once: see the type's description.
    @discardableResult
    package func ask(_ ask: Ask, waiter: @escaping @Sendable (Value) -> Void) -> Answer {
        let step: Step = state.withLock { state in
            if let value = state.memory.value(for: ask.key) { return .answer(value, .remembered) }
            let id = state.nextWaiter
            state.nextWaiter += 1
            if state.flights[ask.key] != nil {
                state.flights[ask.key]!.waiters[id] = waiter
                return .wait(id: id, .joined, startNow: false)
            }
            let startNow = state.running < maximumInFlight
            if !startNow {
                guard state.queued.count < queueLimit else { return .answer(ask.refused, .refused) }
                state.queued.append((ask.key, ask.start))
            } else {
                state.running += 1
            }
            state.flights[ask.key] = Flight(waiters: [id: waiter])
            return .wait(id: id, .launched, startNow: startNow)
        }
        switch step {
        case .answer(let value, let answer):
            waiter(value)
            return answer
        case .wait(let id, let answer, let startNow):
            if let (after, late) = ask.deadline { expire(waiter: id, of: ask.key, after: after, with: late) }
            if startNow { ask.start() }
            return answer
        }
    }

    /// Ends the flight of `key` with `value`: every waiter gets it, `remembering` (another value,
    /// and how long) is what later askers get from memory, and the next queued flight starts.
    package func land(_ key: Key, _ value: Value, remembering: (value: Value, for: Duration)? = nil) {
        let (waiters, next) = state.withLock { state -> ([@Sendable (Value) -> Void], (@Sendable () -> Void)?) in
            if let remembering {
                state.memory.remember(remembering.value, for: key, until: .now + remembering.for)
            } else {
                state.memory.forget(key)
            }
            // A landing without a flight (one already landed) only updates the memory.
            guard let flight = state.flights.removeValue(forKey: key) else { return ([], nil) }
            let waiters = Array(flight.waiters.values)
            guard !state.queued.isEmpty else {
                state.running -= 1
                return (waiters, nil)
            }
            return (waiters, state.queued.removeFirst().start)
        }
        for waiter in waiters { waiter(value) }
        next?()
    }

    /// After `duration`, answers the waiter with `late` unless the flight landed first. A thread's
    /// alarm, not a sleeping task: the deadline holds when Swift's cooperative pool is busy or blocked.
    private func expire(waiter id: Int, of key: Key, after duration: Duration, with late: Value) {
        let expire: @Sendable () -> Void = { [state] in
            state.withLock { $0.flights[key]?.waiters.removeValue(forKey: id) }?(late)
        }
        if !Alarm.shared.schedule(at: .now + duration, expire) { expire() }
    }

    /// The answer to `ask`, and how it came.
    package func value(_ ask: Ask) async -> (value: Value, answer: Answer) {
        await withCheckedContinuation { continuation in
            // The waiter may run before `ask` returns, or after, on another thread: whichever of
            // the two comes second finds both halves and resumes.
            let meeting = Locked<(value: Value?, answer: Answer?)>((nil, nil))
            let answer = self.ask(ask) { value in
                let answer = meeting.withLock { meeting -> Answer? in
                    meeting.value = value
                    return meeting.answer
                }
                if let answer { continuation.resume(returning: (value, answer)) }
            }
            let value = meeting.withLock { meeting -> Value? in
                meeting.answer = answer
                return meeting.value
            }
            if let value { continuation.resume(returning: (value, answer)) }
        }
    }

    /// The answers to `asks`, in order, all flights started before any is waited for.
    package func values(_ asks: [Ask]) async -> [Value] {
        guard !asks.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let gathered = Gathered(count: asks.count) { continuation.resume(returning: $0) }
            for (index, one) in asks.enumerated() { ask(one) { gathered.put($0, at: index) } }
        }
    }

    /// The same, blocking the calling thread (a command's own, never an event loop or Swift's pool).
    package func valuesWaiting(_ asks: [Ask]) -> [Value] {
        let done = Latch()
        let result = Locked<[Value]>([])
        let gathered = Gathered(count: asks.count) { values in
            result.withLock { $0 = values }
            done.signal()
        }
        for (index, one) in asks.enumerated() { ask(one) { gathered.put($0, at: index) } }
        if !asks.isEmpty { done.wait() }
        return result.withLock { $0 }
    }

    /// Answers collected by position; `whenAll` runs once, when the last arrives.
    private final class Gathered: Sendable {
        private let values: Locked<(slots: [Value?], missing: Int)>
        private let whenAll: @Sendable ([Value]) -> Void

        init(count: Int, whenAll: @escaping @Sendable ([Value]) -> Void) {
            values = Locked((Array(repeating: nil, count: count), count))
            self.whenAll = whenAll
        }

        func put(_ value: Value, at index: Int) {
            let complete = values.withLock { values -> [Value]? in
                values.slots[index] = value
                values.missing -= 1
                return values.missing == 0 ? values.slots.map { $0! } : nil
            }
            if let complete { whenAll(complete) }
        }
    }
}
