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
package final class Latch: Sendable {
    private let remaining: Locked<Int>

    package init(count: Int = 1) { remaining = Locked(count) }

    package func signal() { remaining.withLockSignalling { $0 -= 1 } }

    package func wait() { remaining.withLock(waitingFor: { $0 <= 0 ? .done(()) : .wait(until: nil) }) }

    /// Waits until the count reaches zero or `timeout` has passed; true when it reached zero.
    package func wait(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        return remaining.withLock(waitingFor: { remaining in
            if remaining <= 0 { return .done(true) }
            return ContinuousClock.now >= deadline ? .done(false) : .wait(until: deadline)
        })
    }
}

/// A value behind a POSIX mutex (PincheckOpenSSL's `PThreadLocked`, the one implementation:
/// why it is not `Synchronization.Mutex`, and why the value sits behind a pointer, is written there).
package typealias Locked = PThreadLocked

/// Runs actions at instants, on one thread of its own (started when there is something to wait
/// for, ended when there is nothing left): deadlines that hold when Swift's cooperative pool is
/// busy or blocked, which a sleeping task's would not. An action must be short; it runs with no
/// lock held.
package final class Alarm: Sendable {
    private struct State {
        var entries: [(when: ContinuousClock.Instant, action: @Sendable () -> Void)] = []
        var running = false
    }

    private let state = Locked(State())

    /// The process's alarm: one thread at most, whatever asks.
    package static let shared = Alarm()

    package init() {}

    /// Runs `action` at `when` (at once if that has passed).
    /// - Returns: False when no thread could be started for it (the action then never runs).
    @discardableResult
    package func schedule(at when: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Bool {
        let start = state.withLockSignalling { state in
            state.entries.append((when, action))
            defer { state.running = true }
            return !state.running
        }
        guard start else { return true }
        if DetachedThread.start(stackSize: 128 * 1024, { [self] in loop() }) { return true }
        state.withLock { state in
            state.running = false
            state.entries.removeAll()
        }
        return false
    }

    private func loop() {
        while let due = nextDue() {
            for action in due { action() }
        }
    }

    /// The actions now due, once there are some; nil (and the thread marked gone) when none is left.
    private func nextDue() -> [@Sendable () -> Void]? {
        state.withLock(waitingFor: { state in
            guard let earliest = state.entries.map(\.when).min() else {
                state.running = false
                return .done(nil)
            }
            let now = ContinuousClock.now
            guard earliest <= now else { return .wait(until: earliest) }
            let due = state.entries.filter { $0.when <= now }.map(\.action)
            state.entries.removeAll { $0.when <= now }
            return .done(due)
        })
    }
}
