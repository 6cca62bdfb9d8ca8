import FoundationEssentials
internal import PincheckOpenSSL

/// What one CRL distribution point said about one certificate of the verified path.
public struct RevocationStatus: Sendable, Hashable, CustomStringConvertible {
    /// The answer, by name.
    public enum Outcome: String, Sendable, Hashable {
        /// A fresh CRL that covers the certificate, signed by its issuer, does not list it.
        case good
        /// Such a CRL lists it.
        case revoked
        /// No CRL covers the certificate: it names no distribution point, or the CRL there is a
        /// shard for other certificates, or another CA's list. Never read as "not revoked".
        case notCovered = "not-covered"
        /// The CRL could not be fetched or relied on.
        case unavailable
        /// The CRL is past its nextUpdate.
        case stale
    }

    /// The certificate's position in the verified path (0 = leaf) and its subject.
    public let depth: Int
    public let subject: String
    /// The distribution point; nil when the certificate names none.
    public let url: String?
    public let outcome: Outcome
    /// Why, in words.
    public let detail: String
    /// The CRL's dates, when one was read.
    public let thisUpdate: Date?
    public let nextUpdate: Date?
    /// For a revoked certificate: when, and the CRLReason code if the entry has one.
    public let revokedAt: Date?
    public let revokedReason: Int?

    public var description: String {
        "\(outcome.rawValue): \(url ?? "no distribution point") for depth \(depth) (\(subject)): \(detail)"
    }
}

/// The CRLs fetched for an evaluation, by distribution point URL.
package struct FetchedRevocationLists: Sendable {
    /// What one URL gave.
    package enum Result: Sendable {
        case list(CertificateRevocationList)
        /// The fetch failed; a copy past its nextUpdate is kept for the evidence, if there was one.
        case failed(String, stale: CertificateRevocationList?)
    }

    package var byURL: [String: Result]

    package init(byURL: [String: Result] = [:]) { self.byURL = byURL }

    /// The lists, for the verdict cache's key and validity window.
    var lists: [CertificateRevocationList] {
        byURL.keys.sorted().compactMap { if case .list(let list) = byURL[$0] { list } else { nil } }
    }
}

/// The CRLs at the distribution points of the path's certificates (RFC 5280 §6.3.3): each must be
/// signed by the certificate's issuer on the verified path, cover the certificate (its
/// issuingDistributionPoint names one of the certificate's distribution points and allows its
/// kind), and be fresh at the verification time. A listed certificate is always refused; any
/// other answer but *good* is a warning or a failure, as the policy says.
struct DistributionPointCheck {
    let settings: DistributionPointCRLs
    let maximumAge: TimeInterval
    /// Nil: this road fetched nothing.
    let fetched: FetchedRevocationLists?

    /// The certificates whose distribution points are consulted on `path`: the leaf, or every one
    /// below the top (an anchor, whose revocation no CRL of this path can state).
    static func certificates(on path: [Certificate], scope: ValidationPolicy.RevocationScope) -> [Certificate] {
        let below = Array(path.dropLast())
        switch scope {
        case .leaf: return Array(below.prefix(1))
        case .wholeChain: return below
        }
    }

    /// The fetches `path` needs: each distribution point of each certificate consulted, with the
    /// verification its CRL must pass (against that certificate and its issuer on `path`, at
    /// `time`) before the fetcher keeps it.
    func requests(on path: [Certificate], at time: Date) -> [RevocationListFetcher.Request] {
        var requests: [RevocationListFetcher.Request] = []
        for (depth, certificate) in Self.certificates(on: path, scope: settings.scope).enumerated() {
            let issuer = path[depth + 1]
            let urls = certificate.handle.crlDistributionPointURLs
            let issuerKey = SHA256Digest(hashing: issuer.handle.spkiDER)
            for url in urls {
                requests.append(
                    RevocationListFetcher.Request(url: url, issuer: issuerKey) { [self] list in
                        let status = judge(certificate, against: list, from: url, distributionPoints: urls, issuer: issuer, time: time) {
                            url, outcome, detail, _, _, _ in
                            RevocationStatus(
                                depth: depth, subject: "", url: url, outcome: outcome, detail: detail, thisUpdate: nil, nextUpdate: nil,
                                revokedAt: nil, revokedReason: nil)
                        }
                        return status.outcome == .good || status.outcome == .revoked ? nil : status.detail
                    })
            }
        }
        return requests
    }

    func check(path: [Certificate], time: Date, into failures: inout [Reason], warnings: inout [Reason], statuses: inout [RevocationStatus]) {
        for (depth, certificate) in Self.certificates(on: path, scope: settings.scope).enumerated() {
            let issuer = path[depth + 1]
            let ignored = certificate.handle.ignoredDistributionPointURLs
            if ignored > 0 {
                let read = certificate.handle.crlDistributionPointURLs.count
                warnings.append(
                    Reason(
                        .crlPointsIgnored,
                        "the certificate at depth \(depth) (\(certificate.subject)) names \(read + ignored) http CRL distribution points; the first \(read) were consulted and \(ignored) ignored",
                        requirement: .revocation))
            }
            let found = judge(certificate, depth: depth, issuer: issuer, time: time)
            statuses += found
            if let revoked = found.first(where: { $0.outcome == .revoked }) {
                var evidence = Evidence()
                evidence.revocationList = RevocationListEvidence(
                    url: revoked.url ?? "", thisUpdate: revoked.thisUpdate, nextUpdate: revoked.nextUpdate,
                    revocationDate: revoked.revokedAt, reasonCode: revoked.revokedReason)
                failures.append(
                    Reason(
                        .revoked,
                        "the certificate at depth \(depth) (\(certificate.subject)) is revoked by the CRL at \(revoked.url ?? "?"): \(revoked.detail)",
                        evidence: evidence, requirement: .revocation))
                continue
            }
            guard !found.contains(where: { $0.outcome == .good }) else { continue }
            for status in found {
                let code: Reason.Code =
                    switch status.outcome {
                    case .stale: .crlStale
                    case .notCovered: .crlNotCovered
                    default: .crlUnavailable
                    }
                var evidence = Evidence()
                if let url = status.url {
                    evidence.revocationList = RevocationListEvidence(
                        url: url, thisUpdate: status.thisUpdate, nextUpdate: status.nextUpdate,
                        revocationDate: nil, reasonCode: nil)
                }
                let consequence = settings.failure == .hard ? "" : " (soft failure: accepted without a revocation status)"
                let reason = Reason(
                    code,
                    "no revocation status for the certificate at depth \(depth) (\(certificate.subject)) from \(status.url ?? "its CRL distribution points"): \(status.detail)\(consequence)",
                    evidence: evidence, requirement: .revocation)
                if settings.failure == .hard { failures.append(reason) } else { warnings.append(reason) }
            }
        }
    }

    /// One status per distribution point of `certificate`.
    private func judge(_ certificate: Certificate, depth: Int, issuer: Certificate, time: Date) -> [RevocationStatus] {
        func status(
            _ url: String?, _ outcome: RevocationStatus.Outcome, _ detail: String, _ list: CertificateRevocationList? = nil,
            revokedAt: Date? = nil, reason: Int? = nil
        ) -> RevocationStatus {
            RevocationStatus(
                depth: depth, subject: certificate.subject, url: url, outcome: outcome, detail: detail,
                thisUpdate: list.map { Date(timeIntervalSince1970: TimeInterval($0.handle.lastUpdateSeconds)) },
                nextUpdate: list.flatMap { $0.handle.nextUpdateSeconds }.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                revokedAt: revokedAt, revokedReason: reason)
        }
        let urls = certificate.handle.crlDistributionPointURLs
        guard !urls.isEmpty else {
            return [status(nil, .notCovered, "the certificate names no http CRL distribution point", nil)]
        }
        guard let fetched else {
            return urls.map { status($0, .unavailable, "not fetched: only the asynchronous evaluations fetch CRLs", nil) }
        }
        return urls.map { url in
            switch fetched.byURL[url] {
            case nil:
                return status(url, .unavailable, "not fetched", nil)
            case .failed(let why, let stale?):
                return status(url, .stale, "the copy at hand is past its nextUpdate and a fresh one could not be fetched: \(why)", stale)
            case .failed(let why, nil):
                return status(url, .unavailable, why, nil)
            case .list(let list):
                return judge(certificate, against: list, from: url, distributionPoints: urls, issuer: issuer, time: time) {
                    url, outcome, detail, list, at, reason in
                    status(url, outcome, detail, list, revokedAt: at, reason: reason)
                }
            }
        }
    }

    private func judge(
        _ certificate: Certificate, against list: CertificateRevocationList, from url: String, distributionPoints: [String],
        issuer: Certificate, time: Date,
        status: (String?, RevocationStatus.Outcome, String, CertificateRevocationList?, Date?, Int?) -> RevocationStatus
    ) -> RevocationStatus {
        let crl = list.handle
        guard crl.isIssued(byNameOf: issuer.handle) else {
            return status(url, .notCovered, "the CRL is issued by another CA, not by \(issuer.subject)", list, nil, nil)
        }
        guard crl.signatureVerifies(withKeyOf: issuer.handle) else {
            return status(url, .unavailable, "the CRL's signature does not verify with the key of its issuer on the verified path", list, nil, nil)
        }
        let critical = crl.unhandledCriticalExtensions
        guard critical.isEmpty else {
            return status(
                url, .unavailable, "the CRL has critical extensions Pincheck does not process (\(critical.joined(separator: ", ")))", list, nil, nil)
        }
        guard !crl.isDelta else { return status(url, .notCovered, "the CRL is a delta CRL, not a complete list", list, nil, nil) }
        guard crl.hasNumber else {
            return status(
                url, .unavailable, "the CRL has no cRLNumber extension (RFC 5280 §5.2.3), so it cannot be ordered against a newer one", list, nil, nil
            )
        }
        if let (outcome, why) = Self.scopeProblem(crl.scope, of: certificate, distributionPoints: distributionPoints) {
            return status(url, outcome, why, list, nil, nil)
        }
        let skew: TimeInterval = 300
        let thisUpdate = Date(timeIntervalSince1970: TimeInterval(crl.lastUpdateSeconds))
        guard crl.lastUpdateSeconds != .min, thisUpdate <= time.addingTimeInterval(skew) else {
            return status(url, .unavailable, "the CRL's thisUpdate is unreadable or in the future", list, nil, nil)
        }
        if let next = crl.nextUpdateSeconds {
            if Date(timeIntervalSince1970: TimeInterval(next)) < time.addingTimeInterval(-skew) {
                return status(
                    url, .stale, "the CRL's nextUpdate was \(Timestamp.iso8601(Date(timeIntervalSince1970: TimeInterval(next))))", list, nil, nil)
            }
        } else if time.timeIntervalSince(thisUpdate) > maximumAge {
            return status(url, .stale, "the CRL has no nextUpdate and was issued \(Timestamp.iso8601(thisUpdate))", list, nil, nil)
        }
        if let entry = crl.entry(for: certificate.handle) {
            let when = entry.revocationDate.map { " on \(Timestamp.iso8601($0))" } ?? ""
            let reason = entry.reason.map { " (reason code \($0))" } ?? ""
            return status(url, .revoked, "listed as revoked\(when)\(reason)", list, entry.revocationDate, entry.reason)
        }
        return status(url, .good, "not listed in a CRL of \(crl.entryCount) entries", list, nil, nil)
    }

    /// Why a partitioned CRL does not answer for `certificate`; nil when its scope covers it.
    private static func scopeProblem(
        _ scope: CRLScope, of certificate: Certificate, distributionPoints: [String]
    ) -> (RevocationStatus.Outcome, String)? {
        guard scope.partitioned else { return nil }
        if scope.indirect { return (.notCovered, "the CRL is an indirect CRL, which Pincheck does not use") }
        if scope.onlySomeReasons { return (.notCovered, "the CRL lists only some revocation reasons") }
        if scope.onlyAttributeCertificates { return (.notCovered, "the CRL covers attribute certificates only") }
        let isCA = certificate.handle.isCertificateAuthority
        if scope.onlyEndEntityCertificates && isCA { return (.notCovered, "the CRL covers end-entity certificates only") }
        if scope.onlyCACertificates && !isCA { return (.notCovered, "the CRL covers CA certificates only") }
        if scope.namesOtherDistributionPoint
            || (!scope.distributionPointURIs.isEmpty && !scope.distributionPointURIs.contains(where: distributionPoints.contains))
        {
            let names =
                scope.distributionPointURIs.isEmpty ? "a distribution point by another name" : scope.distributionPointURIs.joined(separator: ", ")
            return (.notCovered, "the CRL is a shard for \(names), not for this certificate's distribution points")
        }
        return nil
    }
}
