import FoundationEssentials
import TrustEvaluator

/// The one style of every command's `--json`: each result is one line holding one compact JSON
/// object (JSON Lines), keys sorted, slashes unescaped, and a `"schema"` field — the version of
/// the shapes `docs/json.md` describes, raised when a field is removed or changes meaning (a new
/// field does not raise it).
package enum JSONLines {
    static let schema = 1

    /// One line for `value`, which must encode as a keyed container (an object).
    static func line(_ value: some Encodable) -> String {
        encoded(Versioned(value: value))
    }

    /// One line for an object built field by field.
    package static func line(_ object: [String: JSONValue]) -> String {
        var object = object
        object["schema"] = .number(Double(schema))
        return encoded(JSONValue.object(object))
    }

    private static func encoded(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return #"{"schema":\#(schema)}"# }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A value's own fields and `"schema"`, in one object (JSONEncoder merges keyed containers).
private struct Versioned<Value: Encodable>: Encodable {
    let value: Value
    private enum Key: String, CodingKey { case schema }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(JSONLines.schema, forKey: .schema)
    }
}
