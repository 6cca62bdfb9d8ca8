import FoundationEssentials

/// One GeneralName (a subjectAltName entry, a name-constraints subtree), decoded.
package enum GeneralName: Sendable, Hashable {
    case dnsName(String)
    case ipAddress(String)
    case email(String)
    case uri(String)
    /// A GeneralName of another type (its ASN.1 tag number).
    case other(type: Int)
}

/// A public key's algorithm and size, as OpenSSL reports them.
package struct KeyDescription: Sendable, Hashable {
    package enum Algorithm: Sendable, Hashable {
        case rsa
        case ecdsa(curve: String)
        case ed25519
        case ed448
        case unknown(String)
    }

    package let algorithm: Algorithm
    /// The key size in bits (the modulus for RSA, the field size for EC).
    package let bits: Int
}

/// What the strict Web PKI checks look at, as plain values (no OpenSSL needed to test them).
package struct CertificateFacts: Sendable, Hashable {
    package struct Extension: Sendable, Hashable {
        /// Dotted OID.
        package let oid: String
        package let critical: Bool
        package init(oid: String, critical: Bool) {
            self.oid = oid
            self.critical = critical
        }
    }
    /// A name constraints extension: `nil` subtree lists mean the field is absent.
    package struct NameConstraints: Sendable, Hashable {
        package var permitted: [GeneralName]?
        package var excluded: [GeneralName]?
        package init(permitted: [GeneralName]?, excluded: [GeneralName]?) {
            self.permitted = permitted
            self.excluded = excluded
        }
    }

    package init() {}

    package var extensions: [Extension] = []
    /// The subject's commonName values.
    package var subjectCommonNames: [String] = []
    package var subjectIsEmpty = false
    /// basicConstraints: `nil` when absent, else its cA flag.
    package var basicConstraintsCA: Bool?
    /// The extendedKeyUsage purposes (dotted OIDs), `nil` when absent.
    package var extendedKeyUsage: [String]?
    package var authorityKeyIdentifierPresent = false
    package var authorityKeyIdentifier: [UInt8]?
    package var subjectKeyIdentifier: [UInt8]?
    package var nameConstraints: NameConstraints?
    /// True when an extension is present but its value does not decode.
    package var hasUndecodableExtension = false
    /// The serial number's magnitude (big-endian, no sign byte) and sign.
    package var serialMagnitude: [UInt8] = []
    package var serialIsNegative = false
    /// The digest of the certificate's signature algorithm (OpenSSL short name such as `SHA256`),
    /// `nil` where the algorithm names none (Ed25519, RSASSA-PSS).
    package var signatureDigest: String?

    package func isCritical(_ oid: String) -> Bool { extensions.contains { $0.oid == oid && $0.critical } }
    package func has(_ oid: String) -> Bool { extensions.contains { $0.oid == oid } }

    package static let subjectAltNameOID = "2.5.29.17"
    package static let extendedKeyUsageOID = "2.5.29.37"
    package static let nameConstraintsOID = "2.5.29.30"
    package static let policyConstraintsOID = "2.5.29.36"
    package static let authorityKeyIdentifierOID = "2.5.29.35"
    package static let anyExtendedKeyUsageOID = "2.5.29.37.0"
    package static let serverAuthOID = "1.3.6.1.5.5.7.3.1"
    package static let clientAuthOID = "1.3.6.1.5.5.7.3.2"
}

/// Formats raw IP address bytes from a certificate.
package enum IPAddressText {
    package static func format(_ bytes: [UInt8]) -> String {
        switch bytes.count {
        case 4:
            return bytes.map(String.init).joined(separator: ".")
        case 16:
            var groups: [UInt16] = []
            for index in stride(from: 0, to: 16, by: 2) { groups.append(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])) }
            // Compress the longest run of two or more zero groups (RFC 5952).
            var bestStart = -1, bestLength = 0, start = -1
            for (index, group) in zip(0..., groups + [1]) {
                if group == 0 {
                    if start < 0 { start = index }
                } else if start >= 0 {
                    if index - start > bestLength && index - start >= 2 { bestStart = start; bestLength = index - start }
                    start = -1
                }
            }
            let hex = groups.map { String($0, radix: 16) }
            if bestStart < 0 { return hex.joined(separator: ":") }
            let head = hex[..<bestStart].joined(separator: ":")
            let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
            return head + "::" + tail
        default:
            return bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
    }
}
