import Synchronization

/// A lock around code that touches a class's own stored properties (Foundation's `NSLock`
/// without Foundation).
final class Lock: Sendable {
    private let mutex = Mutex(())

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try mutex.withLock { _ in try body() }
    }
}
