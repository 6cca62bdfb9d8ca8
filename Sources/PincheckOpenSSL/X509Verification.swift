internal import COpenSSL
import FoundationEssentials

/// What a certificate is verified for (`X509_PURPOSE_SSL_SERVER` / `X509_PURPOSE_SSL_CLIENT`).
package enum X509Purpose: Sendable, Hashable {
    case serverAuthentication
    case clientAuthentication
}

/// The name the leaf must carry.
package enum X509PeerName: Sendable, Hashable {
    case dns(String)
    case ipAddress(String)
}

/// How the rules that `X509_V_FLAG_X509_STRICT` adds in OpenSSL 3.0 count.
package enum StrictRules: Sendable, Hashable {
    /// Rules that Chromium, Firefox, Go and rustls all leave alone on real server certificates, and
    /// that stop no attack, are reported as tolerated findings; the rest reject.
    case webPKI
    /// Every such rule is a tolerated finding (chain validation disabled: the pins decide).
    case warningsOnly
}

/// The settings of one `X509_verify_cert` run.
package struct X509VerificationRequest {
    package var leaf: X509Handle
    package var untrusted: [X509Handle]
    package var store: X509Store
    /// The certificates the store was made of, when the caller gave them: a built chain reuses
    /// these handles instead of wrapping the store's copies.
    package var anchors: [X509Handle]
    package var peer: X509PeerName?
    /// Seconds since 1970.
    package var time: Int64
    /// Lets an anchor that is not a root end the path (`X509_V_FLAG_PARTIAL_CHAIN`).
    package var allowPartialChain: Bool
    /// The most intermediates a path may have, self-issued ones not counted (RFC 5280).
    package var maximumDepth: Int
    package var purpose: X509Purpose
    /// CRLs to check against; none: no CRL check.
    package var revocationLists: [CRLHandle]
    /// With CRLs: every certificate of the path, not only the leaf.
    package var revocationOfWholeChain: Bool
    package var strictRules: StrictRules

    /// The offered self-issued certificates, each of which may lengthen the path by one (RFC 5280 does not count them).
    var selfIssuedCount: Int { untrusted.count { $0.isSelfIssued } }

    package init(
        leaf: X509Handle, untrusted: [X509Handle], store: X509Store, anchors: [X509Handle], peer: X509PeerName?,
        time: Int64, allowPartialChain: Bool, maximumDepth: Int, purpose: X509Purpose,
        revocationLists: [CRLHandle], revocationOfWholeChain: Bool, strictRules: StrictRules
    ) {
        self.leaf = leaf
        self.untrusted = untrusted
        self.store = store
        self.anchors = anchors
        self.peer = peer
        self.time = time
        self.allowPartialChain = allowPartialChain
        self.maximumDepth = maximumDepth
        self.purpose = purpose
        self.revocationLists = revocationLists
        self.revocationOfWholeChain = revocationOfWholeChain
        self.strictRules = strictRules
    }
}

/// What an error of OpenSSL's verifier means, in this module's words: the engine maps these to its
/// reasons, and never sees an `X509_V_ERR_*` number except as evidence.
package enum X509VerificationErrorKind: Sendable, Hashable {
    case expired
    case notYetValid
    /// The leaf is self-signed and not an anchor.
    case selfSignedLeaf
    /// The chain ends at a self-signed root that is not an anchor.
    case untrustedRoot
    /// No issuer found for some certificate.
    case unknownIssuer
    /// The chain does not end at an anchor.
    case untrusted
    case invalidCA
    case pathLengthExceeded
    case wrongPurpose
    case badSignature
    case tooLong
    case revoked
    /// A CRL could not be had or relied on.
    case revocationUnknown
    case nameConstraints
    case hostMismatch
    case ipAddressMismatch
    /// A key or signature algorithm of the path that the linked OpenSSL cannot use (its name).
    case unsupportedAlgorithm(String)
    case other

    init(code: Int32) {
        self =
            switch code {
            case X509_V_ERR_CERT_HAS_EXPIRED: .expired
            case X509_V_ERR_CERT_NOT_YET_VALID: .notYetValid
            case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: .selfSignedLeaf
            case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN: .untrustedRoot
            case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
                .unknownIssuer
            case X509_V_ERR_CERT_UNTRUSTED: .untrusted
            case X509_V_ERR_INVALID_CA: .invalidCA
            case X509_V_ERR_PATH_LENGTH_EXCEEDED: .pathLengthExceeded
            case X509_V_ERR_INVALID_PURPOSE: .wrongPurpose
            case X509_V_ERR_CERT_SIGNATURE_FAILURE: .badSignature
            case X509_V_ERR_CERT_CHAIN_TOO_LONG: .tooLong
            case X509_V_ERR_CERT_REVOKED: .revoked
            case X509_V_ERR_UNABLE_TO_GET_CRL, X509_V_ERR_CRL_SIGNATURE_FAILURE, X509_V_ERR_CRL_NOT_YET_VALID,
                X509_V_ERR_CRL_HAS_EXPIRED, X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE, X509_V_ERR_KEYUSAGE_NO_CRL_SIGN,
                X509_V_ERR_UNHANDLED_CRITICAL_CRL_EXTENSION, X509_V_ERR_DIFFERENT_CRL_SCOPE, X509_V_ERR_CRL_PATH_VALIDATION_ERROR,
                X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER:
                .revocationUnknown
            case X509_V_ERR_PERMITTED_VIOLATION, X509_V_ERR_EXCLUDED_VIOLATION: .nameConstraints
            case X509_V_ERR_HOSTNAME_MISMATCH: .hostMismatch
            case X509_V_ERR_IP_ADDRESS_MISMATCH: .ipAddressMismatch
            default: .other
            }
    }

    /// True when this only says that no issuer was found: the chain does not reach an anchor.
    package var isMissingIssuer: Bool {
        switch self {
        case .unknownIssuer, .selfSignedLeaf, .untrustedRoot, .untrusted: true
        default: false
        }
    }
}

/// One error OpenSSL's verifier reported, with where in the chain it happened.
package struct X509VerificationError: Sendable, Equatable {
    package let kind: X509VerificationErrorKind
    /// OpenSSL's `X509_V_ERR_*` number, for evidence only.
    package let code: Int32
    package let depth: Int
    /// OpenSSL's text for the code.
    package let text: String
    package let certificate: X509Handle?

    init(kind: X509VerificationErrorKind, code: Int32, depth: Int, text: String, certificate: X509Handle?) {
        self.kind = kind
        self.code = code
        self.depth = depth
        self.text = text
        self.certificate = certificate
    }

    init(code: Int32, depth: Int, text: String? = nil, certificate: X509Handle?) {
        self.kind = X509VerificationErrorKind(code: code)
        self.code = code
        self.depth = depth
        self.text = text ?? String(cString: X509_verify_cert_error_string(Int(code)))
        self.certificate = certificate
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.depth == rhs.depth && lhs.text == rhs.text && lhs.certificate?.der == rhs.certificate?.der
    }
}

/// The outcome of one `X509_verify_cert` run.
package struct X509VerificationResult: Sendable {
    /// The chain OpenSSL built, leaf first (complete and trusted only when ``succeeded``).
    package let builtChain: [X509Handle]
    /// Every error the verifier reported (the callback keeps going so all of them are seen).
    package let errors: [X509VerificationError]
    package let succeeded: Bool
    /// Findings of the strict rules that were reported but not counted: facts, which the engine words.
    package let tolerated: [X509ToleratedFinding]
}

/// A rule OpenSSL reported that the request tolerates: where, and which.
package struct X509ToleratedFinding: Sendable, Hashable {
    package enum Rule: Sendable, Hashable {
        /// The self-signed trust anchor is an X.509 v1 root without basicConstraints.
        case versionOneAnchor
        /// A strict (X509_STRICT) rule, with OpenSSL's text for it.
        case strictRule(code: Int32, text: String)
    }

    package let rule: Rule
    package let depth: Int
    /// The certificate's subject, when OpenSSL named the certificate.
    package let subject: String?
}

/// `X509_verify_cert` with Pincheck's hardened settings: purpose sslserver (or sslclient),
/// X509_STRICT, the host check without the subject CN and without partial wildcards, an injected
/// time, a maximum depth counted as RFC 5280 counts it.
package enum X509Verification {
    /// Collects errors from the verify callback; reached through the context's app data.
    private final class Collector {
        var errors: [X509VerificationError] = []
        var tolerated: [X509ToleratedFinding] = []
        /// The verification time, to tell "expired" from "expires exactly now".
        let time: time_t
        /// The strict rules reported as findings.
        let tolerating: Set<Int32>
        let store: X509Store
        init(time: time_t, tolerating: Set<Int32>, store: X509Store) {
            self.time = time
            self.tolerating = tolerating
            self.store = store
        }
    }

    /// The rules `X509_V_FLAG_X509_STRICT` adds (OpenSSL 3.0 `check_extensions`).
    static let strictOnlyErrors: Set<Int32> = [
        X509_V_ERR_EC_KEY_EXPLICIT_PARAMS, X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA, X509_V_ERR_PATHLEN_WITHOUT_KU_KEY_CERT_SIGN,
        X509_V_ERR_CA_BCONS_NOT_CRITICAL, X509_V_ERR_CA_CERT_MISSING_KEY_USAGE, X509_V_ERR_KU_KEY_CERT_SIGN_INVALID_FOR_NON_CA,
        X509_V_ERR_ISSUER_NAME_EMPTY, X509_V_ERR_SUBJECT_NAME_EMPTY, X509_V_ERR_EMPTY_SUBJECT_SAN_NOT_CRITICAL,
        X509_V_ERR_EMPTY_SUBJECT_ALT_NAME, X509_V_ERR_SIGNATURE_ALGORITHM_INCONSISTENCY,
        X509_V_ERR_AUTHORITY_KEY_IDENTIFIER_CRITICAL, X509_V_ERR_SUBJECT_KEY_IDENTIFIER_CRITICAL,
        X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER, X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER,
        X509_V_ERR_EXTENSIONS_REQUIRE_VERSION_3,
    ]

    /// The strict rules that are findings in the Web PKI profile: none of Chromium, Firefox
    /// (mozilla::pkix), Go's crypto/x509 and rustls-webpki enforces them, and none stops an
    /// attack (key identifiers and these flags only help path building). The strict-profile
    /// evidence gives the reasons rule by rule; real chains need some of them (a cross-signed
    /// intermediate without authorityKeyIdentifier, a Mozilla root without subjectKeyIdentifier).
    static let webPKIWarnings: Set<Int32> = [
        X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER, X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER,
        X509_V_ERR_CA_BCONS_NOT_CRITICAL, X509_V_ERR_CA_CERT_MISSING_KEY_USAGE,
        X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA, X509_V_ERR_PATHLEN_WITHOUT_KU_KEY_CERT_SIGN,
        X509_V_ERR_KU_KEY_CERT_SIGN_INVALID_FOR_NON_CA,
    ]

    package static func verify(_ request: X509VerificationRequest) -> X509VerificationResult {
        OpenSSLErrorStack.clear()
        defer { OpenSSLErrorStack.clear() }
        func failed(_ text: String) -> X509VerificationResult {
            X509VerificationResult(
                builtChain: [], errors: [X509VerificationError(code: X509_V_ERR_UNSPECIFIED, depth: 0, text: text, certificate: nil)],
                succeeded: false, tolerated: [])
        }
        guard let context = X509_STORE_CTX_new() else { return failed("X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = shim_sk_X509_new_null() else { return failed("sk_X509_new_null failed") }
        // The stack borrows: the handles keep their X509 alive for the whole call.
        defer { shim_sk_X509_free(untrusted) }
        for certificate in request.untrusted { _ = shim_sk_X509_push(untrusted, certificate.ref) }
        guard X509_STORE_CTX_init(context, request.store.ref, request.leaf.ref, untrusted) == 1 else {
            return failed("X509_STORE_CTX_init failed: \(OpenSSLErrorStack.drainedText())")
        }
        // The stack borrows: the CRL handles keep their X509_CRL alive for the call.
        var crls: OpaquePointer? = nil
        defer { if let crls { shim_sk_X509_CRL_free(crls) } }
        if let problem = configure(context, for: request, crls: &crls) { return failed(problem) }
        let tolerating =
            switch request.strictRules {
            case .webPKI: webPKIWarnings
            case .warningsOnly: strictOnlyErrors
            }
        let collector = Collector(time: time_t(request.time), tolerating: tolerating, store: request.store)
        let returned: Int32 = withExtendedLifetime(collector) {
            _ = shim_X509_STORE_CTX_set_app_data(context, Unmanaged.passUnretained(collector).toOpaque())
            X509_STORE_CTX_set_verify_cb(context) { ok, context in X509Verification.callback(ok, context) }
            return X509_verify_cert(context)
        }
        return result(of: context, returned: returned, collector: collector, request: request)
    }

    /// Purpose, flags, CRLs, time, depth and the peer's name on a fresh context; a failure's text, or nil.
    private static func configure(_ context: OpaquePointer, for request: X509VerificationRequest, crls: inout OpaquePointer?) -> String? {
        switch request.purpose {
        case .serverAuthentication: _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER)
        case .clientAuthentication: _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_CLIENT)
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        var flags = UInt(X509_V_FLAG_X509_STRICT)
        if request.allowPartialChain { flags |= UInt(X509_V_FLAG_PARTIAL_CHAIN) }
        if !request.revocationLists.isEmpty {
            guard let stack = shim_sk_X509_CRL_new_null() else { return "sk_X509_CRL_new_null failed" }
            crls = stack
            for crl in request.revocationLists { _ = shim_sk_X509_CRL_push(stack, crl.ref) }
            X509_STORE_CTX_set0_crls(context, stack)
            flags |= UInt(X509_V_FLAG_CRL_CHECK)
            if request.revocationOfWholeChain { flags |= UInt(X509_V_FLAG_CRL_CHECK_ALL) }
        }
        _ = X509_VERIFY_PARAM_set_flags(parameters, flags)
        X509_VERIFY_PARAM_set_time(parameters, time_t(request.time))
        // OpenSSL counts every intermediate; RFC 5280 (§4.2.1.9, §6.1.4 l) leaves self-issued ones
        // (a CA's key rollover) out. Each offered self-issued certificate may lengthen the path by
        // one; the built path is then held to the limit, counted as RFC 5280 counts (`result`).
        X509_VERIFY_PARAM_set_depth(parameters, Int32(clamping: request.maximumDepth + request.selfIssuedCount))
        // Set for every peer kind (and none): besides the host check, NEVER_CHECK_SUBJECT stops
        // OpenSSL from applying DNS name constraints to a subject CN, which is not a name Pincheck uses.
        X509_VERIFY_PARAM_set_hostflags(parameters, X509Relations.hostFlags)
        switch request.peer {
        case .dns(let name):
            guard X509_VERIFY_PARAM_set1_host(parameters, name, name.utf8.count) == 1 else { return "cannot check host name \"\(name)\"" }
        case .ipAddress(let address):
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, address) == 1 else { return "cannot check IP address \"\(address)\"" }
        case nil:
            break
        }
        return nil
    }

    /// The verify callback: records every error (and keeps going, so all of them are seen), and
    /// lets through what the request tolerates, recorded as a finding.
    private static func callback(_ ok: Int32, _ context: OpaquePointer?) -> Int32 {
        guard ok == 0, let context, let data = shim_X509_STORE_CTX_get_app_data(context) else { return ok }
        let collector = Unmanaged<Collector>.fromOpaque(data).takeUnretainedValue()
        let code = X509_STORE_CTX_get_error(context)
        let current = X509_STORE_CTX_get_current_cert(context)
        // RFC 5280 §4.1.2.5: the validity period includes notAfter itself; OpenSSL calls a
        // certificate expired from that second on.
        if code == X509_V_ERR_CERT_HAS_EXPIRED, let current, let notAfter = X509_get0_notAfter(current),
            ASN1_TIME_cmp_time_t(notAfter, collector.time) == 0
        {
            return 1
        }
        let depth = Int(X509_STORE_CTX_get_error_depth(context))
        let certificate = current.flatMap { X509Handle(borrowing: $0) }
        // X509_STRICT refuses a CA certificate without basicConstraints (X.509 v1), the trust
        // anchor included. An anchor is trusted as configured (RFC 5280 §6.1.1 d: its name and
        // key), and Mozilla shipped v1 roots (VeriSign Class 3 G3) that browsers trusted: for the
        // self-signed anchor this is a finding; intermediates still need it.
        var tolerated: X509ToleratedFinding.Rule? = nil
        if code == X509_V_ERR_INVALID_CA, depth == Int(shim_sk_X509_num(X509_STORE_CTX_get0_chain(context))) - 1,
            let current, X509_self_signed(current, 0) == 1, X509_check_ca(current) == 3
        {
            tolerated = .versionOneAnchor
        } else if collector.tolerating.contains(code) {
            tolerated = .strictRule(code: code, text: String(cString: X509_verify_cert_error_string(Int(code))))
        }
        if let tolerated {
            let finding = X509ToleratedFinding(rule: tolerated, depth: depth, subject: certificate?.subject)
            if !collector.tolerated.contains(finding) { collector.tolerated.append(finding) }
            return 1
        }
        let error = X509VerificationError(code: code, depth: depth, certificate: certificate)
        if !collector.errors.contains(error) { collector.errors.append(error) }
        // Keep going so every problem is reported; the verdict is failure regardless.
        return 1
    }

    /// The built chain and the errors, with what OpenSSL's own counting gets wrong put right.
    private static func result(
        of context: OpaquePointer, returned: Int32, collector: Collector,
        request: X509VerificationRequest
    ) -> X509VerificationResult {
        var errors = collector.errors.map { error in
            Self.namingUnsupportedAlgorithm(error, path: [request.leaf] + request.untrusted + request.anchors)
        }
        if returned != 1 && errors.isEmpty {
            // A failure that never reached the callback (an internal error): still a failure.
            let code = X509_STORE_CTX_get_error(context)
            errors.append(
                X509VerificationError(
                    code: code, depth: Int(X509_STORE_CTX_get_error_depth(context)),
                    text: code == X509_V_OK ? "verification failed: \(OpenSSLErrorStack.drainedText())" : nil,
                    certificate: nil))
        }
        let built = builtChain(context, request)
        // Only a widened depth needs the recount; otherwise OpenSSL has already held the path to it.
        if returned == 1, request.selfIssuedCount > 0,
            built.dropFirst().dropLast().count(where: { !$0.isSelfIssued }) > request.maximumDepth
        {
            errors.append(X509VerificationError(code: X509_V_ERR_CERT_CHAIN_TOO_LONG, depth: built.count - 1, certificate: nil))
        }
        // OpenSSL stops building at the depth limit, says the chain is too long, and then that it
        // found no issuer for the certificate it stopped at. When that issuer was offered, the
        // second is only a consequence of the first: a 31-certificate served chain is too long,
        // not "unknown issuer".
        if errors.contains(where: { $0.kind == .tooLong }), let top = built.last,
            (request.untrusted + request.anchors).contains(where: { $0 !== top && $0.der != top.der && $0.mayHaveIssued(top) })
        {
            errors.removeAll(where: \.kind.isMissingIssuer)
        }
        return X509VerificationResult(
            builtChain: built, errors: errors, succeeded: returned == 1 && errors.isEmpty,
            tolerated: collector.tolerated)
    }

    /// The errors OpenSSL gives when it cannot use a key or signature algorithm (3.0 on an ML-DSA
    /// certificate: "unspecified", "unable to decode issuer public key", or no issuer found, since
    /// it cannot match an issuer whose key it cannot decode): they name it.
    static let algorithmErrors: Set<Int32> = [
        X509_V_ERR_UNSPECIFIED, X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY, X509_V_ERR_CERT_SIGNATURE_FAILURE,
        X509_V_ERR_EE_KEY_TOO_SMALL, X509_V_ERR_CA_KEY_TOO_SMALL, X509_V_ERR_CA_MD_TOO_WEAK,
        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
        X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
    ]

    /// The error, as ``X509VerificationErrorKind/unsupportedAlgorithm(_:)`` when the certificate it
    /// is about (or, for an error that names none, a certificate it could be about) uses an
    /// algorithm the linked OpenSSL cannot use.
    private static func namingUnsupportedAlgorithm(_ error: X509VerificationError, path: [X509Handle]) -> X509VerificationError {
        guard algorithmErrors.contains(error.code) else { return error }
        let candidates = error.certificate.map { [$0] } ?? path
        guard let name = candidates.lazy.compactMap(\.unsupportedAlgorithm).first else { return error }
        return X509VerificationError(
            kind: .unsupportedAlgorithm(name), code: error.code, depth: error.depth, text: error.text,
            certificate: error.certificate)
    }

    /// The context's chain (borrowed: it lives as long as the context), as the request's own
    /// handles where possible; anything else (a system-store anchor) is the store's handle for it.
    private static func builtChain(_ context: OpaquePointer, _ request: X509VerificationRequest) -> [X509Handle] {
        guard let chain = X509_STORE_CTX_get0_chain(context) else { return [] }
        let count = shim_sk_X509_num(chain)
        var result: [X509Handle] = []
        result.reserveCapacity(Int(max(0, count)))
        for index in 0..<count {
            guard let x = shim_sk_X509_value(chain, index) else { continue }
            if request.leaf.ref == x {
                result.append(request.leaf)
            } else if let same = request.untrusted.first(where: { $0.ref == x }) ?? request.anchors.first(where: { $0.ref == x }) {
                result.append(same)
            } else if let anchor = request.store.handle(lentAt: x) {
                result.append(anchor)
            }
        }
        return result
    }
}
