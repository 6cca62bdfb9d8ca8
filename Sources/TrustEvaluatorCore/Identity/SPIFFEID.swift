import FoundationEssentials

/// A SPIFFE ID, `spiffe://TRUST-DOMAIN/PATH`, parsed by the rules of the SPIFFE ID specification:
/// a trust domain of lowercase letters, digits, `.`, `-` and `_` (no port, no user), a path of
/// non-empty segments of letters, digits, `.`, `-` and `_` (no `.` or `..` segment, no trailing
/// `/`), no query or fragment, at most 2,048 bytes.
public struct SPIFFEID: Sendable, Hashable, CustomStringConvertible {
    /// The trust domain: the authority whose bundle the identity's chain must end at.
    public let trustDomain: String
    /// The path, empty or starting with `/`.
    public let path: String

    /// - Throws: `PincheckError` (`policy.invalid`) for text that is not a SPIFFE ID.
    public init(parsing text: String) throws(PincheckError) {
        func refuse(_ why: String) -> PincheckError {
            PincheckError(.invalidPolicy, "\"\(text.prefix(120))\" is not a SPIFFE ID: \(why)")
        }
        guard text.utf8.count <= 2048 else { throw refuse("longer than 2048 bytes") }
        guard text.hasPrefix("spiffe://") else { throw refuse("it does not start with spiffe://") }
        let rest = text.dropFirst("spiffe://".count)
        let domain = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(domain.count)
        guard let trustDomain = Self.trustDomain(String(domain)) else {
            throw refuse("the trust domain must be lowercase letters, digits, '.', '-' and '_' (no port, user or upper case)")
        }
        if !path.isEmpty {
            let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            for segment in segments {
                guard !segment.isEmpty else { throw refuse("the path has an empty segment or a trailing /") }
                guard segment != ".", segment != ".." else { throw refuse("the path has a '.' or '..' segment") }
                guard segment.utf8.allSatisfy(Self.isPathByte) else {
                    throw refuse("a path segment holds a character other than letters, digits, '.', '-' and '_'")
                }
            }
        }
        self.trustDomain = trustDomain
        self.path = String(path)
    }

    public var description: String { "spiffe://\(trustDomain)\(path)" }

    /// `name` when it is a valid trust-domain name, else nil.
    package static func trustDomain(_ name: String) -> String? {
        guard !name.isEmpty, name.utf8.count <= 255,
            name.utf8.allSatisfy({ byte in
                (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2E || byte == 0x2D || byte == 0x5F
            })
        else { return nil }
        return name
    }

    private static func isPathByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == 0x2E || byte == 0x2D || byte == 0x5F
    }
}
