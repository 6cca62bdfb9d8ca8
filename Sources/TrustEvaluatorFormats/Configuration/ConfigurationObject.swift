import TrustEvaluatorCore

/// Where in a configuration a value is wrong, and why: "hosts[3].pins[1]: …". Becomes a
/// `PincheckError` naming the file once the decoder knows it.
struct ConfigurationFieldError: Error {
    let path: String
    let message: String

    init(_ path: String, _ message: String) {
        self.path = path.isEmpty ? "(top level)" : path
        self.message = message
    }

    func error(source: String) -> PincheckError {
        PincheckError(.invalidPolicy, "\(path): \(message)", source: source)
    }
}

/// One JSON object of a configuration, read strictly: a key the section does not define is an
/// error at its path, a value of the wrong kind is an error at its path, and `null` reads as absent.
struct ConfigurationObject<Keys: CodingKey & CaseIterable & Equatable> {
    let path: String
    /// The object's members, each under its key: a handful per object, found by a short scan
    /// (a configuration of 20,000 hosts reads 20,000 of these objects; no set or table per object).
    private var fields: [(key: Keys, value: JSONValue)] = []

    init(_ value: JSONValue, at path: String) throws(ConfigurationFieldError) {
        guard case .object(let members) = value else { throw ConfigurationFieldError(path, "expected an object ({…})") }
        self.path = path
        fields.reserveCapacity(members.count)
        var unknown: String? = nil
        for (name, value) in members {
            guard let key = Keys(stringValue: name) else {
                // The first in name order, so the same file always names the same key.
                if unknown.map({ name < $0 }) ?? true { unknown = name }
                continue
            }
            if case .null = value { continue }
            fields.append((key, value))
        }
        if let unknown { throw ConfigurationFieldError(Self.child(path, unknown), "unknown key") }
    }

    static func child(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func path(_ key: Keys) -> String { Self.child(path, key.stringValue) }

    /// The value at `key`; nil when absent or null.
    func value(_ key: Keys) -> JSONValue? {
        for field in fields where field.key == key { return field.value }
        return nil
    }

    func required(_ key: Keys) throws(ConfigurationFieldError) -> JSONValue {
        guard let value = value(key) else { throw ConfigurationFieldError(path(key), "required key missing") }
        return value
    }

    func string(_ key: Keys) throws(ConfigurationFieldError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw ConfigurationFieldError(path(key), "expected a string") }
        return text
    }

    func bool(_ key: Keys) throws(ConfigurationFieldError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw ConfigurationFieldError(path(key), "expected true or false") }
        return flag
    }

    func integer(_ key: Keys) throws(ConfigurationFieldError) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value, number == number.rounded(), abs(number) < 1e15 else {
            throw ConfigurationFieldError(path(key), "expected a whole number")
        }
        return Int(number)
    }

    func strings(_ key: Keys) throws(ConfigurationFieldError) -> [String]? {
        guard let value = value(key) else { return nil }
        return try ConfigurationValues.strings(value, at: path(key))
    }

    func array(_ key: Keys) throws(ConfigurationFieldError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let elements) = value else { throw ConfigurationFieldError(path(key), "expected a list") }
        return elements
    }
}

/// Values read outside any one object.
enum ConfigurationValues {
    static func strings(_ value: JSONValue, at path: String) throws(ConfigurationFieldError) -> [String] {
        guard case .array(let elements) = value else { throw ConfigurationFieldError(path, "expected a list of strings") }
        var texts: [String] = []
        texts.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else { throw ConfigurationFieldError("\(path)[\(index)]", "expected a string") }
            texts.append(text)
        }
        return texts
    }
}
