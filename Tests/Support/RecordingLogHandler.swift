import Logging
import Synchronization

/// Keeps every record a logger produced.
public final class RecordingLogHandler: LogHandler, Sendable {
    public struct Record: Sendable {
        public let level: Logger.Level
        public let message: String
        public let metadata: [String: String]
    }
    private let records = Mutex<[Record]>([])
    public init() {}
    public var all: [Record] { records.withLock { $0 } }

    public var logLevel: Logger.Level {
        get { .trace }
        set { }
    }
    public var metadata: Logger.Metadata {
        get { [:] }
        set { }
    }
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set { }
    }

    public func log(event: LogEvent) {
        let flat = (event.metadata ?? [:]).mapValues { "\($0)" }
        records.withLock { $0.append(Record(level: event.level, message: "\(event.message)", metadata: flat)) }
    }
}
