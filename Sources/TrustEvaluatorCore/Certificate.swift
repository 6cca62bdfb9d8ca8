import FoundationEssentials
package import PincheckOpenSSL

/// One X.509 certificate, parsed once and shared read-only.
///
/// Two certificates are equal when their DER encodings are byte-equal.
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    package let handle: X509Handle

    /// The SHA-256 of ``derBytes``: the certificate's fingerprint.
    public var sha256Fingerprint: [UInt8] { fingerprint.bytes }
    /// The same, inline: what equality, hashing and the caches use. Given when the parser's caller
    /// had already hashed the DER (``CertificateCache`` looks certificates up by it), and read
    /// without a lock then; otherwise the handle hashes the DER at first use.
    var fingerprint: SHA256Digest { knownFingerprint ?? handle.sha256 }
    private let knownFingerprint: SHA256Digest?
    /// The RFC 7469 pin of this certificate's public key: SHA-256 over its DER SubjectPublicKeyInfo.
    public let publicKeyPin: PublicKeyPin

    package init(handle: X509Handle) {
        self.init(handle: handle, knownFingerprint: nil)
    }

    /// - Parameter fingerprint: The SHA-256 of `handle.der`, when the caller already computed it.
    init(handle: X509Handle, fingerprint: SHA256Digest) {
        self.init(handle: handle, knownFingerprint: fingerprint)
    }

    private init(handle: X509Handle, knownFingerprint: SHA256Digest?) {
        self.handle = handle
        self.knownFingerprint = knownFingerprint
        self.publicKeyPin = PublicKeyPin(algorithm: .sha256, unchecked: Digest.sha256(handle.spkiDER))
    }

    /// Parses one certificate in DER.
    /// - Parameters:
    ///   - derEncoded: Exactly one DER certificate; trailing bytes are rejected.
    ///   - source: A name for the input (a file path), used in error messages.
    /// - Throws: ``PincheckError`` with code `input.empty` or `input.malformed-der`.
    public init(derEncoded: [UInt8], source: String? = nil) throws(PincheckError) {
        try Self.checkSize(derEncoded, source: source)
        self.init(handle: try Self.parse(derEncoded, source: source, position: "the DER input"))
    }

    /// Parses DER whose SHA-256 the caller has computed (``CertificateCache``).
    init(derEncoded: [UInt8], fingerprint: SHA256Digest, source: String?) throws(PincheckError) {
        try Self.checkSize(derEncoded, source: source)
        self.init(handle: try Self.parse(derEncoded, source: source, position: "the DER input"), fingerprint: fingerprint)
    }

    /// Parses one DER certificate with the OpenSSL module, naming `source` in an error.
    private static func parse(_ der: [UInt8], source: String?, position: String) throws(PincheckError) -> X509Handle {
        do { return try X509Handle(der: der, position: position) } catch { throw PincheckError(error, source: source) }
    }

    /// The certificates of a PKCS #7 bundle, leaf first when they form one chain.
    private static func pkcs7(_ der: [UInt8], source: String?, position: String) throws(PincheckError) -> [Certificate] {
        do {
            return try PKCS7Bundle.certificates(
                der, position: position, maximumCount: Limits.maximumBundleCertificates,
                maximumChainLength: Limits.maximumServedChainLength
            ).map(Certificate.init(handle:))
        } catch {
            throw PincheckError(error, source: source)
        }
    }

    private static func checkSize(_ der: [UInt8], source: String?) throws(PincheckError) {
        guard !der.isEmpty else { throw PincheckError(.emptyInput, "no bytes where a DER certificate was expected", source: source) }
        guard der.count <= Limits.maximumCertificateBytes else {
            throw PincheckError(
                .tooLarge, "the DER input is \(der.count) bytes; a certificate may be at most \(Limits.maximumCertificateBytes)", source: source)
        }
    }

    /// Parses the single certificate in a PEM text.
    /// - Throws: ``PincheckError`` when the text holds no certificate, more than one, or a broken one.
    public init(pemEncoded text: String, source: String? = nil) throws(PincheckError) {
        let certificates = try Certificate.parseBundle(Array(text.utf8), source: source)
        guard certificates.count == 1 else {
            throw PincheckError(.malformedPEM, "expected one certificate, found \(certificates.count)", source: source)
        }
        self = certificates[0]
    }

    /// DER certificates one after another (what Java's `CertificateFactory.generateCertificates`
    /// reads, so an Android `res/raw` resource may hold several): each is split off by its outer
    /// SEQUENCE's length and parsed whole; anything that is not a certificate is an error.
    private static func derSequence(_ bytes: [UInt8], source: String?) throws(PincheckError) -> [Certificate] {
        var certificates: [Certificate] = []
        var start = 0
        while start < bytes.count {
            let position = certificates.isEmpty && start == 0 ? "the DER input" : "DER certificate #\(certificates.count + 1) (byte \(start))"
            guard certificates.count < Limits.maximumBundleCertificates else {
                throw PincheckError(.tooLarge, "the DER input holds more than \(Limits.maximumBundleCertificates) certificates", source: source)
            }
            // The outer SEQUENCE's length, when it can be read and fits; otherwise the rest, which
            // the parser then refuses with its own reason.
            var end = bytes.count
            if bytes[start] == 0x30, start + 1 < bytes.count {
                let first = Int(bytes[start + 1])
                if first < 0x80 {
                    end = min(bytes.count, start + 2 + first)
                } else if (0x81...0x84).contains(first), start + 2 + (first - 0x80) <= bytes.count {
                    let count = first - 0x80
                    let length = bytes[(start + 2)..<(start + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
                    end = start + 2 + count + length <= bytes.count ? start + 2 + count + length : bytes.count
                }
            }
            let slice = Array(bytes[start..<end])
            guard slice.count <= Limits.maximumCertificateBytes else {
                throw PincheckError(
                    .tooLarge, "\(position) is \(slice.count) bytes; a certificate may be at most \(Limits.maximumCertificateBytes)", source: source)
            }
            certificates.append(Certificate(handle: try Self.parse(slice, source: source, position: position)))
            start = end
        }
        return certificates
    }

    /// Parses a served chain or any set of certificates: a PEM bundle (in order, leaf first as
    /// served), DER certificates, or a PKCS #7 bundle (`.p7b`, DER or PEM), whatever Java's
    /// `CertificateFactory.generateCertificates` reads.
    /// - Parameters:
    ///   - bytes: PEM text or DER bytes.
    ///   - source: A name for the input (a file path), used in error messages.
    /// - Returns: At least one certificate, in input order; a PKCS #7 bundle's leaf first when its
    ///   certificates form one chain (its encoding keeps no order).
    /// - Throws: ``PincheckError``: empty input, malformed PEM or DER (naming the block and line),
    ///   or a PEM block that is not a certificate (a private key, for example).
    public static func parseBundle(_ bytes: [UInt8], source: String? = nil) throws(PincheckError) -> [Certificate] {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw PincheckError(.emptyInput, "no certificate found: the input is empty", source: source)
        }
        guard PEM.looksLikePEM(bytes) else {
            if bytes.first == 0x30 {
                if PKCS7Bundle.isSignedData(bytes) {
                    return try pkcs7(bytes, source: source, position: "the DER input")
                }
                return try derSequence(bytes, source: source)
            }
            if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
                // What PowerShell's `>` writes: PEM text, but as UTF-16.
                throw PincheckError(.malformedPEM, "the file is UTF-16 text; PEM must be ASCII or UTF-8 (save it as UTF-8)", source: source)
            }
            throw PincheckError(.malformedPEM, "neither PEM (no -----BEGIN line) nor DER (does not start with a SEQUENCE)", source: source)
        }
        let blocks = try PEM.blocks(in: bytes, source: source)
        guard blocks.count <= Limits.maximumBundleCertificates else {
            throw PincheckError(
                .tooLarge, "the PEM text holds \(blocks.count) blocks; a bundle may hold at most \(Limits.maximumBundleCertificates) certificates",
                source: source)
        }
        var certificates: [Certificate] = []
        for (index, block) in blocks.enumerated() {
            let position = "PEM block #\(index + 1) (line \(block.line))"
            switch block.label {
            case "CERTIFICATE", "X509 CERTIFICATE":
                let der = try block.bytes(source: source)
                guard !der.isEmpty else {
                    throw PincheckError(.malformedPEM, "\(position) is empty", source: source)
                }
                guard der.count <= Limits.maximumCertificateBytes else {
                    throw PincheckError(
                        .tooLarge, "\(position) is \(der.count) bytes; a certificate may be at most \(Limits.maximumCertificateBytes)", source: source
                    )
                }
                certificates.append(Certificate(handle: try Self.parse(der, source: source, position: position)))
            case "PKCS7":
                // A .p7b bundle in PEM, which Java's CertificateFactory reads as well.
                certificates += try pkcs7(try block.bytes(source: source), source: source, position: position)
                guard certificates.count <= Limits.maximumBundleCertificates else {
                    throw PincheckError(.tooLarge, "the PEM text holds more than \(Limits.maximumBundleCertificates) certificates", source: source)
                }
            case let label where label.contains("PRIVATE KEY"):
                throw PincheckError(
                    .unexpectedPEMBlock,
                    "\(position) is a private key (\(label)), not a certificate: a private key does not belong in a chain or pin file", source: source
                )
            default:
                throw PincheckError(.unexpectedPEMBlock, "\(position) is labelled \(block.label), not CERTIFICATE", source: source)
            }
        }
        guard !certificates.isEmpty else {
            throw PincheckError(.emptyInput, "no certificate found in the PEM text", source: source)
        }
        return certificates
    }

    /// Reads and parses a PEM bundle or DER certificate file.
    /// - Throws: ``PincheckError`` naming the file: unreadable, empty or malformed.
    public static func load(contentsOf path: String) throws(PincheckError) -> [Certificate] {
        try parseBundle(try InputFile.read(path, limit: InputFile.certificateLimit), source: path)
    }

    /// The certificate's DER encoding, byte for byte as parsed.
    public var derBytes: [UInt8] { handle.der }
    /// The DER SubjectPublicKeyInfo that ``publicKeyPin`` hashes.
    public var subjectPublicKeyInfoDER: [UInt8] { handle.spkiDER }
    /// The subject as an RFC 4514 string, such as `CN=www.example.test,O=Example`.
    public var subject: String { handle.subject }
    /// The issuer as an RFC 4514 string.
    public var issuer: String { handle.issuer }
    /// The serial number in lowercase hexadecimal.
    public var serialNumber: String { handle.serialNumberHex }
    /// The start of the validity period.
    public var notBefore: Date { handle.notBefore }
    /// The end of the validity period.
    public var notAfter: Date { handle.notAfter }
    /// The subjectAltName entries, in certificate order.
    public var subjectAlternativeNames: [SubjectAlternativeName] { handle.subjectAlternativeNames.map(SubjectAlternativeName.init) }
    /// The DNS names among the subjectAltName entries.
    public var dnsNames: [String] { handle.dnsNames }
    /// The IP addresses among the subjectAltName entries, as text.
    public var ipAddresses: [String] { handle.ipAddresses }
    /// The public key's algorithm and size.
    /// A key the linked OpenSSL cannot decode (ML-DSA before 3.5) is `.unknown` with its name.
    public var publicKey: PublicKeyDescription {
        let key = handle.publicKeyDescription
        if case .unknown("unparsed") = key.algorithm, let name = handle.unsupportedAlgorithm {
            return PublicKeyDescription(algorithm: .unknown(name), bits: 0)
        }
        return PublicKeyDescription(key)
    }
    /// True when the certificate names itself as issuer and its own key verifies its signature.
    public var isSelfSigned: Bool { handle.isSelfSigned }
    /// True when the certificate may act as a CA (basicConstraints CA:TRUE).
    public var isCertificateAuthority: Bool { handle.isCertificateAuthority }
    /// True when the certificate is must-staple: its TLS feature extension lists status_request
    /// (RFC 7633), so a server presenting it must staple an OCSP response, and Pincheck refuses it
    /// without one.
    public var requiresStapledOCSP: Bool { handle.requiresStapledOCSP }

    /// The keyUsage bits, or `nil` when the certificate has no keyUsage extension.
    public var keyUsage: Set<KeyUsage>? { handle.keyUsageBits.map { Set($0.compactMap(KeyUsage.init(rawValue:))) } }

    /// The extension facts the strict profile judges, read once at parse time.
    var facts: CertificateFacts { handle.facts }

    /// The SHA-1 SPKI pin (weak; accepted only for old configurations).
    public var publicKeySHA1Pin: PublicKeyPin { PublicKeyPin(algorithm: .sha1, unchecked: Digest.sha1(handle.spkiDER)) }

    /// The PEM encoding of ``derBytes``.
    public var pemEncoded: String { PEM.encode(derBytes, label: "CERTIFICATE") }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        if lhs.handle === rhs.handle { return true }
        // Fingerprints already known settle most inequalities at once; otherwise the bytes are
        // compared (lengths first) rather than hashed, which costs more than the comparison.
        if let left = lhs.knownFingerprint, let right = rhs.knownFingerprint, left != right { return false }
        return lhs.handle.der == rhs.handle.der
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }

    public var description: String { "\(publicKeyPin) : \(subject)" }
}

/// One bit of the keyUsage extension (RFC 5280 §4.2.1.3).
public enum KeyUsage: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case digitalSignature = 0, contentCommitment, keyEncipherment, dataEncipherment, keyAgreement,
        keyCertSign, cRLSign, encipherOnly, decipherOnly

    public var description: String {
        switch self {
        case .digitalSignature: "digitalSignature"
        case .contentCommitment: "contentCommitment"
        case .keyEncipherment: "keyEncipherment"
        case .dataEncipherment: "dataEncipherment"
        case .keyAgreement: "keyAgreement"
        case .keyCertSign: "keyCertSign"
        case .cRLSign: "cRLSign"
        case .encipherOnly: "encipherOnly"
        case .decipherOnly: "decipherOnly"
        }
    }
}

/// One subjectAltName entry.
public enum SubjectAlternativeName: Sendable, Hashable, CustomStringConvertible {
    case dnsName(String)
    case ipAddress(String)
    case email(String)
    case uri(String)
    /// A GeneralName of another type (its ASN.1 tag number).
    case other(type: Int)

    public var description: String {
        switch self {
        case .dnsName(let name): "DNS:\(name)"
        case .ipAddress(let address): "IP:\(address)"
        case .email(let address): "email:\(address)"
        case .uri(let uri): "URI:\(uri)"
        case .other(let type): "othername(\(type))"
        }
    }
}

extension SubjectAlternativeName {
    init(_ name: GeneralName) {
        self =
            switch name {
            case .dnsName(let name): .dnsName(name)
            case .ipAddress(let address): .ipAddress(address)
            case .email(let address): .email(address)
            case .uri(let uri): .uri(uri)
            case .other(let type): .other(type: type)
            }
    }
}

/// A public key's algorithm and size, for display and for weak-key warnings.
public struct PublicKeyDescription: Sendable, Hashable, CustomStringConvertible {
    public enum Algorithm: Sendable, Hashable {
        case rsa
        case ecdsa(curve: String)
        case ed25519
        case ed448
        case unknown(String)
    }

    public let algorithm: Algorithm
    /// The key size in bits as OpenSSL reports it (the modulus for RSA, the field size for EC).
    public let bits: Int

    public var description: String {
        switch algorithm {
        case .rsa: "RSA \(bits)"
        case .ecdsa(let curve): "ECDSA \(curve)"
        case .ed25519: "Ed25519"
        case .ed448: "Ed448"
        case .unknown(let name): bits > 0 ? "\(name) \(bits)" : name
        }
    }
}

extension PublicKeyDescription {
    init(_ key: KeyDescription) {
        let algorithm: Algorithm =
            switch key.algorithm {
            case .rsa: .rsa
            case .ecdsa(let curve): .ecdsa(curve: curve)
            case .ed25519: .ed25519
            case .ed448: .ed448
            case .unknown(let name): .unknown(name)
            }
        self.init(algorithm: algorithm, bits: key.bits)
    }
}
