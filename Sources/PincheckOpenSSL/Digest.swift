internal import COpenSSL

/// SHA digests through libcrypto's one-shot functions.
package enum Digest {
    package static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        SHA256Digest(hashing: bytes).bytes
    }

    package static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { _ = SHA1($0.baseAddress, $0.count, &out) }
        return out
    }
}

/// A SHA-256 digest held inline (no array), for cache keys: hashing and comparing it is a few
/// machine words.
package struct SHA256Digest: Hashable, Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// The SHA-256 of `bytes`.
    package init(hashing bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { SHA256Digest(hashing: $0) }
    }

    /// The SHA-256 of `bytes`, straight through the low-level functions: `SHA256()` in OpenSSL 3.0
    /// fetches the digest from the provider and allocates a context on every call, which costs
    /// more than hashing a certificate.
    package init(hashing bytes: UnsafeRawBufferPointer) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var context = SHA256_CTX()
        SHA256_Init(&context)
        SHA256_Update(&context, bytes.baseAddress, bytes.count)
        withUnsafeMutableBytes(of: &words) { out in
            _ = SHA256_Final(out.baseAddress!.assumingMemoryBound(to: UInt8.self), &context)
        }
        self.words = words
    }

    /// Wraps a digest computed elsewhere; `bytes` must be 32 bytes long.
    package init(digest bytes: [UInt8]) {
        precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes) }
        self.words = words
    }

    /// The digest's 32 bytes.
    package var bytes: [UInt8] { withUnsafeBytes(of: words) { Array($0) } }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    package func hash(into hasher: inout Hasher) {
        // Already uniformly distributed: one word is plenty for bucketing (Hasher is still seeded).
        hasher.combine(words.0)
    }
}
