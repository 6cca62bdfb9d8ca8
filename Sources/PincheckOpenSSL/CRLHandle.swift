internal import COpenSSL
import FoundationEssentials

/// Owns exactly one OpenSSL `X509_CRL` and frees it in `deinit`.
///
/// `@unchecked Sendable`: never mutated after `init`; OpenSSL only reads a CRL during verification
/// (its cached extension data is computed when it is parsed).
package final class CRLHandle: @unchecked Sendable {
    let ref: OpaquePointer
    package let der: [UInt8]

    /// Parses one DER CRL; trailing bytes are an error.
    package init(der bytes: [UInt8]) throws(OpenSSLFailure) {
        OpenSSLErrorStack.clear()
        let (parsed, consumed) = DERDecoding.decode(bytes) { d2i_X509_CRL(nil, $0, $1) }
        guard let parsed else {
            throw OpenSSLFailure(.malformedDER, "not a DER CRL: \(OpenSSLErrorStack.drainedText())")
        }
        guard consumed == bytes.count else {
            X509_CRL_free(parsed)
            throw OpenSSLFailure(.malformedDER, "\(bytes.count - consumed) bytes after the end of the CRL")
        }
        self.ref = parsed
        self.der = bytes
        self.hasNumber = X509_CRL_get_ext_by_NID(parsed, NID_crl_number, -1) >= 0
        self.isDelta = X509_CRL_get_ext_by_NID(parsed, NID_delta_crl, -1) >= 0
        self.lastUpdateSeconds = X509Handle.seconds(X509_CRL_get0_lastUpdate(parsed))
        self.nextUpdateSeconds = X509_CRL_get0_nextUpdate(parsed).map { X509Handle.seconds($0) }
        self.scope = Self.readScope(parsed)
        self.unhandledCriticalExtensions = Self.readUnhandledCriticalExtensions(parsed)
    }

    /// What the CRL covers, from its issuingDistributionPoint (read once).
    package let scope: CRLScope
    /// True for a delta CRL (deltaCRLIndicator): not a complete list on its own.
    package let isDelta: Bool
    /// The critical extensions Pincheck does not process, the entries' included (read once).
    package let unhandledCriticalExtensions: [String]
    /// The SubjectPublicKeyInfos whose key verified the signature.
    let verifiedKeys = PThreadLocked<[[UInt8]]>([])

    /// True when the CRL carries a cRLNumber (RFC 5280 §5.2.3: conforming issuers MUST include it).
    package let hasNumber: Bool

    /// thisUpdate and nextUpdate in whole seconds since 1970 (`Int64.min` when unreadable), read once.
    package let lastUpdateSeconds: Int64
    package let nextUpdateSeconds: Int64?

    deinit { X509_CRL_free(ref) }
}
