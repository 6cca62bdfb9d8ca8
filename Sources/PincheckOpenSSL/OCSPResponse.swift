internal import COpenSSL
import FoundationEssentials

/// What an OCSP response says about a certificate, once checked.
package enum OCSPOutcome: Sendable, Equatable {
    /// Verified, fresh, and the certificate is good.
    case good
    /// Verified and fresh, and the certificate is revoked.
    case revoked(reason: Int, at: Date?)
    /// Verified and fresh, but the responder does not know the certificate.
    case unknown
    /// The response cannot be relied on.
    case unusable(OCSPUnusable)
}

/// Why an OCSP response cannot be relied on.
package enum OCSPUnusable: Sendable, Equatable {
    case notDER
    /// The responder's status was not successful (its number).
    case unsuccessful(Int)
    case noBasicResponse
    /// The signature or the signer does not verify; OpenSSL's words.
    case badSignature(String)
    /// The response has no answer about this certificate.
    case notAboutCertificate
    case thisUpdateMissingOrInFuture
    /// Stale by its nextUpdate.
    case staleByNextUpdate(Date)
    /// No nextUpdate, and produced longer ago than allowed.
    case staleByAge(produced: Date)
    /// OpenSSL failed (out of memory): what failed.
    case library(String)
}

/// Checks and reads OCSP responses against certificates, at an injected time.
package enum OCSPResponse {
    /// - Parameters:
    ///   - der: The response as stapled (DER `OCSPResponse`).
    ///   - leaf: The leaf it must be about.
    ///   - issuer: The leaf's issuer from the verified path: it, or a responder it delegated to
    ///     (extendedKeyUsage OCSPSigning), must have signed the response.
    ///   - seconds: The verification time, in seconds since 1970.
    ///   - maximumAge: How old `thisUpdate` may be when the response has no `nextUpdate`.
    package static func check(_ der: [UInt8], leaf: X509Handle, issuer: X509Handle, at seconds: Int64, maximumAge: TimeInterval) -> OCSPOutcome {
        let time = Date(timeIntervalSince1970: TimeInterval(seconds))
        OpenSSLErrorStack.clear()
        defer { OpenSSLErrorStack.clear() }
        let response = DERDecoding.decode(der) { d2i_OCSP_RESPONSE(nil, $0, $1) }.object
        guard let response else { return .unusable(.notDER) }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else { return .unusable(.unsuccessful(Int(status))) }
        guard let basic = OCSP_response_get1_basic(response) else { return .unusable(.noBasicResponse) }
        defer { OCSP_BASICRESP_free(basic) }

        // Verify the signature and the signer: the issuer is the only anchor (a partial chain), at the injected time.
        guard let store = X509_STORE_new() else { return .unusable(.library("X509_STORE_new")) }
        defer { X509_STORE_free(store) }
        _ = X509_STORE_add_cert(store, issuer.ref)
        let parameters = X509_STORE_get0_param(store)
        X509_VERIFY_PARAM_set_time(parameters, time_t(seconds))
        _ = X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        guard let untrusted = shim_sk_X509_new_null() else { return .unusable(.library("sk_X509_new_null")) }
        defer { shim_sk_X509_free(untrusted) }
        _ = shim_sk_X509_push(untrusted, issuer.ref)
        guard OCSP_basic_verify(basic, untrusted, store, 0) == 1 else {
            return .unusable(.badSignature(OpenSSLErrorStack.drainedText()))
        }

        guard let id = OCSP_cert_to_id(nil, leaf.ref, issuer.ref) else { return .unusable(.library("OCSP_cert_to_id")) }
        defer { OCSP_CERTID_free(id) }
        var certificateStatus: Int32 = -1, reason: Int32 = -1
        let times = ASN1OutParameters(3)  // revocationTime, thisUpdate, nextUpdate
        guard OCSP_resp_find_status(basic, id, &certificateStatus, &reason, times.slot(0), times.slot(1), times.slot(2)) == 1 else {
            return .unusable(.notAboutCertificate)
        }
        let (revokedAt, thisUpdate, nextUpdate) = (times.value(0), times.value(1), times.value(2))
        let skew: TimeInterval = 300
        guard let produced = date(thisUpdate), produced <= time.addingTimeInterval(skew) else {
            return .unusable(.thisUpdateMissingOrInFuture)
        }
        if let next = date(nextUpdate) {
            if next < time.addingTimeInterval(-skew) { return .unusable(.staleByNextUpdate(next)) }
        } else if time.timeIntervalSince(produced) > maximumAge {
            return .unusable(.staleByAge(produced: produced))
        }
        switch certificateStatus {
        case V_OCSP_CERTSTATUS_GOOD: return .good
        case V_OCSP_CERTSTATUS_REVOKED: return .revoked(reason: Int(reason), at: date(revokedAt))
        default: return .unknown
        }
    }

    /// What a stapled response says about a leaf, read without verifying anything: for summaries
    /// and for how long a copy is worth keeping. ``check(_:leaf:issuer:at:maximumAge:)`` decides.
    package enum Reading: Sendable, Equatable {
        /// Not a DER `OCSPResponse`.
        case unreadable
        /// The responder's answer was not `successful`; its status by name (`tryLater`, …).
        case unsuccessful(String)
        /// Successful, but without a basic response.
        case noBasicResponse
        /// The answers about the leaf, in the response's order (none when it has none).
        case answers([Answer])
    }

    /// One answer of a response about a certificate.
    package struct Answer: Sendable, Equatable {
        /// `good`, `revoked` or `unknown`.
        package let status: String
        /// Until when the answer is fresh; nil when the response does not say.
        package let nextUpdate: Date?
    }

    /// Reads what `der` says about `leaf`.
    /// - Parameter issuer: With it, an answer is the leaf's when its certificate ID (issuer name and
    ///   key hashes, serial number) is the leaf's; without it, when its serial number is.
    package static func read(_ der: [UInt8], about leaf: X509Handle, issuer: X509Handle?) -> Reading {
        OpenSSLErrorStack.clear()
        defer { OpenSSLErrorStack.clear() }
        let response = DERDecoding.decode(der) { d2i_OCSP_RESPONSE(nil, $0, $1) }.object
        guard let response else { return .unreadable }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else { return .unsuccessful(String(cString: OCSP_response_status_str(Int(status)))) }
        guard let basic = OCSP_response_get1_basic(response) else { return .noBasicResponse }
        defer { OCSP_BASICRESP_free(basic) }
        let leafID = issuer.flatMap { OCSP_cert_to_id(nil, leaf.ref, $0.ref) }
        defer { if let leafID { OCSP_CERTID_free(leafID) } }
        guard issuer == nil || leafID != nil, let serial = ASN1Value(X509_get0_serialNumber(leaf.ref)) else { return .answers([]) }
        var answers: [Answer] = []
        for index in 0..<max(0, OCSP_resp_count(basic)) {
            guard let single = OCSP_resp_get0(basic, index), let id = OCSP_SINGLERESP_get0_id(single) else { continue }
            if let leafID {
                guard OCSP_id_cmp(id, leafID) == 0 else { continue }
            } else {
                guard Self.isAnswer(id, about: serial) else { continue }
            }
            var reason: Int32 = -1
            let times = ASN1OutParameters(3)
            let certificateStatus = OCSP_single_get0_status(single, &reason, times.slot(0), times.slot(1), times.slot(2))
            answers.append(Answer(status: String(cString: OCSP_cert_status_str(Int(certificateStatus))), nextUpdate: date(times.value(2))))
        }
        return .answers(answers)
    }

    /// The SCT lists (TLS-encoded) of the response's answers about a certificate with the leaf's
    /// serial number (RFC 6962 §3.3, extension 1.3.6.1.4.1.11129.2.4.5). Nothing is verified here:
    /// each SCT is a log's signature over the leaf itself, checked against the log's key.
    package static func signedCertificateTimestampLists(_ der: [UInt8], for leaf: X509Handle) -> [[UInt8]] {
        OpenSSLErrorStack.clear()
        defer { OpenSSLErrorStack.clear() }
        guard let response = DERDecoding.decode(der, with: { d2i_OCSP_RESPONSE(nil, $0, $1) }).object else { return [] }
        defer { OCSP_RESPONSE_free(response) }
        guard OCSP_response_status(response) == OCSP_RESPONSE_STATUS_SUCCESSFUL, let basic = OCSP_response_get1_basic(response),
            let serial = ASN1Value(X509_get0_serialNumber(leaf.ref))
        else { return [] }
        defer { OCSP_BASICRESP_free(basic) }
        var lists: [[UInt8]] = []
        for index in 0..<max(0, OCSP_resp_count(basic)) {
            guard let single = OCSP_resp_get0(basic, index), let id = OCSP_SINGLERESP_get0_id(single),
                isAnswer(id, about: serial)
            else { continue }
            let position = OCSP_SINGLERESP_get_ext_by_NID(single, NID_ct_cert_scts, -1)
            guard position >= 0, let list = CertificateTransparencyCrypto.sctList(in: OCSP_SINGLERESP_get_ext(single, position)) else { continue }
            lists.append(list)
        }
        return lists
    }

    /// The instant a stapled response stops being fresh for `leaf`: the earliest `nextUpdate` among
    /// its answers about a certificate with the leaf's serial number. Nil when it cannot be read,
    /// has no such answer, or such an answer has no `nextUpdate` (its freshness is then a matter of
    /// the policy's maximum age). Nothing is verified: this only bounds how long a copy of the
    /// response is worth keeping.
    package static func freshUntil(_ der: [UInt8], for leaf: X509Handle) -> Date? {
        guard case .answers(let answers) = read(der, about: leaf, issuer: nil) else { return nil }
        let nextUpdates = answers.compactMap(\.nextUpdate)
        return nextUpdates.count == answers.count ? nextUpdates.min() : nil
    }

    /// Whether a response's answer (its CertID) is about a certificate with this serial number.
    private static func isAnswer(_ id: OpaquePointer, about serial: ASN1Value) -> Bool {
        let answered = ASN1OutParameters(1)
        guard OCSP_id_get0_info(nil, nil, nil, answered.slot(0), id) == 1, let number = answered.value(0) else { return false }
        return ASN1_INTEGER_cmp(number.openSSL(), serial.openSSL()) == 0
    }

    private static func date(_ time: ASN1Value?) -> Date? {
        time?.seconds.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }
}
