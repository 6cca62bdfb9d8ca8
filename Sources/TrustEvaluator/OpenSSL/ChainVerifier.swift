internal import COpenSSL
import FoundationEssentials

/// One error OpenSSL's verifier reported, with where in the chain it happened.
struct ChainVerificationError: Sendable, Hashable {
    /// `X509_V_ERR_*`.
    let code: Int32
    let depth: Int
    let text: String
    let certificate: Certificate?
}

/// The outcome of one `X509_verify_cert` run.
struct ChainVerification: Sendable {
    /// The chain OpenSSL built, leaf first (complete and trusted only when ``succeeded``).
    let builtChain: [Certificate]
    /// Every error the verifier reported (the callback keeps going so all of them are seen).
    let errors: [ChainVerificationError]
    let succeeded: Bool
    /// Findings of `X509_V_FLAG_X509_STRICT` rules that were reported but not counted (see
    /// ``StrictRules``), as messages for the verdict's warnings.
    var tolerated: [String] = []
}

/// How the rules that `X509_V_FLAG_X509_STRICT` adds in OpenSSL 3.0 count.
enum StrictRules: Sendable {
    /// As the README's strict-profile table says: rules that Chromium, Firefox, Go and rustls all
    /// leave alone on real server certificates, and that stop no attack, are warnings; the rest reject.
    case webPKI
    /// Every such rule is a warning (chain validation disabled: the pins decide).
    case warningsOnly
}

/// The settings of one verification run.
struct ChainVerificationRequest {
    var leaf: Certificate
    var untrusted: [Certificate]
    var anchors: TrustAnchors
    var peer: PeerName?
    var time: Date
    /// Lets an anchor that is not a root end the path (`X509_V_FLAG_PARTIAL_CHAIN`): certificate
    /// pinning, and a path forced onto one caller-given anchor (the store then holds only it).
    var allowPartialChain: Bool
    var maximumDepth: Int
    var purpose: TrustPolicy.Purpose = .serverAuthentication
    /// Supplied CRLs; when non-empty the leaf's (or the whole path's) revocation status is checked against them.
    var revocationLists: [CertificateRevocationList] = []
    var revocationScope: TrustPolicy.RevocationScope = .leaf
    var strictRules: StrictRules = .webPKI
}

/// Wraps `X509_verify_cert` with Pincheck's hardened settings: purpose sslserver, X509_STRICT,
/// host check without the subject CN and without partial wildcards, injected time, max depth.
enum ChainVerifier {
    /// Collects errors from the verify callback; reached through the context's app data.
    private final class Collector {
        var errors: [ChainVerificationError] = []
        var tolerated: [String] = []
        /// The verification time, to tell "expired" from "expires exactly now".
        let time: time_t
        /// The strict rules reported as warnings.
        let tolerating: Set<Int32>
        init(time: time_t, tolerating: Set<Int32>) {
            self.time = time
            self.tolerating = tolerating
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

    /// The strict rules that are warnings in the Web PKI profile: none of Chromium, Firefox
    /// (mozilla::pkix), Go's crypto/x509 and rustls-webpki enforces them, and none stops an
    /// attack (key identifiers and these flags only help path building). The README's table
    /// gives the evidence rule by rule; real chains need some of them (a cross-signed
    /// intermediate without authorityKeyIdentifier, a Mozilla root without subjectKeyIdentifier).
    static let webPKIWarnings: Set<Int32> = [
        X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER, X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER,
        X509_V_ERR_CA_BCONS_NOT_CRITICAL, X509_V_ERR_CA_CERT_MISSING_KEY_USAGE,
        X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA, X509_V_ERR_PATHLEN_WITHOUT_KU_KEY_CERT_SIGN,
        X509_V_ERR_KU_KEY_CERT_SIGN_INVALID_FOR_NON_CA,
    ]

    static func verify(_ request: ChainVerificationRequest) -> ChainVerification {
        OpenSSLErrorStack.clear()
        defer { OpenSSLErrorStack.clear() }
        guard let context = X509_STORE_CTX_new() else {
            return ChainVerification(builtChain: [], errors: [internalError("X509_STORE_CTX_new failed")], succeeded: false)
        }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = shim_sk_X509_new_null() else {
            return ChainVerification(builtChain: [], errors: [internalError("sk_X509_new_null failed")], succeeded: false)
        }
        // The stack borrows: the Certificates keep their X509 alive for the whole call.
        defer { shim_sk_X509_free(untrusted) }
        for certificate in request.untrusted { _ = shim_sk_X509_push(untrusted, certificate.handle.ref) }

        guard X509_STORE_CTX_init(context, request.anchors.store, request.leaf.handle.ref, untrusted) == 1 else {
            return ChainVerification(builtChain: [], errors: [internalError("X509_STORE_CTX_init failed: \(OpenSSLErrorStack.drainedText())")], succeeded: false)
        }
        switch request.purpose {
        case .serverAuthentication: _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER)
        case .clientAuthentication: _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_CLIENT)
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        var flags = UInt(X509_V_FLAG_X509_STRICT)
        if request.allowPartialChain { flags |= UInt(X509_V_FLAG_PARTIAL_CHAIN) }
        // The stack borrows: the CertificateRevocationLists keep their X509_CRL alive for the call.
        var crls: OpaquePointer? = nil
        defer { if let crls { shim_sk_X509_CRL_free(crls) } }
        if !request.revocationLists.isEmpty {
            guard let stack = shim_sk_X509_CRL_new_null() else {
                return ChainVerification(builtChain: [], errors: [internalError("sk_X509_CRL_new_null failed")], succeeded: false)
            }
            crls = stack
            for crl in request.revocationLists { _ = shim_sk_X509_CRL_push(stack, crl.handle.ref) }
            X509_STORE_CTX_set0_crls(context, stack)
            flags |= UInt(X509_V_FLAG_CRL_CHECK)
            if request.revocationScope == .wholeChain { flags |= UInt(X509_V_FLAG_CRL_CHECK_ALL) }
        }
        _ = X509_VERIFY_PARAM_set_flags(parameters, flags)
        let time = time_t(Timestamp.seconds(request.time))
        X509_VERIFY_PARAM_set_time(parameters, time)
        // OpenSSL counts every intermediate; RFC 5280 (§4.2.1.9, §6.1.4 l) leaves self-issued ones
        // (a CA's key rollover) out. Each offered self-issued certificate may lengthen the path by
        // one; the built path is then held to the limit below, counted as RFC 5280 counts.
        let selfIssued = request.untrusted.count { $0.handle.isSelfIssued }
        X509_VERIFY_PARAM_set_depth(parameters, Int32(clamping: request.maximumDepth + selfIssued))
        // Set for every peer kind (and none): besides the host check, NEVER_CHECK_SUBJECT stops
        // OpenSSL from applying DNS name constraints to a subject CN, which is not a name Pincheck uses.
        X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        switch request.peer {
        case .dns(let name):
            guard X509_VERIFY_PARAM_set1_host(parameters, name, name.utf8.count) == 1 else {
                return ChainVerification(builtChain: [], errors: [internalError("cannot check host name \"\(name)\"")], succeeded: false)
            }
        case .ipAddress(let address):
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, address) == 1 else {
                return ChainVerification(builtChain: [], errors: [internalError("cannot check IP address \"\(address)\"")], succeeded: false)
            }
        case nil:
            break
        }

        let tolerating = switch request.strictRules {
        case .webPKI: webPKIWarnings
        case .warningsOnly: strictOnlyErrors
        }
        let collector = Collector(time: time, tolerating: tolerating)
        let returned: Int32 = withExtendedLifetime(collector) {
            _ = shim_X509_STORE_CTX_set_app_data(context, Unmanaged.passUnretained(collector).toOpaque())
            X509_STORE_CTX_set_verify_cb(context) { ok, context in
                guard ok == 0, let context, let data = shim_X509_STORE_CTX_get_app_data(context) else { return ok }
                let collector = Unmanaged<Collector>.fromOpaque(data).takeUnretainedValue()
                let code = X509_STORE_CTX_get_error(context)
                // RFC 5280 §4.1.2.5: the validity period includes notAfter itself; OpenSSL calls a
                // certificate expired from that second on.
                if code == X509_V_ERR_CERT_HAS_EXPIRED, let current = X509_STORE_CTX_get_current_cert(context),
                   let notAfter = X509_get0_notAfter(current), ASN1_TIME_cmp_time_t(notAfter, collector.time) == 0 {
                    return 1
                }
                let depth = Int(X509_STORE_CTX_get_error_depth(context))
                // X509_STRICT refuses a CA certificate without basicConstraints (X.509 v1), the
                // trust anchor included. An anchor is trusted as configured (RFC 5280 §6.1.1 d: its
                // name and key), and Mozilla shipped v1 roots (VeriSign Class 3 G3) that browsers
                // trusted: for the self-signed anchor this is a warning; intermediates still need it.
                if code == X509_V_ERR_INVALID_CA, depth == Int(shim_sk_X509_num(X509_STORE_CTX_get0_chain(context))) - 1,
                   let current = X509_STORE_CTX_get_current_cert(context), X509_self_signed(current, 0) == 1,
                   X509_check_ca(current) == 3 {
                    let subject = X509Handle(borrowing: current).map { " (\($0.subject))" } ?? ""
                    let finding = "the trust anchor at depth \(depth)\(subject) is an X.509 v1 root without basicConstraints; trusted as configured"
                    if !collector.tolerated.contains(finding) { collector.tolerated.append(finding) }
                    return 1
                }
                if collector.tolerating.contains(code) {
                    let subject = X509_STORE_CTX_get_current_cert(context).flatMap { X509Handle(borrowing: $0) }.map { " (\($0.subject))" } ?? ""
                    let finding = "the certificate at depth \(depth)\(subject): \(String(cString: X509_verify_cert_error_string(Int(code)))) (RFC 5280 strict rule, not counted)"
                    if !collector.tolerated.contains(finding) { collector.tolerated.append(finding) }
                    return 1
                }
                let certificate = X509_STORE_CTX_get_current_cert(context).flatMap { X509Handle(borrowing: $0) }.map(Certificate.init(handle:))
                let error = ChainVerificationError(
                    code: code,
                    depth: Int(X509_STORE_CTX_get_error_depth(context)),
                    text: String(cString: X509_verify_cert_error_string(Int(code))),
                    certificate: certificate)
                if !collector.errors.contains(error) { collector.errors.append(error) }
                // Keep going so every problem is reported; the verdict is failure regardless.
                return 1
            }
            return X509_verify_cert(context)
        }

        var errors = collector.errors
        if returned != 1 && errors.isEmpty {
            // A failure that never reached the callback (an internal error): still a failure.
            let code = X509_STORE_CTX_get_error(context)
            errors.append(ChainVerificationError(
                code: code, depth: Int(X509_STORE_CTX_get_error_depth(context)),
                text: code == X509_V_OK ? "verification failed: \(OpenSSLErrorStack.drainedText())" : String(cString: X509_verify_cert_error_string(Int(code))),
                certificate: nil))
        }
        let built = builtChain(context, request)
        // Only a widened depth needs the recount; otherwise OpenSSL has already held the path to it.
        if returned == 1, selfIssued > 0, ChainDepth.counted(built.dropFirst().dropLast()) > request.maximumDepth {
            errors.append(ChainVerificationError(
                code: X509_V_ERR_CERT_CHAIN_TOO_LONG, depth: built.count - 1,
                text: String(cString: X509_verify_cert_error_string(Int(X509_V_ERR_CERT_CHAIN_TOO_LONG))), certificate: nil))
        }
        // OpenSSL stops building at the depth limit, says the chain is too long, and then that it
        // found no issuer for the certificate it stopped at. When that issuer was offered, the
        // second is only a consequence of the first: a 31-certificate served chain is too long,
        // not "unknown issuer".
        if errors.contains(where: { $0.code == X509_V_ERR_CERT_CHAIN_TOO_LONG }), let top = built.last,
           (request.untrusted + request.anchors.certificates).contains(where: { $0 != top && X509_check_issued($0.handle.ref, top.handle.ref) == X509_V_OK }) {
            OpenSSLErrorStack.clear()
            errors.removeAll(where: \.isMissingIssuer)
        }
        return ChainVerification(builtChain: built, errors: errors, succeeded: returned == 1 && errors.isEmpty,
                                 tolerated: collector.tolerated)
    }

    /// The context's chain (borrowed: it lives as long as the context), mapped back to the caller's
    /// `Certificate` values where possible; anything else (a system-store anchor) gets its own reference.
    private static func builtChain(_ context: OpaquePointer, _ request: ChainVerificationRequest) -> [Certificate] {
        guard let chain = X509_STORE_CTX_get0_chain(context) else { return [] }
        let count = shim_sk_X509_num(chain)
        var result: [Certificate] = []
        result.reserveCapacity(Int(max(0, count)))
        for index in 0..<count {
            guard let x = shim_sk_X509_value(chain, index) else { continue }
            if request.leaf.handle.ref == x {
                result.append(request.leaf)
            } else if let same = request.untrusted.first(where: { $0.handle.ref == x })
                        ?? request.anchors.certificates.first(where: { $0.handle.ref == x }) {
                result.append(same)
            } else if let anchor = request.anchors.certificate(wrapping: x) {
                result.append(anchor)
            }
        }
        return result
    }

    private static func internalError(_ text: String) -> ChainVerificationError {
        ChainVerificationError(code: X509_V_ERR_UNSPECIFIED, depth: 0, text: text, certificate: nil)
    }

    /// The errors that mean OpenSSL found no issuer for some certificate: the chain does not reach an anchor.
    static let missingIssuerErrors: Set<Int32> = [
        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
        X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
        X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_CERT_UNTRUSTED,
    ]

    static let revocationUnknownErrors: Set<Int32> = [
        X509_V_ERR_UNABLE_TO_GET_CRL, X509_V_ERR_CRL_SIGNATURE_FAILURE, X509_V_ERR_CRL_NOT_YET_VALID,
        X509_V_ERR_CRL_HAS_EXPIRED, X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE, X509_V_ERR_KEYUSAGE_NO_CRL_SIGN,
        X509_V_ERR_UNHANDLED_CRITICAL_CRL_EXTENSION, X509_V_ERR_DIFFERENT_CRL_SCOPE, X509_V_ERR_CRL_PATH_VALIDATION_ERROR,
        X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER,
    ]
}

// MARK: OpenSSL's errors as the engine's reasons

extension ChainVerificationError {
    /// True when this error only says that no issuer was found: the chain does not reach an anchor.
    var isMissingIssuer: Bool { ChainVerifier.missingIssuerErrors.contains(code) }

    /// True when this is the host-name or IP-address check failing.
    var isNameMismatch: Bool { code == X509_V_ERR_HOSTNAME_MISMATCH || code == X509_V_ERR_IP_ADDRESS_MISMATCH }

    /// The engine's reason for this error, with OpenSSL's code and text as evidence. The one place
    /// where `X509_V_ERR_*` numbers become reason codes.
    func reason(at time: Date, purpose: TrustPolicy.Purpose) -> Reason {
        var evidence = Evidence()
        evidence.openSSLError = Evidence.OpenSSLError(code: Int(code), text: text, depth: depth, subject: certificate?.subject)
        let subject = certificate.map { " (\($0.subject))" } ?? ""
        let at = "certificate at depth \(depth)\(subject)"
        let (reasonCode, message): (Reason.Code, String) = switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            (.expired, "the \(at) expired\(certificate.map { " on \(Timestamp.iso8601($0.notAfter))" } ?? "")")
        case X509_V_ERR_CERT_NOT_YET_VALID:
            (.notYetValid, "the \(at) is not valid\(certificate.map { " until \(Timestamp.iso8601($0.notBefore))" } ?? "")")
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
            (.selfSigned, "the leaf\(subject) is self-signed and not a trust anchor")
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
            (.untrustedRoot, "the chain ends at a self-signed root that is not a trust anchor\(subject)")
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            (.unknownIssuer, "no path to a trust anchor: the issuer of the \(at) is neither served nor trusted (missing intermediate, or an unknown CA)")
        case X509_V_ERR_CERT_UNTRUSTED:
            (.unknownIssuer, "the chain does not end at a trust anchor")
        case X509_V_ERR_INVALID_CA:
            (.invalidCA, "the \(at) is used as a CA but is not one")
        case X509_V_ERR_PATH_LENGTH_EXCEEDED:
            (.pathLengthExceeded, "the path is longer than the pathLenConstraint of the \(at) allows")
        case X509_V_ERR_INVALID_PURPOSE:
            (.wrongPurpose, "the \(at) is not valid for TLS \(purpose == .serverAuthentication ? "server" : "client") authentication")
        case X509_V_ERR_CERT_SIGNATURE_FAILURE:
            (.badSignature, "the signature of the \(at) does not verify")
        case X509_V_ERR_CERT_CHAIN_TOO_LONG:
            (.tooLong, "the path is longer than the maximum depth")
        case X509_V_ERR_CERT_REVOKED:
            (.revoked, "the \(at) is revoked by a supplied CRL")
        case let other where ChainVerifier.revocationUnknownErrors.contains(other):
            (.revocationUnknown, "the revocation status of the \(at) is unknown: \(text)")
        case X509_V_ERR_PERMITTED_VIOLATION, X509_V_ERR_EXCLUDED_VIOLATION:
            (.nameConstraints, "a name of the \(at) violates its issuer's name constraints")
        default:
            (.invalid, "the \(at) failed verification: \(text) (OpenSSL error \(code))")
        }
        return Reason(reasonCode, message, evidence: evidence)
    }
}

/// Follows issuer links by signature from a leaf through a pool of certificates, without trust
/// anchors or validity checks: the certificates that really certify the leaf.
///
/// An issuer must be allowed to issue: a CA by basicConstraints (and keyUsage, when present), under
/// no more CAs than its pathLenConstraint allows. Otherwise an ordinary leaf anyone can buy from a
/// pinned CA could sign a certificate for any host and match the CA's pin (the basicConstraints attack).
enum SignatureChain {
    static func path(from leaf: Certificate, through pool: [Certificate], maximumDepth: Int) -> [Certificate] {
        var path = [leaf]
        var current = leaf
        // At most `maximumDepth` intermediates between leaf and top, self-issued ones not counted
        // (`current` becomes an intermediate once an issuer is added above it).
        while ChainDepth.counted(path.dropFirst()) <= maximumDepth, !current.handle.isSelfSigned {
            let issuer = pool.first { candidate in
                !path.contains(candidate)
                    && mayIssue(candidate, below: path)
                    && X509_check_issued(candidate.handle.ref, current.handle.ref) == X509_V_OK
                    && X509_get0_pubkey(candidate.handle.ref).map { X509_verify(current.handle.ref, $0) == 1 } == true
            }
            guard let issuer else { break }
            path.append(issuer)
            current = issuer
        }
        OpenSSLErrorStack.clear()
        return path
    }

    /// A CA (`X509_check_ca` 1: basicConstraints CA:TRUE, and keyCertSign when keyUsage is present)
    /// with no more intermediates between it and the leaf than its pathLenConstraint allows.
    private static func mayIssue(_ candidate: Certificate, below path: [Certificate]) -> Bool {
        guard X509_check_ca(candidate.handle.ref) == 1 else { return false }
        let pathLength = X509_get_pathlen(candidate.handle.ref)
        return pathLength < 0 || path.count - 1 <= pathLength
    }
}

/// How long a path is, as `maximumChainDepth` counts (RFC 5280's path length).
enum ChainDepth {
    /// How many of these intermediates count: those that are not self-issued.
    static func counted(_ intermediates: some Sequence<Certificate>) -> Int {
        intermediates.count { !$0.handle.isSelfIssued }
    }
}

/// Every path from a leaf to one of the anchors through a pool of certificates, by issuer name
/// and key identifiers (`X509_check_issued`), without verifying anything: candidates for
/// `X509_verify_cert` when the path OpenSSL chose first fails, since OpenSSL does not backtrack
/// on every error (a constrained, expired or weakly signed intermediate with a good alternative).
///
/// Bounded (at most `limit` paths and a fixed number of steps) so a crafted pool of
/// cross-certificates cannot make the search explode.
enum PathCandidates {
    static func enumerate(leaf: Certificate, pool: [Certificate], anchors: [Certificate], maximumDepth: Int, limit: Int = 16) -> [[Certificate]] {
        defer { OpenSSLErrorStack.clear() }
        var everyone: [Certificate] = []
        for certificate in anchors + pool where !everyone.contains(certificate) { everyone.append(certificate) }
        var results: [[Certificate]] = []
        var budget = 2_000
        func extend(_ path: [Certificate]) {
            guard results.count < limit, budget > 0, let current = path.last else { return }
            budget -= 1
            if anchors.contains(current) {
                results.append(path)
                return
            }
            // `current` becomes an intermediate once an issuer is added above it.
            guard ChainDepth.counted(path.dropFirst()) <= maximumDepth else { return }
            for candidate in everyone where !path.contains(candidate)
                && X509_check_issued(candidate.handle.ref, current.handle.ref) == X509_V_OK {
                extend(path + [candidate])
            }
        }
        extend([leaf])
        return results
    }
}

/// The name check alone (`X509_check_host` / `X509_check_ip_asc`), with the same flags as the
/// chain verifier: for modes where the chain is deliberately not validated but the name still is.
enum HostCheck {
    static func matches(_ certificate: Certificate, _ peer: PeerName) -> Bool {
        defer { OpenSSLErrorStack.clear() }
        switch peer {
        case .dns(let name):
            let flags = UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS)
            return X509_check_host(certificate.handle.ref, name, name.utf8.count, flags, nil) == 1
        case .ipAddress(let address):
            return X509_check_ip_asc(certificate.handle.ref, address, 0) == 1
        }
    }
}
