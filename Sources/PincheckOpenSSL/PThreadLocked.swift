#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a POSIX mutex: the one lock Pincheck's modules share state with (the engine
/// calls it `Locked`). Package access: for Pincheck's own modules.
///
/// Not `Synchronization.Mutex`: on Linux its fast path is invisible to ThreadSanitizer, which then
/// reports the accesses it guards as races. And the value is not a stored `var` of the class: the
/// `inout` access to such a property is instrumented as a Swift access of the object, which
/// ThreadSanitizer does not tie to the mutex and reported, now and then, as a race between two
/// holders of the lock. Here the value and the mutex live in one `ManagedBuffer` allocation (as in
/// NIO's `NIOLockedValueBox`) and are reached through pointers, which it tracks as plain memory.
package final class PThreadLocked<Value>: @unchecked Sendable {
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        // ManagedBuffer's own deinit destroys the header (the value); the mutex is this one's.
        deinit {
            withUnsafeMutablePointerToElements { mutex in
                pthread_mutex_destroy(mutex)
                mutex.deinitialize(count: 1)
            }
        }
    }

    private let storage: Storage

    package init(_ value: Value) {
        storage = Storage.create(minimumCapacity: 1) { _ in value } as! Storage
        storage.withUnsafeMutablePointers { _, mutex in
            mutex.initialize(to: pthread_mutex_t())
            _ = pthread_mutex_init(mutex, nil)
        }
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}
