internal import COpenSSL
import FoundationEssentials

/// The parts of a CRL and of a certificate's cRLDistributionPoints that decide whether a CRL
/// covers a certificate (RFC 5280 §5.2.5, §6.3.3), read with OpenSSL's decoders.
extension X509Handle {
    /// The http URLs of the certificate's cRLDistributionPoints whose CRL holds every reason and
    /// is issued by the certificate's issuer (no `reasons`, no `cRLIssuer`), in certificate order:
    /// the first ``distributionPointLimit``, and how many more there are. Other names (LDAP, a
    /// directory name) and other distribution points are left out: Pincheck fetches nothing else.
    static func readDistributionPointURLs(_ ref: OpaquePointer) -> (urls: [String], ignored: Int) {
        defer { OpenSSLErrorStack.clear() }
        guard X509_get_ext_by_NID(ref, NID_crl_distribution_points, -1) >= 0,
            let raw = X509_get_ext_d2i(ref, NID_crl_distribution_points, nil, nil)
        else { return ([], 0) }
        let points = OpaquePointer(raw)
        defer { CRL_DIST_POINTS_free(points) }
        var urls: [String] = []
        var seen = Set<String>()
        for index in 0..<OPENSSL_sk_num(points) {
            guard let value = OPENSSL_sk_value(points, index) else { continue }
            let point = value.assumingMemoryBound(to: DIST_POINT.self).pointee
            guard point.reasons == nil, point.CRLissuer == nil, let name = point.distpoint else { continue }
            for url in Self.uris(name) where Self.isHTTP(url) && seen.insert(url).inserted {
                if urls.count < distributionPointLimit { urls.append(url) }
            }
        }
        return (urls, seen.count - urls.count)
    }

    /// The URIs of a DistributionPointName's fullName (none for a nameRelativeToCRLIssuer).
    static func uris(_ name: UnsafeMutablePointer<DIST_POINT_NAME>) -> [String] {
        guard name.pointee.type == 0, let names = name.pointee.name.fullname else { return [] }
        var result: [String] = []
        for index in 0..<shim_sk_GENERAL_NAME_num(names) {
            guard let general = shim_sk_GENERAL_NAME_value(names, index), general.pointee.type == GEN_URI,
                let uri = general.pointee.d.uniformResourceIdentifier,
                let data = ASN1_STRING_get0_data(uri)
            else { continue }
            result.append(String(decoding: UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(uri))), as: UTF8.self))
        }
        return result
    }

    /// True when the URL's scheme is http, in any case (RFC 3986 §3.1): whether it can then be
    /// fetched is the engine's `HTTPURL` to say, so a malformed one is named rather than passed over.
    static func isHTTP(_ url: String) -> Bool {
        url.utf8.count > 7 && url.utf8.prefix(7).map { $0 | 0x20 } == Array("http://".utf8)
    }
}

/// What a CRL says it covers: its issuingDistributionPoint (RFC 5280 §5.2.5), or everything its
/// issuer issued when it has none.
package struct CRLScope: Sendable, Hashable {
    /// The distribution point names (URIs) of the IDP; empty when it names none.
    package var distributionPointURIs: [String] = []
    /// The IDP has a distribution point name that is not a list of URIs (a relative name).
    package var namesOtherDistributionPoint = false
    package var onlyEndEntityCertificates = false
    package var onlyCACertificates = false
    package var onlyAttributeCertificates = false
    /// Only some revocation reasons are listed: the CRL alone does not cover a certificate.
    package var onlySomeReasons = false
    /// Entries may be for another issuer's certificates (not supported: never covering).
    package var indirect = false
    /// The CRL has an issuingDistributionPoint at all.
    package var partitioned = false
}

/// One entry of a CRL.
package struct CRLEntry: Sendable, Hashable {
    /// When the certificate was revoked; nil when unreadable.
    package let revocationDate: Date?
    /// The CRLReason code (RFC 5280 §5.3.1); nil when the entry has none.
    package let reason: Int?
}

extension CRLHandle {
    /// True when the CRL's issuer name is `issuer`'s subject.
    package func isIssued(byNameOf issuer: X509Handle) -> Bool {
        guard let crlIssuer = X509_CRL_get_issuer(ref), let subject = X509_get_subject_name(issuer.ref) else { return false }
        return X509_NAME_cmp(crlIssuer, subject) == 0
    }

    /// True when the CRL's signature verifies with `issuer`'s public key. A key that verified it
    /// is remembered, so a CRL kept for many evaluations is verified once per issuer key.
    package func signatureVerifies(withKeyOf issuer: X509Handle) -> Bool {
        if verifiedKeys.withLock({ $0.contains(issuer.spkiDER) }) { return true }
        defer { OpenSSLErrorStack.clear() }
        guard let key = X509_get0_pubkey(issuer.ref), X509_CRL_verify(ref, key) == 1 else { return false }
        verifiedKeys.withLock { keys in if keys.count < 8 { keys.append(issuer.spkiDER) } }
        return true
    }

    /// What the CRL covers, from its issuingDistributionPoint.
    static func readScope(_ ref: OpaquePointer) -> CRLScope {
        defer { OpenSSLErrorStack.clear() }
        var scope = CRLScope()
        guard X509_CRL_get_ext_by_NID(ref, NID_issuing_distribution_point, -1) >= 0 else { return scope }
        scope.partitioned = true
        guard let raw = X509_CRL_get_ext_d2i(ref, NID_issuing_distribution_point, nil, nil) else {
            // Present but undecodable: claim nothing, so it covers nothing.
            scope.namesOtherDistributionPoint = true
            return scope
        }
        let point = raw.assumingMemoryBound(to: ISSUING_DIST_POINT.self)
        defer { ISSUING_DIST_POINT_free(point) }
        if let name = point.pointee.distpoint {
            scope.distributionPointURIs = X509Handle.uris(name)
            scope.namesOtherDistributionPoint = scope.distributionPointURIs.isEmpty
        }
        scope.onlyEndEntityCertificates = point.pointee.onlyuser > 0
        scope.onlyCACertificates = point.pointee.onlyCA > 0
        scope.onlyAttributeCertificates = point.pointee.onlyattr > 0
        scope.onlySomeReasons = point.pointee.onlysomereasons != nil
        scope.indirect = point.pointee.indirectCRL > 0
        return scope
    }

    /// The critical extensions Pincheck does not process (RFC 5280 §5.2: such a CRL must not be
    /// used to decide a status), as dotted OIDs; those of entries included.
    static func readUnhandledCriticalExtensions(_ ref: OpaquePointer) -> [String] {
        defer { OpenSSLErrorStack.clear() }
        let handled: Set<Int32> = [NID_issuing_distribution_point, NID_crl_number, NID_authority_key_identifier, NID_delta_crl]
        var unhandled: [String] = []
        func note(_ ext: OpaquePointer?) {
            guard let ext, X509_EXTENSION_get_critical(ext) == 1, let object = X509_EXTENSION_get_object(ext) else { return }
            let nid = OBJ_obj2nid(object)
            guard !handled.contains(nid) else { return }
            var buffer = [CChar](repeating: 0, count: 128)
            let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
            let text = length > 0 ? String(decoding: buffer.prefix(Int(min(length, 127))).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
            if !unhandled.contains(text) { unhandled.append(text) }
        }
        for index in 0..<X509_CRL_get_ext_count(ref) { note(X509_CRL_get_ext(ref, index)) }
        if let entries = X509_CRL_get_REVOKED(ref) {
            for index in 0..<OPENSSL_sk_num(entries) {
                guard let entry = OPENSSL_sk_value(entries, index) else { continue }
                let revoked = OpaquePointer(entry)
                // CRLReason and invalidityDate are never critical; anything critical on an entry
                // (certificateIssuer, say) changes its meaning.
                for position in 0..<X509_REVOKED_get_ext_count(revoked) { note(X509_REVOKED_get_ext(revoked, position)) }
            }
        }
        return unhandled
    }

    /// How many entries the CRL lists.
    package var entryCount: Int { X509_CRL_get_REVOKED(ref).map { Int(OPENSSL_sk_num($0)) } ?? 0 }

    /// The entry for `certificate`'s serial number; nil when the CRL does not list it.
    /// OpenSSL sorts the entries once (under the CRL's lock) and searches them by serial.
    package func entry(for certificate: X509Handle) -> CRLEntry? {
        defer { OpenSSLErrorStack.clear() }
        guard let serial = X509_get0_serialNumber(certificate.ref) else { return nil }
        var found: OpaquePointer? = nil
        // 1: listed; 2: listed as removeFromCRL (a delta CRL's "no longer revoked"); 0: not listed.
        guard X509_CRL_get0_by_serial(ref, &found, ASN1Value(serial)?.openSSL()) == 1, let found else { return nil }
        let date = X509_REVOKED_get0_revocationDate(found).map { X509Handle.date($0) }
        var reason: Int? = nil
        if let raw = X509_REVOKED_get_ext_d2i(found, NID_crl_reason, nil, nil) {
            let value = ASN1Value(raw)
            reason = value?.enumerated
            ASN1_ENUMERATED_free(value?.openSSL())
        }
        return CRLEntry(revocationDate: date, reason: reason)
    }
}
