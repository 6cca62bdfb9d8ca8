import Testing

@testable import PincheckOpenSSL

#if canImport(Glibc)
import Glibc
#endif

/// The one lock of Pincheck's modules, and the waiting it offers (Latch and Alarm are built on it).
@Suite("PThreadLocked")
struct PThreadLockedTests {
    /// Runs `body` on a thread of its own (no Foundation, no Swift pool).
    static func onThread(_ body: @escaping @Sendable () -> Void) {
        final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        _ = pthread_create(&thread, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        pthread_detach(thread)
    }

    @Test("updates from many threads are all kept")
    func sharedUpdates() {
        let counter = PThreadLocked(0)
        let finished = PThreadLocked(0)
        for _ in 0..<8 {
            Self.onThread {
                for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
                finished.withLockSignalling { $0 += 1 }
            }
        }
        finished.withLock(waitingFor: { $0 == 8 ? .done(()) : .wait(until: nil) })
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test("a waiter wakes when another thread signals the change it waits for")
    func signalWakesWaiter() {
        let ready = PThreadLocked(false)
        Self.onThread {
            var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
            nanosleep(&pause, nil)
            ready.withLockSignalling { $0 = true }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        let woke = ready.withLock(waitingFor: { ready in
            ready ? .done(true) : (ContinuousClock.now >= deadline ? .done(false) : .wait(until: deadline))
        })
        #expect(woke, "the signal arrived long before the 30 s deadline")
    }

    @Test("a wait with a deadline and no signal returns at the deadline, not before")
    func deadlineWithoutSignal() {
        let never = PThreadLocked(false)
        let started = ContinuousClock.now
        let deadline = started + .milliseconds(150)
        let looks = PThreadLocked(0)
        let result = never.withLock(waitingFor: { value -> PThreadLocked<Bool>.WaitStep<Bool> in
            looks.withLock { $0 += 1 }
            if value { return .done(true) }
            return ContinuousClock.now >= deadline ? .done(false) : .wait(until: deadline)
        })
        let waited = ContinuousClock.now - started
        #expect(!result)
        #expect(waited >= .milliseconds(150), "returned after \(waited)")
        #expect(waited < .seconds(10), "returned after \(waited)")
        #expect(looks.withLock { $0 } >= 2, "looked once before waiting and once at the deadline")
    }
}
