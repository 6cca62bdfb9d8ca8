/// An RFC 7469 public-key pin: a hash of a certificate's DER SubjectPublicKeyInfo.
///
/// Written `sha256/<base64>` (OkHttp, curl's `sha256//`). Also accepted: bare base64 (TrustKit,
/// Android Network Security Config), `pin-sha256="<base64>"` (HPKP headers) and, for old
/// configurations, `sha1/<base64>`, which is weak and flagged as such.
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible, Comparable {
    /// The hash a pin is made with.
    public enum Algorithm: String, Sendable, Hashable {
        case sha256
        /// - Warning: SHA-1 pins are accepted for compatibility only; prefer SHA-256.
        case sha1

        /// The digest length in bytes.
        public var digestLength: Int { self == .sha256 ? 32 : 20 }
    }

    /// The hash algorithm.
    public let algorithm: Algorithm
    /// The digest, exactly ``Algorithm/digestLength`` bytes.
    public let digest: [UInt8]

    init(algorithm: Algorithm, unchecked digest: [UInt8]) {
        self.algorithm = algorithm
        self.digest = digest
    }

    /// Creates a pin from a digest.
    /// - Throws: ``PincheckError`` (`pin.malformed`) when the digest has the wrong length.
    public init(algorithm: Algorithm = .sha256, digest: [UInt8]) throws(PincheckError) {
        guard digest.count == algorithm.digestLength else {
            throw PincheckError(.malformedPin, "a \(algorithm.rawValue) pin must be \(algorithm.digestLength) bytes, not \(digest.count)")
        }
        self.init(algorithm: algorithm, unchecked: digest)
    }

    /// Parses a pin written as `sha256/B64`, `sha1/B64`, `pin-sha256="B64"`, or bare base64
    /// (which means SHA-256).
    /// - Throws: ``PincheckError`` (`pin.malformed`) naming the pin when it does not decode to
    ///   exactly 32 bytes (20 for SHA-1).
    public init(_ text: String) throws(PincheckError) {
        // Read as bytes: a pin is ASCII, and a configuration may hold tens of thousands of them
        // (Character-by-Character trimming and prefix tests cost more than the decoding).
        let utf8 = Array(text.utf8)
        var body = utf8.allSatisfy({ $0 < 0x80 }) ? Self.trimmingASCIIWhitespace(utf8[...]) : Array(text.trimmingWhitespaceCharacters().utf8)[...]
        var algorithm = Algorithm.sha256
        if body.starts(with: "sha256/".utf8) {
            body = body.dropFirst(7)
            // curl writes `sha256//B64`, and a digest's base64 may itself start with `/` (one key
            // in 64): the length decides, never the prefix order. A SHA-256 digest is 44 base64
            // characters, so 45 starting with `/` is curl's form.
            if body.count == Self.sha256Base64Length + 1, body.first == UInt8(ascii: "/") { body = body.dropFirst() }
        } else if body.starts(with: "sha1/".utf8) {
            algorithm = .sha1
            body = body.dropFirst(5)
        } else if body.starts(with: "pin-sha256=".utf8) {
            body = body.dropFirst(11)
            guard body.count >= 2, body.first == UInt8(ascii: "\""), body.last == UInt8(ascii: "\"") else {
                throw PincheckError(.malformedPin, "pin \"\(text)\": pin-sha256= needs a quoted value")
            }
            body = body.dropFirst().dropLast()
        }
        guard let digest = Base64.decode(Array(body)) else {
            throw PincheckError(.malformedPin, "pin \"\(text)\" is not valid base64 (expected sha256/ followed by 44 base64 characters)")
        }
        guard digest.count == algorithm.digestLength else {
            throw PincheckError(
                .malformedPin, "pin \"\(text)\" decodes to \(digest.count) bytes; a \(algorithm.rawValue) pin is exactly \(algorithm.digestLength)")
        }
        self.init(algorithm: algorithm, unchecked: digest)
    }

    /// Without ASCII white space (space, tab, line breaks, vertical tab, form feed) at either end.
    private static func trimmingASCIIWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
        return bytes[first...last]
    }

    /// The length of a SHA-256 digest in padded base64.
    static let sha256Base64Length = 44

    /// The base64 of the digest.
    public var base64: String { Base64.encode(digest) }

    /// `sha256/<base64>` or `sha1/<base64>`.
    public var description: String { "\(algorithm.rawValue)/\(base64)" }

    public static func < (lhs: PublicKeyPin, rhs: PublicKeyPin) -> Bool { lhs.description < rhs.description }

    /// The digest's bytes in one call (the synthesized hash feeds them one by one): pins are
    /// looked up in sets on every evaluation.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(algorithm)
        digest.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// True when this pin names the key of `certificate`.
    public func matches(_ certificate: Certificate) -> Bool {
        switch algorithm {
        case .sha256: certificate.publicKeyPin.digest == digest
        case .sha1: certificate.publicKeySHA1Pin.digest == digest
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing white space (`Character.isWhitespace`).
    package func trimmingWhitespaceCharacters() -> String {
        String(Substring(self).trimmingWhitespace())
    }
}
