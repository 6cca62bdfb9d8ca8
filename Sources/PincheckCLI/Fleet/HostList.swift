import FoundationEssentials
import TrustEvaluator
import TrustEvaluatorCore
#if canImport(Glibc)
import Glibc
#endif

/// The lines of a host list, read once, one at a time under a lock, from whatever the path is:
/// a file, standard input (`-`), a pipe or a FIFO. Lines are bounded (``maximumLineLength``) and
/// so is the whole list (``maximumSize``): a line past the bound is reported, not kept.
final class HostList: Sendable {
    private let descriptor: Int32
    private let isRegularFile: Bool
    private let path: String
    private let reading = Locked(Reading())

    /// Where reading stands; the descriptor is read only under its lock.
    private struct Reading {
        var number = 0
        var buffer: [UInt8] = []
        var atEnd = false
        var bytesRead = 0
        var failure: PincheckError?
    }

    /// The longest host-list line read (a host name is at most 253 bytes; comments fit too).
    static let maximumLineLength = 4_096
    /// The most a host list may hold (two million hosts fit).
    static let maximumSize = 64 << 20
    /// How much of a refused line is echoed back.
    static let echoLength = 64

    struct Line {
        let number: Int
        /// The host text, or a bounded, printable excerpt of a refused line.
        let text: String
        /// Why the line is refused before it is parsed (too long, not UTF-8, a NUL byte).
        let problem: PincheckError?
    }

    /// - Parameters:
    ///   - path: The list's path, or `-` for standard input.
    ///   - writerTimeout: How long a named FIFO may wait for a writer's first line, in seconds.
    /// - Throws: `PincheckError` when the path cannot be opened, is a directory, or is a FIFO no
    ///   one writes to within `writerTimeout`.
    init(path: String, writerTimeout: Double = 10) throws(PincheckError) {
        self.path = path
        // Non-blocking open: a FIFO without a writer opens at once (and then reads as empty)
        // instead of blocking the command for ever; reads are blocking again after.
        let opened = path == "-" ? dup(0) : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard opened >= 0 else {
            throw PincheckError(.unreadableFile, "cannot open the host list: \(String(cString: strerror(errno)))", source: path)
        }
        var status = stat()
        guard fstat(opened, &status) == 0 else {
            close(opened)
            throw PincheckError(.unreadableFile, "cannot read the host list: \(String(cString: strerror(errno)))", source: path)
        }
        if status.st_mode & S_IFMT == S_IFDIR {
            close(opened)
            throw PincheckError(.unreadableFile, "the host list is a directory", source: path)
        }
        // A named FIFO (not a pipe from `<(…)` or `-`, whose writer already exists) waits for its
        // writer no longer than the command's --timeout.
        var linkStatus = stat()
        if path != "-", lstat(path, &linkStatus) == 0, linkStatus.st_mode & S_IFMT == S_IFIFO {
            var poller = pollfd(fd: opened, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat { ready = poll(&poller, 1, Int32(clamping: Int(writerTimeout * 1000))) } while ready < 0 && errno == EINTR
            if ready == 0 {
                close(opened)
                throw PincheckError(.unreadableFile, "no one wrote to the FIFO within \(writerTimeout) s (--timeout)", source: path)
            }
        }
        let flags = fcntl(opened, F_GETFL)
        if flags >= 0 { _ = fcntl(opened, F_SETFL, flags & ~O_NONBLOCK) }
        descriptor = opened
        isRegularFile = status.st_mode & S_IFMT == S_IFREG
    }

    deinit { close(descriptor) }

    /// Why reading stopped early, if it did (a read error, or a list over ``maximumSize``).
    var error: PincheckError? { reading.withLock { $0.failure } }

    /// For a regular file, how many hosts it lists (so the progress bar knows the total), read
    /// through the same descriptor and rewound; nil for anything that can be read only once.
    func countHostsAndRewind(where included: (Line) -> Bool = { _ in true }) -> Int? {
        guard isRegularFile else { return nil }
        var count = 0
        while let line = next() { if included(line) { count += 1 } }
        return reading.withLock { reading in
            guard reading.failure == nil, lseek(descriptor, 0, SEEK_SET) == 0 else { return nil }
            reading = Reading()
            return count
        }
    }

    /// The next host line, without comments and surrounding blanks; `nil` at the end.
    func next() -> Line? {
        reading.withLock { reading in
            while let (raw, tooLong) = readLine(&reading) {
                reading.number += 1
                let number = reading.number
                if tooLong {
                    return Line(
                        number: number, text: Self.excerpt(raw),
                        problem: PincheckError(
                            .tooLarge,
                            "line \(number) is longer than \(Self.maximumLineLength) bytes; a host list holds one HOST[:PORT] per line"))
                }
                if raw.contains(0) {
                    return Line(number: number, text: Self.excerpt(raw), problem: PincheckError(.invalidHost, "line \(number) holds a NUL byte"))
                }
                guard let decoded = String(validating: raw, as: UTF8.self) else {
                    return Line(number: number, text: Self.excerpt(raw), problem: PincheckError(.invalidHost, "line \(number) is not UTF-8"))
                }
                // A private key given by mistake: stop before any of its lines is echoed.
                if PEM.containsPrivateKey(raw) {
                    reading.failure = PincheckError(
                        .unexpectedPEMBlock, "line \(number) begins a private key: this is not a host list (nothing of it is printed)", source: path)
                    reading.atEnd = true
                    reading.buffer = []
                    return nil
                }
                let text = Self.strip(number == 1 ? UnicodeText.droppingByteOrderMark(decoded) : decoded)
                // Key material without a header (a key's body, a key as one base64 line): refused
                // and summarised, never echoed.
                if PEM.looksLikeKeyMaterial(text) {
                    return Line(
                        number: number, text: "(\(raw.count) bytes not shown)",
                        problem: PincheckError(
                            .invalidHost,
                            "line \(number) looks like key material or base64, not a host name (\(raw.count) bytes; nothing of it is printed)"))
                }
                if !text.isEmpty { return Line(number: number, text: text, problem: nil) }
            }
            return nil
        }
    }

    /// One line (without its newline), or its first ``maximumLineLength`` bytes and `true` when
    /// it is longer (the rest is read and dropped). Called under the lock.
    private func readLine(_ reading: inout Reading) -> ([UInt8], Bool)? {
        var tooLong = false
        var kept: [UInt8] = []
        while true {
            if let newline = reading.buffer.firstIndex(of: 0x0A) {
                if !tooLong { kept += reading.buffer[..<newline] }
                reading.buffer.removeSubrange(...newline)
                return (Array(kept.prefix(Self.maximumLineLength)), tooLong || kept.count > Self.maximumLineLength)
            }
            // No newline yet: keep at most one line's worth, and say so past it.
            if !tooLong {
                kept += reading.buffer
                if kept.count > Self.maximumLineLength { tooLong = true; kept.removeSubrange(Self.maximumLineLength...) }
            }
            reading.buffer.removeAll(keepingCapacity: true)
            if reading.atEnd || reading.failure != nil {
                return kept.isEmpty && !tooLong ? nil : (kept, tooLong)
            }
            fill(&reading)
        }
    }

    /// Reads the next chunk into the buffer. Called under the lock.
    private func fill(_ reading: inout Reading) {
        guard reading.bytesRead < Self.maximumSize else {
            reading.failure = PincheckError(.tooLarge, "the host list is larger than \(Self.maximumSize >> 20) MiB", source: path)
            return
        }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                reading.failure = PincheckError(.unreadableFile, "cannot read the host list: \(String(cString: strerror(errno)))", source: path)
            } else if count == 0 {
                reading.atEnd = true
            } else {
                reading.bytesRead += count
                reading.buffer += chunk[..<count]
            }
            return
        }
    }

    /// A refused line as it may be shown: its first ``echoLength`` bytes, printable.
    static func excerpt(_ raw: [UInt8]) -> String {
        let head = String(decoding: raw.prefix(echoLength), as: UTF8.self)
        return Terminal.printable(head) + (raw.count > echoLength ? "…" : "")
    }

    static func strip(_ raw: String) -> String {
        let uncommented = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return uncommented.trimmingWhitespaceCharacters()
    }
}
