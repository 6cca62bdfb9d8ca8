import FoundationEssentials
import TrustEvaluatorCore

/// The property-list reading the TrustKit and App Transport Security importers share.
extension ConfigurationImporter {
    /// A plist's per-domain dictionaries in name order, each with its key path; a domain whose
    /// value is not a dictionary, or holds a key outside `allowed`, is an error naming it.
    static func domainSettings(
        _ domains: [String: PlistValue], in key: String, allowing allowed: Set<String>,
        source: String
    ) throws(PincheckError) -> [(String, String, [String: PlistValue])] {
        var result: [(String, String, [String: PlistValue])] = []
        for domain in domains.keys.sorted() {
            let path = "\(key).\(domain)"
            guard let settings = domains[domain]?.dictionary else {
                throw PincheckError(.invalidPolicy, "\(path): not a dictionary", source: source)
            }
            if let unknown = settings.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw PincheckError(.invalidPolicy, "\(path).\(unknown): unknown \(key) key", source: source)
            }
            result.append((domain, path, settings))
        }
        return result
    }

    /// A property list's top dictionary, XML or binary (a built app's Info.plist), with the
    /// importers' guards: UTF-8 XML, and bounded nesting and size.
    static func plistDictionary(_ data: Data, source: String, format: String) throws(PincheckError) -> [String: PlistValue] {
        let tooDeep = PincheckError(.invalidPolicy, "the property list nests more than \(PlistValue.maximumDepth) levels deep", source: source)
        if data.starts(with: BinaryPlistShape.magic) {
            switch BinaryPlistShape.check([UInt8](data), maximumDepth: PlistValue.maximumDepth, maximumValues: PlistValue.maximumValues) {
            case .fits: break
            case .tooDeep: throw tooDeep
            case .tooLarge:
                throw PincheckError(
                    .invalidPolicy, "the binary property list expands to more than \(PlistValue.maximumValues) values", source: source)
            case .malformed:
                throw PincheckError(.invalidPolicy, "not a property list (a binary plist whose object table cannot be read)", source: source)
            }
        } else {
            guard String(validating: data, as: UTF8.self) != nil else {
                throw PincheckError(.invalidPolicy, "not valid UTF-8 (\(format) configurations are plist XML or binary plists)", source: source)
            }
            guard PlistValue.nestingDepth(data) <= PlistValue.maximumDepth else { throw tooDeep }
            if let problem = PlistValue.xmlRootProblem(data) {
                throw PincheckError(.invalidPolicy, "not a property list: \(problem)", source: source)
            }
        }
        let object: PlistValue
        do { object = try PropertyListDecoder().decode(PlistValue.self, from: data) } catch {
            throw PincheckError(.invalidPolicy, "not a property list (\(format) configurations are plist XML or binary plists)", source: source)
        }
        guard let dictionary = object.dictionary else {
            throw PincheckError(.invalidPolicy, "the property list is not a dictionary", source: source)
        }
        return dictionary
    }
}

/// A property-list value, read with FoundationEssentials' `PropertyListDecoder` (no
/// `PropertyListSerialization`, which would link all of Foundation).
enum PlistValue: Decodable {
    case dictionary([String: PlistValue])
    case array([PlistValue])
    case string(String)
    case bool(Bool)
    case integer(Int)
    case real(Double)
    case date(Date)
    case data(Data)

    /// Deeper documents are refused before parsing (TrustKit configurations nest 4 levels).
    static let maximumDepth = 64
    /// A binary plist that expands to more values is refused before parsing (an app's whole
    /// Info.plist holds hundreds).
    static let maximumValues = 200_000

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var dictionary: [String: PlistValue] = [:]
            for key in keyed.allKeys { dictionary[key.stringValue] = try keyed.decode(PlistValue.self, forKey: key) }
            self = .dictionary(dictionary)
        } else if var unkeyed = try? decoder.unkeyedContainer() {
            var array: [PlistValue] = []
            while !unkeyed.isAtEnd { array.append(try unkeyed.decode(PlistValue.self)) }
            self = .array(array)
        } else {
            let single = try decoder.singleValueContainer()
            if let value = try? single.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? single.decode(Int.self) {
                self = .integer(value)
            } else if let value = try? single.decode(Double.self) {
                self = .real(value)
            } else if let value = try? single.decode(String.self) {
                self = .string(value)
            } else if let value = try? single.decode(Date.self) {
                self = .date(value)
            } else {
                self = .data(try single.decode(Data.self))
            }
        }
    }

    var dictionary: [String: PlistValue]? { if case .dictionary(let value) = self { value } else { nil } }
    var string: String? { if case .string(let value) = self { value } else { nil } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// Why an XML property list is not one document with one value (nil: it is): a second
    /// `<plist>` element, or a `<plist>` holding more than one value. Apple's parser refuses both;
    /// the decoder here would read the first and drop the rest. The prolog (declaration, DOCTYPE)
    /// is skipped: the strict reader checks from the `<plist>` element on.
    static func xmlRootProblem(_ data: Data) -> String? {
        let bytes = [UInt8](data)
        let marker = Array("<plist".utf8)
        guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) else { return nil }
        var reader = XMLReader(Data(bytes[start...]))
        var depth = 0
        var values = 0
        var closed = false
        do {
            while let event = try reader.next() {
                switch event {
                case .start:
                    if depth == 1 { values += 1 }
                    depth += 1
                case .end:
                    depth -= 1
                    closed = depth == 0
                case .text:
                    break
                }
            }
        } catch {
            // Anything after </plist> but comments and white space: a second document (its
            // <?xml?> declaration and DOCTYPE fail before its <plist> does) or a second root.
            if closed { return "content after the </plist> element (a second document or root element?)" }
            if case .contentAfterRoot = error.problem { return "content after the </plist> element (a second root element?)" }
            return nil  // Anything else is the decoder's to refuse, with its own message.
        }
        return values > 1 ? "the <plist> element holds \(values) values; a property list holds exactly one" : nil
    }

    /// The value as Objective-C's `-boolValue` reads it, which is how TrustKit reads its flags:
    /// a number is true when not zero; a string (NSString's rule) when, after leading white space,
    /// an optional sign and leading zeros, it starts with Y, y, T, t or a digit 1–9 ("YES",
    /// "true", "1"). Nil for what has no `-boolValue` (data, dates, arrays, dictionaries): TrustKit
    /// would raise an exception on it.
    var objectiveCBoolValue: Bool? {
        switch self {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        case .real(let value): return value != 0
        case .string(let text):
            var rest = Substring(text).drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
            rest = rest.drop { $0 == "0" }
            guard let first = rest.first else { return false }
            return "YyTt123456789".contains(first)
        case .dictionary, .array, .date, .data: return nil
        }
    }
    /// An array of strings only; nil if any element is something else.
    var strings: [String]? {
        guard case .array(let values) = self else { return nil }
        var result: [String] = []
        for value in values {
            guard let text = value.string else { return nil }
            result.append(text)
        }
        return result
    }

    private static let nestingNames = [Array("dict".utf8), Array("array".utf8)]

    /// The deepest nesting of `<dict>` and `<array>` elements in plist XML, counted on the bytes
    /// (self-closing `<dict/>` and `<array/>` do not nest).
    static func nestingDepth(_ data: Data) -> Int {
        var depth = 0
        var deepest = 0
        let bytes = [UInt8](data)
        var index = 0
        func matches(_ word: [UInt8], at start: Int) -> Bool {
            start + word.count <= bytes.count && bytes[start..<(start + word.count)].elementsEqual(word)
        }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "<") {
                let closing = index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/")
                let nameStart = closing ? index + 2 : index + 1
                for name in nestingNames where matches(name, at: nameStart) {
                    let after = nameStart + name.count
                    let end = after < bytes.count ? bytes[after] : 0
                    let selfClosing = end == UInt8(ascii: "/")
                    guard end == UInt8(ascii: ">") || end == UInt8(ascii: " ") || selfClosing else { continue }
                    if closing {
                        depth -= 1
                    } else if !selfClosing {
                        depth += 1
                        deepest = max(deepest, depth)
                    }
                }
            }
            index += 1
        }
        return deepest
    }
}
