import FoundationEssentials
import Synchronization

extension CertificateTransparency {
    /// Log lists that a running process replaces as the publishers update them.
    ///
    /// A ``Requirement`` made with a store reads the store's logs once per evaluation: an
    /// evaluation in flight finishes under the lists it started with, and every evaluation that
    /// starts after ``update(_:)`` returns judges with the new ones. One store can serve every
    /// host's requirement (a configuration loaded with it, or requirements built by hand), so one
    /// update reaches them all at once.
    ///
    /// Verdicts judged under older lists are not reused: the verdict cache keys a verdict that
    /// read CT logs by the ``generation`` it read.
    ///
    /// An update is refused (`policy.invalid`) when it would roll a publisher's list back: a list
    /// dated earlier than the one in force from the same publisher, or an undated list in place of
    /// a dated one. A validly signed old list could otherwise bring back a log the publisher has
    /// since retired or rejected. Check a list's signature before the update
    /// (`LogList(json:source:signature:publisherKey:publisher:publishedAt:)`, TrustEvaluatorFormats).
    public final class LogStore: Sendable {
        /// The logs in force and the generation that names them.
        package struct Snapshot: Sendable {
            package let logs: Logs
            /// 0 for logs fixed in a requirement; a store's generations are unique in the process.
            package let generation: UInt64
        }

        private let inForce: Locked<Snapshot>

        /// - Parameter logs: The lists in force until the first update.
        public init(_ logs: Logs) {
            inForce = Locked(Snapshot(logs: logs, generation: logStoreGenerations.wrappingAdd(1, ordering: .relaxed).newValue))
        }

        /// The logs in force.
        public var logs: Logs { snapshot.logs }

        /// Names the logs in force: it changes with every accepted update, and no other store in
        /// the process ever has the same one.
        public var generation: UInt64 { snapshot.generation }

        package var snapshot: Snapshot { inForce.withLock { $0 } }

        /// Puts `logs` in force for every evaluation that starts after this returns.
        /// - Throws: `policy.invalid` when a publisher's list in `logs` is older than the one in
        ///   force (or undated where the one in force is dated); the logs in force do not change.
        public func update(_ logs: Logs) throws(PincheckError) {
            let next = logStoreGenerations.wrappingAdd(1, ordering: .relaxed).newValue
            let refusal: PincheckError? = inForce.withLock { current in
                if let refusal = Self.rollback(from: current.logs, to: logs) { return refusal }
                current = Snapshot(logs: logs, generation: next)
                return nil
            }
            if let refusal { throw refusal }
        }

        /// Why `next` would roll a publisher's list back from `inForce`, if it would.
        private static func rollback(from inForce: Logs, to next: Logs) -> PincheckError? {
            for list in next.lists {
                let dates = inForce.lists.filter { $0.publisher == list.publisher }.compactMap(\.timestamp)
                guard let newest = dates.max() else { continue }
                let publisher = list.publisher.rawValue
                guard let date = list.timestamp else {
                    return PincheckError(
                        .invalidPolicy,
                        "the \(publisher) log list is undated and the one in force is dated \(Timestamp.iso8601(newest)): an update that could be a rollback is refused",
                        source: list.source)
                }
                guard date >= newest else {
                    return PincheckError(
                        .invalidPolicy,
                        "the \(publisher) log list is dated \(Timestamp.iso8601(date)), before the one in force (\(Timestamp.iso8601(newest))): a rollback is refused",
                        source: list.source)
                }
            }
            return nil
        }
    }
}

/// Source of ``CertificateTransparency/LogStore`` generations (0 is never one).
private let logStoreGenerations = Atomic<UInt64>(0)
