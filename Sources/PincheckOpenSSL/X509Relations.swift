internal import COpenSSL

/// How certificates relate to each other and to a peer's name, as OpenSSL decides it. Nothing
/// here builds or verifies a path: the engine does that with these answers.
extension X509Handle {
    /// True when this certificate's subject, key identifiers and key usage make it a possible
    /// issuer of `subject` (`X509_check_issued`); no signature is checked.
    package func mayHaveIssued(_ subject: X509Handle) -> Bool {
        defer { OpenSSLErrorStack.clear() }
        return X509_check_issued(ref, subject.ref) == X509_V_OK
    }

    /// True when `subject`'s signature verifies with this certificate's public key.
    package func signatureVerifies(on subject: X509Handle) -> Bool {
        defer { OpenSSLErrorStack.clear() }
        return X509_get0_pubkey(ref).map { X509_verify(subject.ref, $0) == 1 } == true
    }

    /// True when this is a CA that may sign certificates: basicConstraints CA:TRUE, and
    /// keyCertSign when keyUsage is present (`X509_check_ca` 1; a v1 root does not count).
    package var isIssuingCA: Bool { X509_check_ca(ref) == 1 }

    /// The pathLenConstraint of basicConstraints; nil when there is none.
    package var pathLengthConstraint: Int? {
        let length = X509_get_pathlen(ref)
        return length < 0 ? nil : Int(length)
    }

    /// True when the certificate names `host` (DNS) in its subjectAltName: never the subject CN,
    /// no partial wildcards (the verifier's flags).
    package func matches(host: String) -> Bool {
        defer { OpenSSLErrorStack.clear() }
        return X509_check_host(ref, host, host.utf8.count, X509Relations.hostFlags, nil) == 1
    }

    /// True when the certificate names the IP address `address` (textual form) in its subjectAltName.
    package func matches(ipAddress address: String) -> Bool {
        defer { OpenSSLErrorStack.clear() }
        return X509_check_ip_asc(ref, address, 0) == 1
    }

    /// True when the certificate carries the TLS feature extension with status_request (must-staple, RFC 7633).
    package var requiresStapledOCSP: Bool {
        guard let raw = X509_get_ext_d2i(ref, NID_tlsfeature, nil, nil) else {
            OpenSSLErrorStack.clear()
            return false
        }
        let features = OpaquePointer(raw)
        defer { OPENSSL_sk_pop_free(features) { ASN1_INTEGER_free(ASN1Value($0)?.openSSL()) } }
        for index in 0..<OPENSSL_sk_num(features) {
            if ASN1Value(OPENSSL_sk_value(features, index))?.integer == 5 { return true }
        }
        return false
    }

    /// The same object as `other`'s underlying `X509` (not merely an equal encoding).
    func isSameObject(as other: OpaquePointer) -> Bool { ref == other }
}

enum X509Relations {
    /// Host names are checked in the subjectAltName only, without partial wildcards.
    static let hostFlags = UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS)
}

/// The linked OpenSSL, for messages that depend on what it can do.
package enum OpenSSLLibrary {
    /// Such as `OpenSSL 3.0.19 …`.
    package static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }

    /// Whether the linked library (not the headers built against) is `major.minor` or newer.
    package static func isAtLeast(_ major: UInt32, _ minor: UInt32) -> Bool {
        (OPENSSL_version_major(), OPENSSL_version_minor()) >= (major, minor)
    }

    /// Tells OpenSSL not to free its tables when the process exits: for a command that exits with
    /// its answer, the kernel takes the memory back anyway, and `OPENSSL_cleanup` walking every
    /// table cost about 0.15 ms of `pincheck verify`'s 9 (the time from `exit` to `exit_group`).
    /// It takes effect only before OpenSSL's first initialisation, so it is the first call a
    /// program makes; afterwards it changes nothing.
    package static func keepTablesAtExit() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}

extension X509Handle {
    /// The algorithm of the certificate's key or signature that the linked OpenSSL cannot use
    /// (it decodes no key, or knows no such signature algorithm): by OpenSSL's name when it has
    /// one, else by name for the post-quantum algorithms (ML-DSA, SLH-DSA, ML-KEM), else as a
    /// dotted OID. Nil when OpenSSL can use both.
    package var unsupportedAlgorithm: String? {
        defer { OpenSSLErrorStack.clear() }
        if X509_get0_pubkey(ref) == nil, let key = X509_get_X509_PUBKEY(ref) {
            var object: OpaquePointer? = nil
            if X509_PUBKEY_get0_param(&object, nil, nil, nil, key) == 1, let object { return Self.algorithmName(object) }
            return "an unreadable key algorithm"
        }
        var digest: Int32 = NID_undef, keyType: Int32 = NID_undef
        if OBJ_find_sigid_algs(X509_get_signature_nid(ref), &digest, &keyType) != 1 {
            var algorithm: UnsafePointer<X509_ALGOR>? = nil
            X509_get0_signature(nil, &algorithm, ref)
            var object: OpaquePointer? = nil
            if let algorithm {
                X509_ALGOR_get0(&object, nil, nil, algorithm)
                if let object { return Self.algorithmName(object) }
            }
            return "an unreadable signature algorithm"
        }
        return nil
    }

    /// The post-quantum algorithms by OID (NIST CSOR), for an OpenSSL that does not know them.
    static let postQuantumNames: [String: String] = {
        var names: [String: String] = [
            "2.16.840.1.101.3.4.3.17": "ML-DSA-44", "2.16.840.1.101.3.4.3.18": "ML-DSA-65", "2.16.840.1.101.3.4.3.19": "ML-DSA-87",
            "2.16.840.1.101.3.4.4.1": "ML-KEM-512", "2.16.840.1.101.3.4.4.2": "ML-KEM-768", "2.16.840.1.101.3.4.4.3": "ML-KEM-1024",
        ]
        let slh = [
            "SHA2-128s", "SHA2-128f", "SHA2-192s", "SHA2-192f", "SHA2-256s", "SHA2-256f",
            "SHAKE-128s", "SHAKE-128f", "SHAKE-192s", "SHAKE-192f", "SHAKE-256s", "SHAKE-256f",
        ]
        for (index, name) in slh.enumerated() { names["2.16.840.1.101.3.4.3.\(20 + index)"] = "SLH-DSA-\(name)" }
        return names
    }()

    private static func algorithmName(_ object: OpaquePointer) -> String {
        let nid = OBJ_obj2nid(object)
        if nid != NID_undef, let name = OBJ_nid2sn(nid) { return String(cString: name) }
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        let dotted = length > 0 ? String(decoding: buffer.prefix(Int(min(length, 127))).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        return postQuantumNames[dotted].map { "\($0) (\(dotted))" } ?? dotted
    }
}
