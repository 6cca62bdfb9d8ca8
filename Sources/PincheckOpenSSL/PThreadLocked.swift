#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a POSIX mutex: the one lock Pincheck's modules share state with (the engine
/// calls it `Locked`). Package access: for Pincheck's own modules. A class that shares state
/// across threads keeps it in one of these, never in stored `var`s of its own.
///
/// Not `Synchronization.Mutex`: on Linux its fast path is invisible to ThreadSanitizer, which then
/// reports the accesses it guards as races. And the value is not a stored `var` of the class: the
/// `inout` access to such a property is instrumented as a Swift access of the object, which
/// ThreadSanitizer does not tie to the mutex and reported, now and then, as a race between two
/// holders of the lock. Here the value, the mutex and a condition variable live in one
/// `ManagedBuffer` allocation (as in NIO's `NIOLockedValueBox`) and are reached through pointers,
/// which it tracks as plain memory. The condition lets a holder wait for the value to change
/// (``withLock(waitingFor:)``); a lock nobody waits on never touches it.
package final class PThreadLocked<Value>: @unchecked Sendable {
    private struct Guard {
        var mutex = pthread_mutex_t()
        var condition = pthread_cond_t()
    }

    private final class Storage: ManagedBuffer<Value, Guard> {
        // ManagedBuffer's own deinit destroys the header (the value); the pthread objects are this one's.
        deinit {
            withUnsafeMutablePointerToElements { guarded in
                pthread_cond_destroy(&guarded.pointee.condition)
                pthread_mutex_destroy(&guarded.pointee.mutex)
                guarded.deinitialize(count: 1)
            }
        }
    }

    /// What a waiting holder does next: finish with a result, or wait for a signal (until
    /// `deadline`, when there is one) and look again.
    package enum WaitStep<Result> {
        case done(Result)
        case wait(until: ContinuousClock.Instant?)
    }

    private let storage: Storage

    package init(_ value: Value) {
        storage = Storage.create(minimumCapacity: 1) { _ in value } as! Storage
        storage.withUnsafeMutablePointers { _, guarded in
            guarded.initialize(to: Guard())
            _ = pthread_mutex_init(&guarded.pointee.mutex, nil)
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            _ = pthread_cond_init(&guarded.pointee.condition, &attributes)
            pthread_condattr_destroy(&attributes)
        }
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, guarded in
            pthread_mutex_lock(&guarded.pointee.mutex)
            defer { pthread_mutex_unlock(&guarded.pointee.mutex) }
            return try body(&value.pointee)
        }
    }

    /// Runs `body` with the lock held and then wakes every holder waiting in ``withLock(waitingFor:)``.
    package func withLockSignalling<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, guarded in
            pthread_mutex_lock(&guarded.pointee.mutex)
            defer {
                pthread_cond_broadcast(&guarded.pointee.condition)
                pthread_mutex_unlock(&guarded.pointee.mutex)
            }
            return try body(&value.pointee)
        }
    }

    /// Runs `step` with the lock held until it returns `.done`; between two runs the lock is let go
    /// until a ``withLockSignalling(_:)`` or the step's deadline.
    package func withLock<Result>(waitingFor step: (inout Value) -> WaitStep<Result>) -> Result {
        storage.withUnsafeMutablePointers { value, guarded in
            pthread_mutex_lock(&guarded.pointee.mutex)
            defer { pthread_mutex_unlock(&guarded.pointee.mutex) }
            while true {
                switch step(&value.pointee) {
                case .done(let result):
                    return result
                case .wait(until: nil):
                    pthread_cond_wait(&guarded.pointee.condition, &guarded.pointee.mutex)
                case .wait(until: let deadline?):
                    var instant = Self.monotonic(at: deadline)
                    _ = pthread_cond_timedwait(&guarded.pointee.condition, &guarded.pointee.mutex, &instant)
                }
            }
        }
    }

    /// `deadline` on CLOCK_MONOTONIC, the condition's clock (as its distance from now).
    private static func monotonic(at deadline: ContinuousClock.Instant) -> timespec {
        var instant = timespec()
        clock_gettime(CLOCK_MONOTONIC, &instant)
        let (seconds, attoseconds) = max(deadline - .now, .zero).components
        let nanoseconds = Int(instant.tv_nsec) + Int(attoseconds / 1_000_000_000)
        instant.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        instant.tv_nsec = nanoseconds % 1_000_000_000
        return instant
    }
}
