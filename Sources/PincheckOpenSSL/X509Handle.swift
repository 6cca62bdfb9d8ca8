internal import COpenSSL
import FoundationEssentials

/// Owns exactly one reference to an OpenSSL `X509` and frees it in `deinit`.
///
/// `@unchecked Sendable`: the object is never mutated after `init`, and OpenSSL documents `X509`
/// objects as safe for concurrent reads (its internal caches, such as the extension flags, are
/// filled under a lock, and `X509_check_purpose(x, -1, 0)` fills them at init here anyway).
package final class X509Handle: @unchecked Sendable {
    /// The `X509` itself: never leaves this module.
    let ref: OpaquePointer
    /// The certificate exactly as it was parsed (or as OpenSSL re-encodes it, for store anchors).
    package let der: [UInt8]
    /// The DER SubjectPublicKeyInfo, as the certificate carries it.
    package let spkiDER: [UInt8]
    /// Extension facts for the strict profile, read once.
    package let facts: CertificateFacts

    /// Parses one DER certificate; trailing bytes are an error.
    /// - Parameter position: How messages name the certificate ("certificate #2").
    package convenience init(der bytes: [UInt8], position: String) throws(OpenSSLFailure) {
        OpenSSLErrorStack.clear()
        let (parsed, consumed) = DERDecoding.decode(bytes) { d2i_X509(nil, $0, $1) }
        guard let parsed else {
            throw OpenSSLFailure(.malformedDER, "\(position) is not a DER certificate: \(OpenSSLErrorStack.drainedText())")
        }
        guard consumed == bytes.count else {
            X509_free(parsed)
            throw OpenSSLFailure(.malformedDER, "\(position) has \(bytes.count - consumed) bytes after the end of the certificate")
        }
        guard let spki = Self.encodeSPKI(parsed) else {
            X509_free(parsed)
            throw OpenSSLFailure(.malformedDER, "\(position) has a public key OpenSSL cannot encode: \(OpenSSLErrorStack.drainedText())")
        }
        self.init(adopting: parsed, der: bytes, spki: spki)
    }

    /// Takes a new reference on a certificate OpenSSL lent us (get0), e.g. a store anchor.
    convenience init?(borrowing pointer: OpaquePointer) {
        guard X509_up_ref(pointer) == 1 else { return nil }
        guard let der = Self.encodeDER(pointer), let spki = Self.encodeSPKI(pointer) else {
            X509_free(pointer)
            return nil
        }
        self.init(adopting: pointer, der: der, spki: spki)
    }

    /// Owns `pointer` (one reference) and reads once what every reader needs.
    private init(adopting pointer: OpaquePointer, der: [UInt8], spki: [UInt8]) {
        // Compute the cached extension flags now, so later concurrent readers find them filled.
        _ = X509_check_purpose(pointer, -1, 0)
        self.ref = pointer
        self.der = der
        self.spkiDER = spki
        self.facts = Self.readFacts(pointer)
        self.subjectAlternativeNames = Self.readSubjectAlternativeNames(pointer)
        self.dnsNames = subjectAlternativeNames.compactMap { if case .dnsName(let name) = $0 { name } else { nil } }
        self.ipAddresses = subjectAlternativeNames.compactMap { if case .ipAddress(let address) = $0 { address } else { nil } }
        (self.crlDistributionPointURLs, self.ignoredDistributionPointURLs) = Self.readDistributionPointURLs(pointer)
    }

    /// The SHA-256 of ``der``, computed at first use and then kept. A served certificate that is
    /// never compared, hashed or looked up by fingerprint, as in most uncached evaluations, is then
    /// never hashed: two SHA-256s of about a kilobyte each were 30 % of what an uncached
    /// evaluation of a two-certificate chain did beyond OpenSSL's own work (callgrind).
    package var sha256: SHA256Digest {
        sha256Cell.withLock { digest in
            if let digest { return digest }
            let computed = SHA256Digest(hashing: der)
            digest = computed
            return computed
        }
    }
    private let sha256Cell = PThreadLocked<SHA256Digest?>(nil)

    /// The http URLs of the certificate's cRLDistributionPoints (see ``readDistributionPointURLs(_:)``),
    /// read once: the first ``distributionPointLimit`` of them.
    package let crlDistributionPointURLs: [String]
    /// How many more http distribution-point URLs the certificate names, past the limit: never
    /// fetched (a certificate is not a list of places for Pincheck to send requests to).
    package let ignoredDistributionPointURLs: Int

    /// The most distribution-point URLs read from one certificate. Public CAs name one (a few
    /// name two); a certificate naming thousands must not turn one evaluation into thousands of
    /// requests.
    package static let distributionPointLimit = 4

    deinit { X509_free(ref) }

    private static func encodeDER(_ x: OpaquePointer) -> [UInt8]? {
        guard let encoded = DEREncoding.encode({ i2d_X509(x, $0) }) else { return nil }
        return encoded
    }

    /// The SPKI's own DER, straight from the certificate: no `EVP_PKEY` round trip.
    private static func encodeSPKI(_ x: OpaquePointer) -> [UInt8]? {
        guard let pubkey = X509_get_X509_PUBKEY(x) else { return nil }
        guard let encoded = DEREncoding.encode({ i2d_X509_PUBKEY(pubkey, $0) }) else { return nil }
        return encoded
    }

    // MARK: Accessors (computed on demand; none of them mutates the X509)

    package var subject: String { Self.rfc4514(X509_get_subject_name(ref)) }
    package var issuer: String { Self.rfc4514(X509_get_issuer_name(ref)) }
    /// The subject name's DER encoding (empty if it cannot be encoded).
    package var subjectDER: [UInt8] {
        guard let encoded = DEREncoding.encode({ i2d_X509_NAME(X509_get_subject_name(ref), $0) }) else { return [] }
        return encoded
    }

    package var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(ref), let bn = ASN1_INTEGER_to_BN(serial, nil) else { return "" }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { shim_OPENSSL_free(hex) }
        return String(cString: hex).lowercased()
    }

    package var notBefore: Date { Self.date(X509_get0_notBefore(ref)) }
    package var notAfter: Date { Self.date(X509_get0_notAfter(ref)) }
    /// The validity bounds in whole seconds since 1970 (`Int64.min` when unreadable).
    package var notBeforeSeconds: Int64 { Self.seconds(X509_get0_notBefore(ref)) }
    package var notAfterSeconds: Int64 { Self.seconds(X509_get0_notAfter(ref)) }

    /// True when the subject and issuer names match and the certificate's own key verifies its signature.
    package var isSelfSigned: Bool { X509_self_signed(ref, 1) == 1 }

    /// True when the subject and issuer names match (RFC 5280 §3.3 "self-issued"), whatever key signed
    /// it: a CA's key rollover certificate. Such intermediates do not count towards path lengths.
    package var isSelfIssued: Bool { X509_get_extension_flags(ref) & UInt32(EXFLAG_SI) != 0 }

    /// True for a root: self-issued, and its own key verifies its signature. Unlike ``isSelfSigned``
    /// (OpenSSL's `X509_self_signed`), an authorityKeyIdentifier naming some other issuer does not
    /// make it a non-root.
    package var isRoot: Bool {
        defer { OpenSSLErrorStack.clear() }
        return isSelfIssued && X509_get0_pubkey(ref).map { X509_verify(ref, $0) == 1 } == true
    }

    /// True when basicConstraints says CA (OpenSSL's `X509_check_ca` > 0 also accepts v1 self-signed roots).
    package var isCertificateAuthority: Bool { X509_check_ca(ref) > 0 }

    /// The keyUsage bits that are set, by their RFC 5280 number (0 digitalSignature … 8
    /// decipherOnly); nil when the extension is absent.
    package var keyUsageBits: [Int]? {
        guard X509_get_extension_flags(ref) & UInt32(EXFLAG_KUSAGE) != 0 else { return nil }
        let bits = X509_get_key_usage(ref)
        let masks: [Int32] = [
            KU_DIGITAL_SIGNATURE, KU_NON_REPUDIATION, KU_KEY_ENCIPHERMENT, KU_DATA_ENCIPHERMENT,
            KU_KEY_AGREEMENT, KU_KEY_CERT_SIGN, KU_CRL_SIGN, KU_ENCIPHER_ONLY, KU_DECIPHER_ONLY,
        ]
        return masks.indices.filter { bits & UInt32(masks[$0]) != 0 }
    }

    /// Decoded at parse time (every evaluation's name checks read them).
    package let subjectAlternativeNames: [GeneralName]
    /// The DNS names and IP addresses among them.
    package let dnsNames: [String]
    package let ipAddresses: [String]

    private static func readSubjectAlternativeNames(_ ref: OpaquePointer) -> [GeneralName] {
        guard let raw = X509_get_ext_d2i(ref, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { shim_GENERAL_NAMES_free(names) }
        var result: [GeneralName] = []
        for index in 0..<shim_sk_GENERAL_NAME_num(names) {
            guard let name = shim_sk_GENERAL_NAME_value(names, index) else { continue }
            result.append(Self.generalName(name))
        }
        return result
    }

    private static func generalName(_ name: UnsafeMutablePointer<GENERAL_NAME>) -> GeneralName {
        switch name.pointee.type {
        case GEN_DNS:
            return .dnsName(string(name.pointee.d.dNSName))
        case GEN_IPADD:
            return .ipAddress(IPAddressText.format(bytes(name.pointee.d.iPAddress)))
        case GEN_EMAIL:
            return .email(string(name.pointee.d.rfc822Name))
        case GEN_URI:
            return .uri(string(name.pointee.d.uniformResourceIdentifier))
        default:
            return .other(type: Int(name.pointee.type))
        }
    }

    private static func subtrees(_ stack: OpaquePointer?) -> [GeneralName]? {
        guard let stack else { return nil }
        var result: [GeneralName] = []
        for index in 0..<shim_sk_GENERAL_SUBTREE_num(stack) {
            guard let subtree = shim_sk_GENERAL_SUBTREE_value(stack, index), let base = subtree.pointee.base else { continue }
            result.append(generalName(base))
        }
        return result
    }

    /// The dotted form of an OID. Objects OpenSSL knows by number are looked up in a table made
    /// once (formatting an OID costs about a microsecond, and every certificate has several).
    private static func dottedOID(_ object: OpaquePointer?) -> String {
        guard let object else { return "" }
        let nid = OBJ_obj2nid(object)
        if nid != NID_undef, let known = knownOIDs[nid] { return known }
        return formatOID(object)
    }

    private static func formatOID(_ object: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0, Int(length) < buffer.count else { return "" }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The extensions and key purposes certificates carry most, by their numbers in OpenSSL's
    /// table: written out rather than formatted with `OBJ_obj2txt` at first use, which cost every
    /// start 0.8 % (a test compares each with OpenSSL's own formatting).
    package static let knownOIDs: [Int32: String] = [
        NID_subject_alt_name: "2.5.29.17", NID_basic_constraints: "2.5.29.19", NID_key_usage: "2.5.29.15",
        NID_ext_key_usage: "2.5.29.37", NID_subject_key_identifier: "2.5.29.14", NID_authority_key_identifier: "2.5.29.35",
        NID_info_access: "1.3.6.1.5.5.7.1.1", NID_crl_distribution_points: "2.5.29.31", NID_certificate_policies: "2.5.29.32",
        NID_name_constraints: "2.5.29.30", NID_policy_constraints: "2.5.29.36", NID_ct_precert_scts: "1.3.6.1.4.1.11129.2.4.2",
        NID_tlsfeature: "1.3.6.1.5.5.7.1.24", NID_issuer_alt_name: "2.5.29.18", NID_inhibit_any_policy: "2.5.29.54",
        NID_policy_mappings: "2.5.29.33", NID_server_auth: "1.3.6.1.5.5.7.3.1", NID_client_auth: "1.3.6.1.5.5.7.3.2",
        NID_code_sign: "1.3.6.1.5.5.7.3.3", NID_email_protect: "1.3.6.1.5.5.7.3.4", NID_time_stamp: "1.3.6.1.5.5.7.3.8",
        NID_OCSP_sign: "1.3.6.1.5.5.7.3.9", NID_anyExtendedKeyUsage: "2.5.29.37.0", NID_ct_precert_poison: "1.3.6.1.4.1.11129.2.4.3",
    ]

    /// OpenSSL's own dotted form of the object with this number (the test's reference for ``knownOIDs``).
    package static func formattedOID(nid: Int32) -> String {
        OBJ_nid2obj(nid).map(formatOID) ?? ""
    }

    private static func readFacts(_ x: OpaquePointer) -> CertificateFacts {
        defer { OpenSSLErrorStack.clear() }
        var facts = CertificateFacts()
        for index in 0..<X509_get_ext_count(x) {
            guard let ext = X509_get_ext(x, index) else { continue }
            facts.extensions.append(.init(oid: dottedOID(X509_EXTENSION_get_object(ext)), critical: X509_EXTENSION_get_critical(ext) == 1))
        }
        readSubject(x, into: &facts)
        let flags = X509_get_extension_flags(x)
        if flags & UInt32(EXFLAG_INVALID) != 0 { facts.hasUndecodableExtension = true }
        if flags & UInt32(EXFLAG_BCONS) != 0 { facts.basicConstraintsCA = flags & UInt32(EXFLAG_CA) != 0 }
        if facts.has(CertificateFacts.extendedKeyUsageOID) { readExtendedKeyUsage(x, into: &facts) }
        facts.authorityKeyIdentifierPresent = X509_get_ext_by_NID(x, NID_authority_key_identifier, -1) >= 0
        facts.authorityKeyIdentifier = X509_get0_authority_key_id(x).map { bytes($0) }
        facts.subjectKeyIdentifier = X509_get0_subject_key_id(x).map { bytes($0) }
        readNameConstraints(x, into: &facts)
        if X509_get_ext_by_NID(x, NID_info_access, -1) >= 0 {
            if let raw = X509_get_ext_d2i(x, NID_info_access, nil, nil) {
                AUTHORITY_INFO_ACCESS_free(OpaquePointer(raw))
            } else {
                facts.hasUndecodableExtension = true
            }
        }
        if let serial = X509_get0_serialNumber(x) {
            facts.serialMagnitude = bytes(serial)
            facts.serialIsNegative = ASN1Value(serial)?.type == V_ASN1_NEG_INTEGER
        }
        var digest: Int32 = NID_undef, keyType: Int32 = NID_undef
        if OBJ_find_sigid_algs(X509_get_signature_nid(x), &digest, &keyType) == 1, digest != NID_undef,
            let name = OBJ_nid2sn(digest)
        {
            facts.signatureDigest = String(cString: name).uppercased()
        }
        return facts
    }

    /// Whether the subject is empty, and its common names.
    private static func readSubject(_ x: OpaquePointer, into facts: inout CertificateFacts) {
        guard let subject = X509_get_subject_name(x) else { return }
        facts.subjectIsEmpty = X509_NAME_entry_count(subject) == 0
        var position: Int32 = -1
        while true {
            position = X509_NAME_get_index_by_NID(subject, NID_commonName, position)
            guard position >= 0 else { break }
            if let entry = X509_NAME_get_entry(subject, position) {
                facts.subjectCommonNames.append(string(X509_NAME_ENTRY_get_data(entry)))
            }
        }
    }

    /// The extendedKeyUsage OIDs; an extension that does not decode is marked so.
    private static func readExtendedKeyUsage(_ x: OpaquePointer, into facts: inout CertificateFacts) {
        guard let raw = X509_get_ext_d2i(x, NID_ext_key_usage, nil, nil) else {
            facts.hasUndecodableExtension = true
            return
        }
        let stack = OpaquePointer(raw)
        var oids: [String] = []
        for index in 0..<OPENSSL_sk_num(stack) {
            guard let object = OPENSSL_sk_value(stack, index) else { continue }
            let oid = dottedOID(OpaquePointer(object))
            if !oid.isEmpty { oids.append(oid) }
        }
        EXTENDED_KEY_USAGE_free(stack)
        facts.extendedKeyUsage = oids
    }

    /// The nameConstraints subtrees; an extension that does not decode is marked so.
    private static func readNameConstraints(_ x: OpaquePointer, into facts: inout CertificateFacts) {
        guard X509_get_ext_by_NID(x, NID_name_constraints, -1) >= 0 else { return }
        guard let raw = X509_get_ext_d2i(x, NID_name_constraints, nil, nil) else {
            facts.hasUndecodableExtension = true
            return
        }
        let constraints = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        facts.nameConstraints = .init(
            permitted: subtrees(constraints.pointee.permittedSubtrees),
            excluded: subtrees(constraints.pointee.excludedSubtrees))
        NAME_CONSTRAINTS_free(constraints)
    }

    package var publicKeyDescription: KeyDescription {
        guard let key = X509_get0_pubkey(ref) else { return KeyDescription(algorithm: .unknown("unparsed"), bits: 0) }
        let bits = Int(EVP_PKEY_get_bits(key))
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS:
            return KeyDescription(algorithm: .rsa, bits: bits)
        case EVP_PKEY_EC:
            var buffer = [CChar](repeating: 0, count: 80)
            var length = 0
            let curve =
                EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1
                ? String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
            return KeyDescription(algorithm: .ecdsa(curve: curve), bits: bits)
        case EVP_PKEY_ED25519:
            return KeyDescription(algorithm: .ed25519, bits: bits)
        case EVP_PKEY_ED448:
            return KeyDescription(algorithm: .ed448, bits: bits)
        default:
            let name = EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "unknown"
            return KeyDescription(algorithm: .unknown(name), bits: bits)
        }
    }

    // MARK: Conversions

    private static func rfc4514(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        // RFC 2253/4514 order and escaping, but keep UTF-8 as UTF-8 instead of \XX escapes.
        let flags = shim_XN_FLAG_RFC2253() & ~UInt(ASN1_STRFLGS_ESC_MSB)
        guard X509_NAME_print_ex(bio, name, 0, flags) >= 0 else { return "" }
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = shim_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    private static func bytes(_ string: (some ASN1Pointer)?) -> [UInt8] { ASN1Value(string)?.bytes ?? [] }

    private static func string(_ string: (some ASN1Pointer)?) -> String { ASN1Value(string)?.text ?? "" }

    /// A certificate's or CRL's time; `.distantPast` when it is missing or not a valid time.
    static func date(_ time: (some ASN1Pointer)?) -> Date {
        let value = seconds(time)
        return value == .min ? .distantPast : Date(timeIntervalSince1970: TimeInterval(value))
    }

    /// A time's seconds since 1970; `Int64.min` when it is missing or not a valid time.
    static func seconds(_ time: (some ASN1Pointer)?) -> Int64 { ASN1Value(time)?.seconds ?? .min }
}
