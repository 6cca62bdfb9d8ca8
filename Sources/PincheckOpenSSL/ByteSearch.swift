internal import COpenSSL

/// A search of bytes in bytes, with glibc's `memmem` (two-way, vectorised).
package enum ByteSearch {
    /// True when `needle` occurs in `haystack`.
    package static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard let base = haystack.baseAddress, !needle.isEmpty else { return needle.isEmpty }
        return needle.withUnsafeBytes { needle in shim_contains(base, haystack.count, needle.baseAddress, needle.count) != 0 }
    }
}
