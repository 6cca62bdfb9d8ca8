import FoundationEssentials
import TrustEvaluatorCore
#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes. Standard output and error in the binary; a buffer in tests.
public final class Console: Sendable {
    /// What a capturing console has received.
    private let text = Locked("")
    /// The first write error, as `strerror` says it.
    private let failure = Locked<String?>(nil)
    /// The descriptor written to; nil for a capturing console.
    private let fileDescriptor: Int32?
    /// True when writing to a terminal: colour and progress are shown only then.
    public let isTerminal: Bool

    /// A console writing to a file descriptor (1 or 2).
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        isTerminal = isatty(fileDescriptor) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    }

    /// A console that keeps what is written, for tests.
    public init(capturing: Void = ()) {
        fileDescriptor = nil
        isTerminal = false
    }

    public static let standardOutput = Console(fileDescriptor: 1)
    public static let standardError = Console(fileDescriptor: 2)

    /// Writes `string` as it is (add the newline yourself).
    public func write(_ string: String) {
        guard let fileDescriptor else {
            text.withLock { $0 += string }
            return
        }
        // A closed descriptor or a full disk: nothing more can be said there, and the command
        // must not claim success (`Pincheck.run` turns this into exit 2).
        if let reason = WriteAll.write(string.utf8, to: fileDescriptor)?.reason {
            failure.withLock { if $0 == nil { $0 = reason } }
        }
    }

    /// Why a write failed, if one did.
    public var writeFailure: String? { failure.withLock { $0 } }

    /// Writes one line.
    public func line(_ string: String = "") { write(string + "\n") }

    /// What a capturing console has received.
    public var captured: String { text.withLock { $0 } }

    /// `string` in an ANSI colour on a terminal, plain otherwise.
    func paint(_ string: String, _ colour: Colour) -> String {
        isTerminal ? "\u{1B}[\(colour.rawValue)m\(string)\u{1B}[0m" : string
    }

    enum Colour: String {
        case red = "31", green = "32", yellow = "33", dim = "2", bold = "1"
    }
}

/// Left-aligned columns, padded to the widest cell (colour codes are not counted).
struct Table {
    var rows: [[String]] = []

    mutating func add(_ row: [String]) { rows.append(row) }

    func render(indent: String = "", visibleWidth: (String) -> Int = Table.visibleWidth) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], visibleWidth(cell)) } }
        return rows.map { row in
            var line = indent
            for (index, cell) in row.enumerated() {
                line += cell
                if index < row.count - 1 { line += String(repeating: " ", count: widths[index] - visibleWidth(cell) + 2) }
            }
            return line
        }
    }

    static func visibleWidth(_ string: String) -> Int {
        var count = 0
        var inEscape = false
        for scalar in string.unicodeScalars {
            if scalar == "\u{1B}" { inEscape = true; continue }
            if inEscape { if scalar == "m" { inEscape = false }; continue }
            count += 1
        }
        return count
    }
}
