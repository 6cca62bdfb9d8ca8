import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Delivers pin validation failure reports (``Verdict/reports``).
public protocol Reporter: Sendable {
    /// Delivers one report.
    /// - Throws: When delivery failed; a report is never retried by Pincheck itself.
    func send(_ report: PinFailureReport) async throws
}

/// Appends each report to a file as one JSON line (RFC 7469 fields). Each report is one
/// `O_APPEND` write, so reporters in several threads or processes never interleave lines.
public struct FileReporter: Reporter {
    /// The file reports are appended to (created with mode 0600 when missing).
    public let path: String
    /// How long one report may wait for a FIFO's reader to make room, in seconds.
    public let timeout: Double

    /// - Parameters:
    ///   - path: The file reports are appended to (created with mode 0600 when missing).
    ///   - timeout: How long a write may wait on a FIFO whose reader is slow (10 s by default).
    public init(path: String, timeout: Double = 10) {
        self.path = path
        self.timeout = timeout
    }

    public func send(_ report: PinFailureReport) async throws {
        try append(report)
    }

    /// Appends one report now. Never blocks for longer than ``timeout``: the file is opened
    /// without waiting (a FIFO nobody reads is refused at once), and each write waits at most
    /// ``timeout`` for room.
    /// - Throws: ``PincheckError`` (`input.unreadable-file`) when the file cannot be opened or
    ///   written, with the system's reason.
    public func append(_ report: PinFailureReport) throws(PincheckError) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == ENXIO ? "it is a FIFO that no process is reading" : String(cString: strerror(errno))
            throw PincheckError(.unreadableFile, "cannot open the report file for appending: \(reason)", source: path)
        }
        defer { close(descriptor) }
        var line = report.json()
        line.append(0x0A)
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        switch WriteAll.write(line, to: descriptor, deadline: deadline) {
        case nil: return
        case .timedOut:
            throw PincheckError(.unreadableFile, "could not write the report within \(timeout) s: nothing is reading it", source: path)
        case .system(let number):
            throw PincheckError(.unreadableFile, "could not write the report: \(WriteAll.Failure.system(number).reason)", source: path)
        }
    }
}

/// Passes a report on unless an equal one (same host, port, served chain and pins) went out
/// within the window: a failing pin on a busy client must not become a report storm.
public actor DeduplicatingReporter: Reporter {
    private let next: any Reporter
    private let window: TimeInterval
    private let now: @Sendable () -> Date
    private var lastSent: [Int: Date] = [:]

    /// - Parameters:
    ///   - next: Where reports that are not duplicates go.
    ///   - window: How long an identical report is suppressed, in seconds (an hour by default).
    ///   - now: The clock; injected for tests.
    public init(_ next: any Reporter, window: TimeInterval = 3_600, now: @escaping @Sendable () -> Date = Date.init) {
        self.next = next
        self.window = window
        self.now = now
    }

    public func send(_ report: PinFailureReport) async throws {
        var hasher = Hasher()
        hasher.combine(report.hostname)
        hasher.combine(report.port)
        hasher.combine(report.servedCertificateChain)
        hasher.combine(report.knownPins)
        let key = hasher.finalize()
        let time = now()
        if let last = lastSent[key], time.timeIntervalSince(last) < window { return }
        lastSent[key] = time
        lastSent = lastSent.filter { time.timeIntervalSince($0.value) < window }
        try await next.send(report)
    }
}
