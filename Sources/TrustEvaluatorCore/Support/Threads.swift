package import PincheckOpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs a closure on a new detached POSIX thread: what Foundation's `Thread` does, without
/// linking Foundation into every program that uses the engine. (Package access: for Pincheck's own
/// TLS module and command.)
package enum DetachedThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Starts `body` on its own thread, with `stackSize` bytes of stack.
    /// - Returns: False when the system refuses another thread (the closure then never runs).
    @discardableResult
    package static func start(stackSize: Int = 512 * 1024, name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
        guard let name else { return start(stackSize: stackSize, unnamed: body) }
        // Named from inside, through its own comm file (Glibc's pthread_setname_np is not
        // imported into Swift); Linux keeps 15 bytes. `top -H` and /proc/PID/task/*/comm show it.
        return start(
            stackSize: stackSize,
            unnamed: {
                let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
                if descriptor >= 0 {
                    let bytes = Array(name.utf8.prefix(15))
                    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                    close(descriptor)
                }
                body()
            })
    }

    private static func start(stackSize: Int, unnamed body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { context in
                Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        if status != 0 {
            Unmanaged<Box>.fromOpaque(context).release()
            return false
        }
        return true
    }
}

/// A countdown signal: `wait()` returns once `signal()` has been called `count` times (before or after).
package final class Latch: @unchecked Sendable {
    // Allocated, so the pthread objects never move (the state is guarded by the mutex).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var remaining: Int

    package init(count: Int = 1) {
        remaining = count
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func signal() {
        pthread_mutex_lock(mutex)
        remaining -= 1
        if remaining <= 0 { pthread_cond_broadcast(condition) }
        pthread_mutex_unlock(mutex)
    }

    package func wait() {
        pthread_mutex_lock(mutex)
        while remaining > 0 { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Waits until the count reaches zero or `timeout` has passed; true when it reached zero.
    package func wait(timeout: Duration) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let (seconds, attoseconds) = timeout.components
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var deadline = timespec(tv_sec: now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000, tv_nsec: 0)
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = nanoseconds
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while remaining > 0 {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return remaining <= 0 }
        }
        return true
    }
}

/// A value behind a POSIX mutex (PincheckOpenSSL's `PThreadLocked`, the one implementation:
/// why it is not `Synchronization.Mutex`, and why the value sits behind a pointer, is written there).
package typealias Locked = PThreadLocked

/// Runs actions at instants, on one thread of its own (started when there is something to wait
/// for, ended when there is nothing left): deadlines that hold when Swift's cooperative pool is
/// busy or blocked, which a sleeping task's would not. An action must be short; it runs with no
/// lock held.
package final class Alarm: @unchecked Sendable {
    // The pthread objects are allocated so they never move; `entries` and `running` are guarded
    // by the mutex.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var entries: [(when: ContinuousClock.Instant, action: @Sendable () -> Void)] = []
    private var running = false

    /// The process's alarm: one thread at most, whatever asks.
    package static let shared = Alarm()

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `action` at `when` (at once if that has passed).
    /// - Returns: False when no thread could be started for it (the action then never runs).
    @discardableResult
    package func schedule(at when: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Bool {
        pthread_mutex_lock(mutex)
        entries.append((when, action))
        let start = !running
        if start { running = true }
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
        guard start else { return true }
        if DetachedThread.start(stackSize: 128 * 1024, { [self] in loop() }) { return true }
        pthread_mutex_lock(mutex)
        running = false
        entries.removeAll()
        pthread_mutex_unlock(mutex)
        return false
    }

    private func loop() {
        pthread_mutex_lock(mutex)
        while true {
            guard let earliest = entries.map(\.when).min() else {
                running = false
                pthread_mutex_unlock(mutex)
                return
            }
            let now = ContinuousClock.now
            if earliest <= now {
                let due = entries.filter { $0.when <= now }.map(\.action)
                entries.removeAll { $0.when <= now }
                pthread_mutex_unlock(mutex)
                for action in due { action() }
                pthread_mutex_lock(mutex)
                continue
            }
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let (seconds, attoseconds) = (earliest - now).components
            var nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
            deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
            nanoseconds %= 1_000_000_000
            deadline.tv_nsec = nanoseconds
            _ = pthread_cond_timedwait(condition, mutex, &deadline)
        }
    }
}
