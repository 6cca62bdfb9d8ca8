/// Runs OpenSSL's `d2i_…` parsers over byte arrays.
package enum DERDecoding {
    /// Parses `bytes` with a `d2i_…` function (called as `d2i(&cursor, count)`).
    /// - Returns: The object, nil when it does not parse (or `bytes` is empty), and how many bytes
    ///   it used: the caller decides whether bytes after it are an error.
    package static func decode<Object>(_ bytes: [UInt8], with d2i: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> Object?) -> (object: Object?, consumed: Int) {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return (nil, 0) }
            var cursor: UnsafePointer<UInt8>? = base
            let object = d2i(&cursor, buffer.count)
            return (object, cursor.map { $0 - base } ?? 0)
        }
    }
}
