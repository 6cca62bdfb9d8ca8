import Synchronization
internal import PincheckOpenSSL
import FoundationEssentials

/// One error OpenSSL's verifier reported, with where in the chain it happened.
struct ChainVerificationError: Sendable, Hashable {
    /// What the error means.
    let kind: X509VerificationErrorKind
    /// OpenSSL's `X509_V_ERR_*` number, as evidence.
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
    var purpose: ValidationPolicy.Purpose = .serverAuthentication
    /// Supplied CRLs; when non-empty the leaf's (or the whole path's) revocation status is checked against them.
    var revocationLists: [CertificateRevocationList] = []
    var revocationScope: ValidationPolicy.RevocationScope = .leaf
    var strictRules: StrictRules = .webPKI
}

/// Runs the OpenSSL module's verifier for the engine: certificates in, certificates out.
enum ChainVerifier {
    /// Counts the verifications of the task that sets it (a test's: how many times an evaluation
    /// verifies a path); nil, the default, counts nothing.
    @TaskLocal static var counter: VerificationCounter?

    static func verify(_ request: ChainVerificationRequest) -> ChainVerification {
        counter?.count.add(1, ordering: .relaxed)
        let result = X509Verification.verify(
            X509VerificationRequest(
                leaf: request.leaf.handle, untrusted: request.untrusted.map(\.handle), store: request.anchors.store,
                anchors: request.anchors.certificates.map(\.handle), peer: request.peer.map(\.x509),
                time: Timestamp.seconds(request.time), allowPartialChain: request.allowPartialChain,
                maximumDepth: request.maximumDepth, purpose: request.purpose.x509,
                revocationLists: request.revocationLists.map(\.handle), revocationOfWholeChain: request.revocationScope == .wholeChain,
                strictRules: request.strictRules))
        // The request's own certificates where the chain uses them, so identities carry through.
        let known = [request.leaf] + request.untrusted + request.anchors.certificates
        func certificate(_ handle: X509Handle) -> Certificate {
            known.first { $0.handle === handle } ?? request.anchors.certificate(wrapping: handle)
        }
        return ChainVerification(
            builtChain: result.builtChain.map(certificate),
            errors: result.errors.map { error in
                ChainVerificationError(
                    kind: error.kind, code: error.code, depth: error.depth, text: error.text,
                    certificate: error.certificate.map { Certificate(handle: $0) })
            },
            succeeded: result.succeeded, tolerated: result.tolerated.map(ChainReasons.sentence(for:)))
    }
}

extension PeerName {
    var x509: X509PeerName {
        switch self {
        case .dns(let name): .dns(name)
        case .ipAddress(let address): .ipAddress(address)
        }
    }
}

extension ValidationPolicy.Purpose {
    var x509: X509Purpose {
        switch self {
        case .serverAuthentication: .serverAuthentication
        case .clientAuthentication: .clientAuthentication
        }
    }
}

// MARK: OpenSSL's errors as the engine's reasons

extension ChainVerificationError {
    /// True when this error only says that no issuer was found: the chain does not reach an anchor.
    var isMissingIssuer: Bool { kind.isMissingIssuer }

    /// True when this is the host-name or IP-address check failing.
    var isNameMismatch: Bool { kind == .hostMismatch || kind == .ipAddressMismatch }

    /// For a client certificate refused for its purpose, the plain cause when there is one: an
    /// extendedKeyUsage without clientAuth (what public CAs issue since 2026).
    static func missingClientAuthentication(_ certificate: Certificate?, purpose: ValidationPolicy.Purpose) -> String {
        guard purpose == .clientAuthentication, let purposes = certificate?.facts.extendedKeyUsage,
            !purposes.contains(CertificateFacts.clientAuthOID), !purposes.contains(CertificateFacts.anyExtendedKeyUsageOID)
        else { return "" }
        let serverOnly = purposes == [CertificateFacts.serverAuthOID]
        return ": its extendedKeyUsage has no clientAuth\(serverOnly ? " (serverAuth only)" : "")"
            + (serverOnly ? "; \(TrustAnchors.publicClientCertificatesEnded)" : "")
    }

    /// The engine's reason for this error, with OpenSSL's code and text as evidence. The one place
    /// where the verifier's error kinds become reason codes.
    func reason(at time: Date, purpose: ValidationPolicy.Purpose) -> Reason {
        var evidence = Evidence()
        evidence.openSSLError = Evidence.OpenSSLError(code: Int(code), text: text, depth: depth, subject: certificate?.subject)
        let subject = certificate.map { " (\($0.subject))" } ?? ""
        let at = "certificate at depth \(depth)\(subject)"
        let (reasonCode, message): (Reason.Code, String) =
            switch kind {
            case .expired:
                (.expired, "the \(at) expired\(certificate.map { " on \(Timestamp.iso8601($0.notAfter))" } ?? "")")
            case .notYetValid:
                (.notYetValid, "the \(at) is not valid\(certificate.map { " until \(Timestamp.iso8601($0.notBefore))" } ?? "")")
            case .selfSignedLeaf:
                (.selfSigned, "the leaf\(subject) is self-signed and not a trust anchor")
            case .untrustedRoot:
                (.untrustedRoot, "the chain ends at a self-signed root that is not a trust anchor\(subject)")
            case .unknownIssuer:
                (
                    .unknownIssuer,
                    "no path to a trust anchor: the issuer of the \(at) is neither served nor trusted (missing intermediate, or an unknown CA)"
                )
            case .untrusted:
                (.unknownIssuer, "the chain does not end at a trust anchor")
            case .invalidCA:
                (.invalidCA, "the \(at) is used as a CA but is not one")
            case .pathLengthExceeded:
                (.pathLengthExceeded, "the path is longer than the pathLenConstraint of the \(at) allows")
            case .wrongPurpose:
                (
                    .wrongPurpose,
                    "the \(at) is not valid for TLS \(purpose == .serverAuthentication ? "server" : "client") authentication"
                        + Self.missingClientAuthentication(certificate, purpose: purpose)
                )
            case .badSignature:
                (.badSignature, "the signature of the \(at) does not verify")
            case .tooLong:
                (.tooLong, "the path is longer than the maximum depth")
            case .revoked:
                (.revoked, "the \(at) is revoked by a supplied CRL")
            case .revocationUnknown:
                (.revocationUnknown, "the revocation status of the \(at) is unknown: \(text)")
            case .nameConstraints:
                (.nameConstraints, "a name of the \(at) violates its issuer's name constraints")
            case .unsupportedAlgorithm(let name):
                (.unsupportedAlgorithm, "the \(at) uses \(name), which the linked \(OpenSSLLibrary.version) cannot verify")
            case .hostMismatch, .ipAddressMismatch, .other:
                (.invalid, "the \(at) failed verification: \(text) (OpenSSL error \(code))")
            }
        // A CRL's answer is revocation's; everything else the verifier says is about the chain.
        let requirement: Reason.Requirement =
            switch kind {
            case .revoked, .revocationUnknown: .revocation
            default: .chain
            }
        return Reason(reasonCode, message, evidence: evidence, requirement: requirement)
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
                    && candidate.handle.mayHaveIssued(current.handle)
                    && candidate.handle.signatureVerifies(on: current.handle)
            }
            guard let issuer else { break }
            path.append(issuer)
            current = issuer
        }
        return path
    }

    /// A CA (`X509_check_ca` 1: basicConstraints CA:TRUE, and keyCertSign when keyUsage is present)
    /// with no more intermediates between it and the leaf than its pathLenConstraint allows.
    private static func mayIssue(_ candidate: Certificate, below path: [Certificate]) -> Bool {
        guard candidate.handle.isIssuingCA else { return false }
        guard let pathLength = candidate.handle.pathLengthConstraint else { return true }
        return path.count - 1 <= pathLength
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
            for candidate in everyone
            where !path.contains(candidate)
                && candidate.handle.mayHaveIssued(current.handle)
            {
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
        switch peer {
        case .dns(let name): certificate.handle.matches(host: name)
        case .ipAddress(let address): certificate.handle.matches(ipAddress: address)
        }
    }
}

/// How many paths ``ChainVerifier`` verified while it was ``ChainVerifier/counter``.
final class VerificationCounter: Sendable {
    let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
}
