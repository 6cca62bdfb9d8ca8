#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one write loop: every byte of a buffer to a descriptor, however many `write` calls that
/// takes. Package access: for Pincheck's own modules (files, the console, the records file, reports).
package enum WriteAll {
    /// Why a write stopped short.
    package enum Failure: Error, Equatable {
        /// The system's error number.
        case system(Int32)
        /// A non-blocking descriptor took nothing more before the deadline.
        case timedOut

        /// The reason as the system words it.
        package var reason: String {
            switch self {
            case .system(let number): String(cString: strerror(number))
            case .timedOut: "timed out"
            }
        }
    }

    /// Writes all of `bytes` to `descriptor`, retrying interrupted and partial writes. On a
    /// non-blocking descriptor that is full, waits for room until `deadline` (without one, a full
    /// descriptor is a failure).
    /// - Returns: nil when everything was written, else why not.
    @discardableResult
    package static func write(_ bytes: some Collection<UInt8>, to descriptor: Int32, deadline: ContinuousClock.Instant? = nil) -> Failure? {
        let contiguous = bytes.withContiguousStorageIfAvailable { write($0, to: descriptor, deadline: deadline) }
        if let contiguous { return contiguous }
        return Array(bytes).withUnsafeBufferPointer { write($0, to: descriptor, deadline: deadline) }
    }

    private static func write(_ buffer: UnsafeBufferPointer<UInt8>, to descriptor: Int32, deadline: ContinuousClock.Instant?) -> Failure? {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written >= 0 {
                offset += written
                continue
            }
            let number = errno
            if number == EINTR { continue }
            guard number == EAGAIN || number == EWOULDBLOCK, let deadline else { return .system(number) }
            guard waitForRoom(on: descriptor, until: deadline) else { return .timedOut }
        }
        return nil
    }

    private static func waitForRoom(on descriptor: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        let left = deadline - ContinuousClock.now
        let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return milliseconds > 0 && poll(&poller, 1, Int32(clamping: milliseconds)) > 0
    }
}
