import TrustEvaluator

/// The failure-report deliveries an adapter has started and not yet finished: reports go out
/// without delaying a challenge's answer, and a process about to exit waits for them here so that
/// none is lost (``ChallengeAdapter/reportsDelivered()``).
final class ReportDeliveries: Sendable {
    private let pending = Locked<(next: UInt64, tasks: [UInt64: Task<Void, Never>])>((0, [:]))

    /// Runs `delivery` on its own task, tracked until it finishes.
    func start(_ delivery: @escaping @Sendable () async -> Void) {
        // The task is stored under the lock it takes to remove itself, so it is never removed
        // before it is stored, however soon it finishes.
        pending.withLock { state in
            let id = state.next
            state.next += 1
            state.tasks[id] = Task.detached { [self] in
                await delivery()
                _ = pending.withLock { $0.tasks.removeValue(forKey: id) }
            }
        }
    }

    /// Returns once every delivery started before the call has finished.
    func finished() async {
        for task in pending.withLock({ Array($0.tasks.values) }) { await task.value }
    }
}
