import TrustEvaluator

/// Owns a router (its handlers and policies) and the challenges in flight, with URLSession's
/// two ways to end: ``finishTasksAndInvalidate()`` and ``invalidateAndCancel()``.
///
/// After either, new challenges are refused with ``ServerTrustError/Code-swift.struct/sessionInvalidated``.
/// The invalidation observers are called once, with no error (URLSession's
/// `didBecomeInvalidWithError: nil` for an explicit invalidation).
///
/// URLSession's background-session events (`urlSessionDidFinishEvents(forBackgroundURLSession:)`)
/// have no Linux counterpart and are deliberately not imitated.
public final class ChallengeSession: Sendable {
    private enum Phase { case active, finishing, invalidated }
    private final class WeakCompletion {
        weak var value: ChallengeCompletion?
        init(_ value: ChallengeCompletion) { self.value = value }
    }
    private struct State {
        var phase: Phase = .active
        var nextID: UInt64 = 0
        var inFlight: [UInt64: WeakCompletion] = [:]
        var observers: [@Sendable ((any Error)?) -> Void] = []
        var fired = false
    }
    private let state = Locked(State())

    /// The router challenges go through.
    public let router: ChallengeRouter

    /// - Parameter router: The router (handlers and their policies).
    public init(router: ChallengeRouter) { self.router = router }

    /// Subscribes to invalidation; called once, with `nil` for an explicit invalidation.
    /// Subscribing after invalidation calls the observer at once.
    /// - Parameter observer: The observer.
    public func onInvalidation(_ observer: @escaping @Sendable ((any Error)?) -> Void) {
        let already = state.withLock { state -> Bool in
            if state.fired { return true }
            state.observers.append(observer)
            return false
        }
        if already { observer(nil) }
    }

    /// The number of challenges answered by nobody yet.
    public var challengesInFlight: Int { state.withLock { $0.inFlight.count } }

    /// Routes a challenge; `deliver` gets exactly one decision.
    /// - Parameters:
    ///   - challenge: The challenge.
    ///   - deliver: Receives the decision.
    /// - Throws: ``ServerTrustError`` `.sessionInvalidated` once the session is finishing or invalidated.
    public func handle(_ challenge: Challenge, deliver: @escaping @Sendable (ChallengeDecision) -> Void) throws(ServerTrustError) {
        // Checking the phase and registering the completion happen under one lock, so an
        // invalidateAndCancel racing with this call either refuses it or cancels it: never neither.
        let completion: ChallengeCompletion? = state.withLock { state in
            guard state.phase == .active else { return nil }
            state.nextID += 1
            let id = state.nextID
            let completion = router.makeCompletion(for: challenge) { [weak self] decision in
                deliver(decision)
                self?.finished(id)
            }
            state.inFlight[id] = WeakCompletion(completion)
            return completion
        }
        guard let completion else {
            throw ServerTrustError(.sessionInvalidated, "the session was invalidated; \(challenge.protectionSpace) was refused")
        }
        router.route(challenge, completion: completion)
    }

    /// Routes a challenge and waits for its decision.
    /// - Parameter challenge: The challenge.
    /// - Throws: ``ServerTrustError`` `.sessionInvalidated` once the session is finishing or invalidated.
    public func handle(_ challenge: Challenge) async throws(ServerTrustError) -> ChallengeDecision {
        let result: Result<ChallengeDecision, ServerTrustError> = await withCheckedContinuation { continuation in
            do throws(ServerTrustError) {
                try handle(challenge) { continuation.resume(returning: .success($0)) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }

    /// Refuses new challenges, lets those in flight complete, then calls the observers once.
    public func finishTasksAndInvalidate() {
        let fireNow = state.withLock { state -> Bool in
            guard state.phase == .active else { return false }
            state.phase = .finishing
            return state.inFlight.isEmpty
        }
        if fireNow { fire() }
    }

    /// Refuses new challenges, cancels those in flight at once (a handler's stored completion
    /// then finds the challenge answered), then calls the observers once.
    public func invalidateAndCancel() {
        let pending = state.withLock { state -> [ChallengeCompletion] in
            guard state.phase != .invalidated else { return [] }
            state.phase = .invalidated
            let pending = state.inFlight.values.compactMap(\.value)
            return pending
        }
        for completion in pending {
            completion.complete(
                with: ChallengeDecision(
                    .cancelAuthenticationChallenge,
                    error: ServerTrustError(.cancelledByInvalidation, "the session was invalidated and cancelled")))
        }
        state.withLock { $0.inFlight.removeAll() }
        fire()
    }

    private func finished(_ id: UInt64) {
        let fireNow = state.withLock { state -> Bool in
            state.inFlight[id] = nil
            return state.phase == .finishing && state.inFlight.isEmpty
        }
        if fireNow { fire() }
    }

    private func fire() {
        let observers = state.withLock { state -> [@Sendable ((any Error)?) -> Void] in
            guard !state.fired else { return [] }
            state.fired = true
            state.phase = .invalidated
            defer { state.observers.removeAll() }
            return state.observers
        }
        for observer in observers { observer(nil) }
    }
}
