#if canImport(Glibc)
import Glibc
#endif

/// A value behind a POSIX mutex, for the little state this module shares between threads (the
/// engine's `Locked`, which this module cannot import). Not `Synchronization.Mutex`: on Linux its
/// fast path is invisible to ThreadSanitizer, which then reports the accesses it guards as races.
final class PThreadLocked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
