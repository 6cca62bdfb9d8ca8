internal import COpenSSL

extension X509Handle {
    /// The most caIssuers URLs read from one certificate: public CAs name one.
    package static let caIssuersLimit = 2

    /// The http URLs of the certificate's authorityInfoAccess caIssuers entries (RFC 5280
    /// §4.2.2.1), in certificate order: the first ``caIssuersLimit`` of them. Other access methods
    /// (OCSP) and other names (LDAP) are left out. Read on demand: only the road that must find a
    /// leaf's issuer itself (AsyncHTTPClient's, which is shown the leaf alone) asks.
    package var caIssuersURLs: [String] {
        defer { OpenSSLErrorStack.clear() }
        guard X509_get_ext_by_NID(ref, NID_info_access, -1) >= 0,
            let raw = X509_get_ext_d2i(ref, NID_info_access, nil, nil)
        else { return [] }
        let access = OpaquePointer(raw)
        defer { AUTHORITY_INFO_ACCESS_free(access) }
        var urls: [String] = []
        for index in 0..<OPENSSL_sk_num(access) where urls.count < Self.caIssuersLimit {
            guard let value = OPENSSL_sk_value(access, index) else { continue }
            let description = value.assumingMemoryBound(to: ACCESS_DESCRIPTION.self).pointee
            guard OBJ_obj2nid(description.method) == NID_ad_ca_issuers, let location = description.location,
                location.pointee.type == GEN_URI, let uri = location.pointee.d.uniformResourceIdentifier,
                let data = ASN1_STRING_get0_data(uri)
            else { continue }
            let url = String(decoding: UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(uri))), as: UTF8.self)
            if Self.isHTTP(url), !urls.contains(url) { urls.append(url) }
        }
        return urls
    }
}
