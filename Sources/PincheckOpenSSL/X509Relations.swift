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
        defer { OPENSSL_sk_pop_free(features) { ASN1_INTEGER_free($0?.assumingMemoryBound(to: ASN1_INTEGER.self)) } }
        for index in 0..<OPENSSL_sk_num(features) {
            if let value = OPENSSL_sk_value(features, index), ASN1_INTEGER_get(value.assumingMemoryBound(to: ASN1_INTEGER.self)) == 5 { return true }
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
