internal import COpenSSL

/// One entry of OpenSSL's thread-local error queue, rendered as text only when shown.
package struct OpenSSLErrorEntry: Sendable, Hashable, CustomStringConvertible {
    package let code: UInt
    package let detail: String?

    package var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if let detail, !detail.isEmpty { return "\(text) (\(detail))" }
        return text
    }
}

/// Helpers for OpenSSL's error queue: clear before a fallible call, drain after it.
package enum OpenSSLErrorStack {
    package static func clear() { ERR_clear_error() }

    /// Removes every queued error and returns them, oldest first.
    package static func drain() -> [OpenSSLErrorEntry] {
        var entries: [OpenSSLErrorEntry] = []
        while true {
            var data: UnsafePointer<CChar>? = nil
            var flags: Int32 = 0
            let code = ERR_get_error_all(nil, nil, nil, &data, &flags)
            if code == 0 { break }
            let detail = (flags & ERR_TXT_STRING) != 0 ? data.map { String(cString: $0) } : nil
            entries.append(OpenSSLErrorEntry(code: code, detail: detail))
        }
        return entries
    }

    /// The drained queue as one line, for error messages.
    package static func drainedText() -> String {
        let entries = drain()
        return entries.isEmpty ? "no detail from OpenSSL" : entries.map(\.description).joined(separator: "; ")
    }
}
