import FoundationEssentials
package import PincheckOpenSSL

/// Stapled OCSP responses, read and checked by the OpenSSL module, in the engine's words.
package enum StapledOCSP {
    /// What a response says about `leaf` once checked against `issuer` at `time`; an unusable
    /// response comes with the sentence the verdict shows.
    static func check(_ der: [UInt8], leaf: Certificate, issuer: Certificate, at time: Date, maximumAge: TimeInterval) -> Outcome {
        switch OCSPResponse.check(der, leaf: leaf.handle, issuer: issuer.handle, at: Timestamp.seconds(time), maximumAge: maximumAge) {
        case .good: .good
        case .revoked(let reason, let at): .revoked(reason: reason, at: at)
        case .unknown: .unknown
        case .unusable(let why): .unusable(sentence(why))
        }
    }

    /// A checked response's answer.
    enum Outcome: Sendable, Equatable {
        case good
        case revoked(reason: Int, at: Date?)
        case unknown
        /// Why the response cannot be relied on, in words.
        case unusable(String)
    }

    private static func sentence(_ why: OCSPUnusable) -> String {
        switch why {
        case .notDER: "the stapled OCSP response is not DER"
        case .unsuccessful(let status): "the responder answered with status \(status), not successful"
        case .noBasicResponse: "the response has no basic OCSP response"
        case .badSignature(let detail):
            "the response's signature or signer does not verify (it must be signed by the issuer or its delegated OCSP responder): \(detail)"
        case .notAboutCertificate: "the response is not about this certificate"
        case .thisUpdateMissingOrInFuture: "the response's thisUpdate is missing or in the future"
        case .staleByNextUpdate(let next): "the response is stale: nextUpdate was \(Timestamp.iso8601(next))"
        case .staleByAge(let produced): "the response is stale: produced \(Timestamp.iso8601(produced)) and has no nextUpdate"
        case .library(let what): "\(what) failed"
        }
    }

    package typealias Reading = OCSPResponse.Reading

    /// What `der` says about `leaf`, read without verifying anything (``OCSPResponse/read(_:about:issuer:)``).
    package static func read(_ der: [UInt8], about leaf: Certificate, issuer: Certificate?) -> Reading {
        OCSPResponse.read(der, about: leaf.handle, issuer: issuer?.handle)
    }

    /// The instant a stapled response stops being fresh for `leaf` (``OCSPResponse/freshUntil(_:for:)``).
    package static func freshUntil(_ der: [UInt8], for leaf: Certificate) -> Date? {
        OCSPResponse.freshUntil(der, for: leaf.handle)
    }
}
