import TrustEvaluatorCore

/// The shape of a binary property list (`bplist00`, what Xcode leaves in a built app's
/// Info.plist), read from its object table before anything is decoded: how deep its containers
/// nest and how many values it expands to. A binary plist names its children by reference, so a
/// crafted one can nest without end (a cycle) or grow exponentially (one array referenced twice at
/// every level); both are refused before `PropertyListDecoder` builds a tree from it.
enum BinaryPlistShape {
    enum Verdict: Equatable {
        case fits
        /// The containers nest deeper than allowed, or refer to themselves.
        case tooDeep
        /// Read as a tree, it holds more values than allowed.
        case tooLarge
        /// The header, trailer, offset table or an object's references cannot be read.
        case malformed
    }

    static let magic = Array("bplist00".utf8)

    /// The trailer's tables: where each object starts and how references are written.
    private struct Layout {
        let bytes: [UInt8]
        let count: Int
        let top: Int
        let table: Int
        let offsetSize: Int
        let referenceSize: Int

        init?(_ bytes: [UInt8]) {
            guard bytes.count >= BinaryPlistShape.magic.count + 33, bytes.starts(with: BinaryPlistShape.magic) else { return nil }
            self.bytes = bytes
            let trailer = bytes.count - 32
            (offsetSize, referenceSize) = (Int(bytes[trailer + 6]), Int(bytes[trailer + 7]))
            guard let count = Self.integer(bytes, trailer + 8, 8), let top = Self.integer(bytes, trailer + 16, 8),
                let table = Self.integer(bytes, trailer + 24, 8),
                (1...8).contains(offsetSize), (1...8).contains(referenceSize),
                count >= 1, count <= trailer, top < count, table >= BinaryPlistShape.magic.count, table <= trailer - count * offsetSize
            else {
                return nil
            }
            (self.count, self.top, self.table) = (count, top, table)
        }

        func integer(_ start: Int, _ width: Int) -> Int? { Self.integer(bytes, start, width) }

        /// A big-endian unsigned integer of 1 to 8 bytes inside the object area and tables.
        static func integer(_ bytes: [UInt8], _ start: Int, _ width: Int) -> Int? {
            guard (1...8).contains(width), start >= 0, start <= bytes.count - width else { return nil }
            var value: UInt64 = 0
            for byte in bytes[start..<(start + width)] { value = value << 8 | UInt64(byte) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }

        /// The objects a container refers to (a dictionary's keys and values); none for a scalar.
        func references(_ object: Int) -> [Int]? {
            guard let start = integer(table + object * offsetSize, offsetSize), start >= BinaryPlistShape.magic.count, start < table else {
                return nil
            }
            let kind = bytes[start] >> 4
            guard kind == 0xA || kind == 0xC || kind == 0xD else { return [] }  // array, set, dictionary
            var length = Int(bytes[start] & 0x0F)
            var cursor = start + 1
            if length == 0x0F {  // the count follows as an integer object
                guard cursor < table, bytes[cursor] >> 4 == 0x1 else { return nil }
                let width = 1 << Int(bytes[cursor] & 0x0F)
                guard let value = integer(cursor + 1, width), value <= table else { return nil }
                length = value
                cursor += 1 + width
            }
            let total = kind == 0xD ? 2 * length : length
            guard cursor <= table - total * referenceSize else { return nil }
            var result: [Int] = []
            result.reserveCapacity(total)
            for index in 0..<total {
                guard let reference = integer(cursor + index * referenceSize, referenceSize), reference < count else { return nil }
                result.append(reference)
            }
            return result
        }
    }

    static func check(_ bytes: [UInt8], maximumDepth: Int, maximumValues: Int) -> Verdict {
        guard let layout = Layout(bytes) else { return .malformed }
        let (count, top) = (layout.count, layout.top)
        // Each object's depth and tree size, computed once: post-order, on an explicit stack that
        // is never deeper than the depth allowed.
        var state = [UInt8](repeating: 0, count: count)  // 0 unseen, 1 on the stack, 2 measured
        var depth = [Int](repeating: 0, count: count)
        var values = [Int](repeating: 0, count: count)
        guard let first = layout.references(top) else { return .malformed }
        var stack: [(object: Int, references: [Int], next: Int)] = [(top, first, 0)]
        state[top] = 1
        while let frame = stack.last {
            if frame.next < frame.references.count {
                let child = frame.references[frame.next]
                stack[stack.count - 1].next += 1
                switch state[child] {
                case 1: return .tooDeep  // a container that contains itself
                case 2: continue
                default:
                    guard stack.count < maximumDepth else { return .tooDeep }
                    guard let grandchildren = layout.references(child) else { return .malformed }
                    state[child] = 1
                    stack.append((child, grandchildren, 0))
                }
            } else {
                stack.removeLast()
                depth[frame.object] = 1 + (frame.references.map { depth[$0] }.max() ?? 0)
                values[frame.object] = frame.references.reduce(1) { min($0 + values[$1], maximumValues + 1) }
                guard values[frame.object] <= maximumValues else { return .tooLarge }
                state[frame.object] = 2
            }
        }
        return depth[top] <= maximumDepth ? .fits : .tooDeep
    }
}
