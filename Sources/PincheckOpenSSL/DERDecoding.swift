internal import COpenSSL

/// Runs OpenSSL's `d2i_…` parsers over byte arrays.
package enum DERDecoding {
    /// Parses `bytes` with a `d2i_…` function (called as `d2i(&cursor, count)`).
    /// - Returns: The object, nil when it does not parse (or `bytes` is empty), and how many bytes
    ///   it used: the caller decides whether bytes after it are an error.
    package static func decode<Object>(_ bytes: [UInt8], with d2i: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> Object?) -> (
        object: Object?, consumed: Int
    ) {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return (nil, 0) }
            var cursor: UnsafePointer<UInt8>? = base
            let object = d2i(&cursor, buffer.count)
            return (object, cursor.map { $0 - base } ?? 0)
        }
    }
}

/// Runs OpenSSL's `i2d_…` encoders into byte arrays.
package enum DEREncoding {
    /// The bytes an `i2d_…` function writes (called as `i2d(&out)`, OpenSSL allocating `out`);
    /// nil when it writes none.
    package static func encode(_ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d(&out)
        guard length > 0, let out else { return nil }
        defer { shim_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}
