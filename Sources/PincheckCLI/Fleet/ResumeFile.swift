import FoundationEssentials
import PincheckOpenSSL
import TrustEvaluator
#if canImport(Glibc)
import Glibc
#endif

/// The arguments the running command was invoked with (``Pincheck/run(_:output:errors:)`` sets
/// them): what a records file is checked against (no input is ever the records file) and what its
/// records' run fingerprint is made of.
package enum Invocation {
    @TaskLocal package static var arguments: [String] = []
}

/// What made a record: the command, Pincheck's version, and a digest of the options and input
/// files that decide its verdicts. A run with other options finds records it did not make this way
/// and says so, rather than skipping hosts it never judged as asked.
package struct RunFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// `scan`, `audit`, `watch`.
    package let command: String
    /// Hex of the first 8 bytes of the SHA-256 of the version, the deciding arguments and the
    /// contents of the files they name.
    package let digest: String

    /// The options that only say how much of the work this job does, how fast, or where it is shown:
    /// the same hosts judged the same way, whatever they are. The value-taking ones and the flags.
    static let workOptions: Set<String> = [
        "--resume", "--records", "--shard", "--rate", "--concurrency", "--hosts",
        "--interval", "--rounds", "--listen",
    ]
    static let workFlags: Set<String> = ["--shard-from-env", "--wait-lock", "--json", "--progress", "--no-progress"]

    package init(command: String, arguments: [String]) {
        self.command = command
        var hashed: [UInt8] = Array("pincheck \(PincheckVersion.current)\u{0}\(command)\u{0}".utf8)
        var skipValue = false
        for argument in arguments {
            if skipValue { skipValue = false; continue }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if Self.workFlags.contains(argument) { continue }
            if Self.workOptions.contains(name) {
                skipValue = !argument.contains("=")
                continue
            }
            hashed += Array(argument.utf8) + [0]
            // A file an argument names decides by its contents (a configuration, anchors, CRLs).
            let value = argument.hasPrefix("--") && argument.contains("=") ? String(argument.split(separator: "=", maxSplits: 1)[1]) : argument
            if let contents = Self.regularFileContents(value) { hashed += Digest.sha256(contents) }
        }
        digest = Digest.sha256(hashed).prefix(8).map { byte in
            let hex = Array("0123456789abcdef".utf8)
            return String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
        }.joined()
    }

    /// `command/digest`, as the records carry it in their `run` field.
    package var description: String { "\(command)/\(digest)" }

    /// The bytes of `path` when it is a regular file of at most 64 MiB.
    private static func regularFileContents(_ path: String) -> [UInt8]? {
        var status = stat()
        guard !path.isEmpty, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return try? InputFile.read(path, limit: 64 << 20)
    }
}

/// The JSON-lines file of `--resume` (and `watch --records`): the keys of the records already in
/// it, and the records this run appends. Each record carries the run fingerprint of the run that
/// wrote it (`{"run":"scan/…",…}`), so a line is a record only when this command wrote it.
///
/// What it never does: destroy a file the command reads (a records file that is also an input is
/// refused before anything is read), cut a last line that is not the start of one of this
/// command's records (a one-line configuration without its newline stays whole), or share the
/// file with another job (an exclusive lock for as long as the file is open; appends are whole
/// lines in one `O_APPEND` write).
package final class ResumeFile: Sendable {
    /// Held for each append, so two records never interleave.
    private let appending = Locked(())
    private let descriptor: Int32
    let path: String
    /// The run this job appends as.
    package let run: RunFingerprint
    /// The keys of the records the file held when it was opened.
    let recorded: Set<String>
    /// Bytes of a half-written last line that were cut off.
    let cutBytes: Int

    /// The longest record line read back (a chain of many large certificates fits).
    static let maximumLineLength = 16 << 20

    /// Opens (or creates) `path`, locked for this job alone.
    /// - Parameters:
    ///   - key: A record's key (`HOST:PORT` for scan), given the record line; nil when it is not one.
    ///   - run: What this run is; by default the command named `command` with the invocation's arguments.
    ///   - sameRunOnly: Whether records of another run refuse the file (`--resume`: skipping a host
    ///     judged otherwise would be wrong); `watch --records`, a log, keeps them.
    ///   - inputs: Files the command reads; by default every argument of the invocation that names one.
    ///   - waitForLock: Wait for another job's lock instead of refusing.
    /// - Throws: ``PincheckError`` `input.unreadable-file` when the file cannot be opened or locked, is
    ///   an input, or holds a line that is not this command's record; `input.too-large` for a line
    ///   over ``maximumLineLength``; `policy.invalid` for records of another run with `sameRunOnly`.
    package init(
        path: String, run: RunFingerprint, sameRunOnly: Bool = true, inputs: [String] = Invocation.arguments,
        waitForLock: Bool = false, key: ([UInt8]) -> String?
    ) throws(PincheckError) {
        self.path = path
        self.run = run
        let opened = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw PincheckError(.unreadableFile, "cannot open the records file: \(String(cString: strerror(errno)))", source: path)
        }
        do throws(PincheckError) {
            let identity = try Self.checkedIdentity(opened, path: path, inputs: inputs)
            try Self.lock(opened, identity: identity, path: path, wait: waitForLock)
            let contents = try Self.readRecords(opened, path: path, run: run, sameRunOnly: sameRunOnly, key: key)
            if contents.partial > 0, ftruncate(opened, off_t(contents.completeBytes)) != 0 {
                throw PincheckError(
                    .unreadableFile, "cannot cut the half-written last record off the records file: \(String(cString: strerror(errno)))", source: path
                )
            }
            recorded = contents.keys
            cutBytes = contents.partial
        } catch {
            close(opened)
            throw error
        }
        descriptor = opened
    }

    deinit { close(descriptor) }

    /// The file's device and inode, after checking that it is a regular file and none of `inputs`.
    private static func checkedIdentity(_ descriptor: Int32, path: String, inputs: [String]) throws(PincheckError) -> (dev_t, ino_t) {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw PincheckError(.unreadableFile, "the records file is not a regular file", source: path)
        }
        // The records option's own argument names the file once; any other argument naming it
        // (by any spelling: same device and inode) is an input.
        var ownArgumentSeen = false
        for input in inputs {
            let value = input.hasPrefix("--") && input.contains("=") ? String(input.split(separator: "=", maxSplits: 1)[1]) : input
            if value == path, !ownArgumentSeen {
                ownArgumentSeen = true
                continue
            }
            var other = stat()
            if stat(value, &other) == 0, other.st_dev == status.st_dev, other.st_ino == status.st_ino {
                throw PincheckError(
                    .unreadableFile,
                    "the records file is also an input of this command (\(value)): records are written to a file of their own, never to one the command reads; nothing was changed",
                    source: path)
            }
        }
        return (status.st_dev, status.st_ino)
    }

    /// An exclusive `flock` for as long as the descriptor is open; another job's lock refuses (naming
    /// its process, from /proc/locks) or, with `wait`, is waited for.
    private static func lock(_ descriptor: Int32, identity: (dev_t, ino_t), path: String, wait: Bool) throws(PincheckError) {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
        guard errno == EWOULDBLOCK else {
            throw PincheckError(.unreadableFile, "cannot lock the records file: \(String(cString: strerror(errno)))", source: path)
        }
        let holder = lockHolder(identity).map { "process \($0)" } ?? "another process"
        guard wait else {
            throw PincheckError(
                .unreadableFile,
                "the records file is locked by \(holder): two jobs never share one records file (give each its own, or --wait-lock to wait for this one)",
                source: path)
        }
        Console.standardError.line("pincheck: note: waiting for \(holder) to release \(path) (--wait-lock)")
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw PincheckError(.unreadableFile, "cannot lock the records file: \(String(cString: strerror(errno)))", source: path)
            }
        }
    }

    /// The process holding a `flock` on the file, as /proc/locks lists it (`FLOCK ADVISORY WRITE PID MAJ:MIN:INODE …`).
    static func lockHolder(_ identity: (dev_t, ino_t)) -> Int32? {
        guard let text = try? InputFile.read("/proc/locks", limit: 16 << 20) else { return nil }
        let major = (identity.0 >> 8) & 0xfff, minor = (identity.0 & 0xff) | ((identity.0 >> 12) & 0xfff00)
        let device = String(major, radix: 16, uppercase: false).leftPadded(2) + ":" + String(minor, radix: 16).leftPadded(2)
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK" else { continue }
            let place = fields[5].split(separator: ":")
            guard place.count == 3, "\(place[0]):\(place[1])" == device, UInt64(place[2]) == UInt64(identity.1) else { continue }
            if let pid = Int32(fields[4]) { return pid }
        }
        return nil
    }

    private struct Contents { var keys: Set<String> = []; var completeBytes = 0; var partial = 0 }

    /// Reads every line: each complete one must be this command's record (of this run, with
    /// `sameRunOnly`); a last line without its newline is cut only when it starts as one would.
    private static func readRecords(
        _ descriptor: Int32, path: String, run: RunFingerprint, sameRunOnly: Bool,
        key: ([UInt8]) -> String?
    ) throws(PincheckError) -> Contents {
        var contents = Contents()
        var pending: [UInt8] = []
        var lineNumber = 0
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        guard lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw PincheckError(.unreadableFile, "cannot read the records file: \(String(cString: strerror(errno)))", source: path)
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw PincheckError(.unreadableFile, "cannot read the records file: \(String(cString: strerror(errno)))", source: path)
            }
            if count == 0 { break }
            var start = 0
            while let newline = chunk[start..<count].firstIndex(of: 0x0A) {
                pending += chunk[start..<newline]
                lineNumber += 1
                if !pending.isEmpty {
                    contents.keys.insert(try record(pending, line: lineNumber, path: path, run: run, sameRunOnly: sameRunOnly, key: key))
                }
                contents.completeBytes += pending.count + 1
                pending.removeAll(keepingCapacity: true)
                start = newline + 1
            }
            pending += chunk[start..<count]
            guard pending.count <= maximumLineLength else {
                throw PincheckError(
                    .tooLarge, "line \(lineNumber + 1) of the records file is longer than \(maximumLineLength >> 20) MiB", source: path)
            }
        }
        if !pending.isEmpty {
            // A job killed mid-write leaves the start of one of its records; anything else is not ours to cut.
            let start = Array(#"{"run":"\#(run.command)/"#.utf8)
            guard pending.starts(with: start) || start.starts(with: pending) else {
                throw PincheckError(
                    .unreadableFile,
                    "the last line of the records file (line \(lineNumber + 1)) has no newline and is not the start of a \(run.command) record: is this the right file? Nothing was changed",
                    source: path)
            }
            contents.partial = pending.count
        }
        return contents
    }

    /// The key of one complete record line.
    private static func record(
        _ line: [UInt8], line number: Int, path: String, run: RunFingerprint, sameRunOnly: Bool,
        key: ([UInt8]) -> String?
    ) throws(PincheckError) -> String {
        struct Stamp: Decodable { let run: String }
        guard let stamp = try? JSONDecoder().decode(Stamp.self, from: Data(line)), stamp.run.hasPrefix("\(run.command)/"),
            let recordKey = key(line)
        else {
            throw PincheckError(
                .unreadableFile,
                "line \(number) of the records file is not a \(run.command) record (each carries the run that wrote it: {\"run\":\"\(run.command)/…\",…}): give a file that only this command writes",
                source: path)
        }
        if sameRunOnly, stamp.run != run.description {
            throw PincheckError(
                .invalidPolicy,
                "line \(number) of the records file was written by another run (\(stamp.run); this one is \(run)): other options, input files or another pincheck judge hosts differently, so resuming would skip hosts this run never judged; resume with the same command, options and version, or give a new file",
                source: path)
        }
        return recordKey
    }

    /// The record as written: the line with this run's fingerprint as its first field.
    package func stamped(_ line: String) -> String {
        guard line.hasPrefix("{") else { return line }
        let rest = line.dropFirst()
        return #"{"run":"\#(run)""# + (rest.hasPrefix("}") ? "" : ",") + rest
    }

    /// Appends one record line (stamped, a newline added) in one `O_APPEND` write: a job killed
    /// mid-record leaves at most that line half-written, which the next run cuts off.
    /// - Throws: ``PincheckError`` `input.unreadable-file` when the write fails (a full disk).
    package func append(_ line: String) throws(PincheckError) {
        let bytes = Array((stamped(line) + "\n").utf8)
        if let failure = appending.withLock({ _ in WriteAll.write(bytes, to: descriptor) }) {
            throw PincheckError(.unreadableFile, "cannot write to the records file: \(failure.reason)", source: path)
        }
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
