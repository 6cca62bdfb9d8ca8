import FoundationEssentials
import TrustEvaluator
import PincheckTLS
import ServerTrust

/// The `--json` shape of one evaluation, documented in docs/command.md. Field names are a stable contract.
struct VerdictJSON: Encodable {
    let trusted: Bool
    let disposition: String
    /// Which rule applied (`hostPolicy`, `everyHost`, `unlistedDefaultValidation`, …).
    let coverage: String
    let host: String?
    let hostChecked: Bool
    let evaluatedAt: String
    let reasons: [ReasonJSON]
    /// Pin mismatches of report-only pin sets: recorded and reported, not counted.
    let reportOnly: [ReasonJSON]
    var warnings: [ReasonJSON]
    let anchoring: String?
    let chain: [CertificateJSON]
    let served: [CertificateJSON]
    let matchedPins: [PinMatchJSON]
    /// What each CRL distribution point said (empty when none was consulted).
    let revocation: [RevocationStatusJSON]
    /// The CT policy's answer and every SCT (absent when no CT policy was asked for, or it was not reached).
    let certificateTransparency: TransparencyJSON?
    /// The anchor's root programs and the data they came from (absent when the chain was refused before).
    let rootPrograms: RootProgramsJSON?

    init(_ verdict: Verdict, requestedHost: String?) {
        let answer = Disposition(serverTrust: verdict)
        trusted = answer.allowsConnection
        disposition = answer.name
        coverage = verdict.coverage.rawValue
        reportOnly = verdict.reportOnlyFailures.map(ReasonJSON.init)
        host = verdict.checkedHost ?? requestedHost
        hostChecked = verdict.checkedHost != nil
        evaluatedAt = Format.timestamp(verdict.evaluationTime)
        reasons = verdict.failures.map(ReasonJSON.init)
        warnings = verdict.warnings.map(ReasonJSON.init)
        anchoring = verdict.verifiedPath?.anchoring.rawValue
        chain = verdict.verifiedPath.map { $0.certificates.map { CertificateJSON($0, at: verdict.evaluationTime) } } ?? []
        served = verdict.servedChain.map { CertificateJSON($0, at: verdict.evaluationTime) }
        matchedPins = verdict.matchedPins.map { PinMatchJSON(pin: $0.pin.description, depth: $0.depth) }
        revocation = verdict.revocationStatuses.map(RevocationStatusJSON.init)
        certificateTransparency = verdict.certificateTransparency.map(TransparencyJSON.init)
        rootPrograms = verdict.rootPrograms.map(RootProgramsJSON.init)
    }
}

/// `rootPrograms`: whether the anchor counted as public, what each program says of it, and the data's sources.
struct RootProgramsJSON: Encodable {
    struct Membership: Encodable {
        let program: String
        let status: String
        let distrustAfter: String?
    }

    struct Source: Encodable {
        let kind: String
        let revision: String
        let asOf: String
        let date: String
    }

    let anchorIsPublic: Bool
    let anchor: String?
    let programs: [Membership]
    let data: [Source]

    init(_ answer: Verdict.RootProgramAnswer) {
        anchorIsPublic = answer.anchorIsPublic
        anchor = answer.anchor?.name
        programs =
            answer.anchor?.memberships.map {
                Membership(program: $0.program.rawValue, status: $0.status.rawValue, distrustAfter: $0.distrustAfter.map(Format.timestamp))
            } ?? []
        data = answer.sources.map { Source(kind: $0.kind.rawValue, revision: $0.revision, asOf: Format.day($0.asOf), date: Format.day($0.date)) }
    }
}

/// A CT policy's answer: `compliant`, `not-compliant`, `not-applicable` or `unenforceable`, and each SCT.
struct TransparencyJSON: Encodable {
    struct SCT: Encodable {
        let source: String
        let logID: String
        let log: String?
        let logOperator: String?
        let timestamp: String
        let status: String
        let counted: Bool
        let note: String
    }
    let policy: String
    let compliance: String
    let detail: String?
    let scts: [SCT]

    init(_ assessment: CertificateTransparency.Assessment) {
        policy = assessment.policy.rawValue
        (compliance, detail) = Format.compliance(assessment.compliance)
        scts = assessment.timestamps.map {
            SCT(
                source: $0.sct.source.rawValue, logID: $0.sct.logIDBase64, log: $0.log?.description, logOperator: $0.log?.operatorName,
                timestamp: Format.timestamp($0.sct.timestamp), status: $0.status.rawValue, counted: $0.counted, note: $0.note)
        }
    }
}

/// One distribution point's answer: `good`, `revoked`, `not-covered`, `unavailable` or `stale`.
struct RevocationStatusJSON: Encodable {
    let source: String
    let url: String?
    let depth: Int
    let subject: String
    let outcome: String
    let detail: String
    let thisUpdate: String?
    let nextUpdate: String?

    init(_ status: RevocationStatus) {
        source = "crl"
        url = status.url
        depth = status.depth
        subject = status.subject
        outcome = status.outcome.rawValue
        detail = status.detail
        thisUpdate = status.thisUpdate.map(Format.timestamp)
        nextUpdate = status.nextUpdate.map(Format.timestamp)
    }
}

struct ReasonJSON: Encodable {
    let code: String
    let message: String
    /// The requirement of the policy that produced the reason (none for the command's own notes).
    let requirement: String?
    let evidence: EvidenceJSON?

    init(code: String, message: String, evidence: EvidenceJSON?) {
        self.code = code
        self.message = message
        self.requirement = nil
        self.evidence = evidence
    }

    init(_ reason: Reason) {
        code = reason.code.description
        message = reason.message
        requirement = reason.requirement.rawValue
        let evidence = EvidenceJSON(reason.evidence)
        self.evidence = evidence.isEmpty ? nil : evidence
    }
}

struct EvidenceJSON: Encodable {
    let openSSLError: Int?
    let openSSLText: String?
    let depth: Int?
    let hostRequested: String?
    let namesPresented: [String]?
    let pinsConfigured: [String]?
    let pinsOfPath: [String]?
    let crlURL: String?
    let rootProgram: RootProgramEvidenceJSON?

    init(_ evidence: Evidence) {
        openSSLError = evidence.openSSLError?.code
        openSSLText = evidence.openSSLError?.text
        depth = evidence.openSSLError?.depth
        hostRequested = evidence.hostRequested
        namesPresented = evidence.namesPresented
        pinsConfigured = evidence.pinsConfigured?.map(\.description)
        pinsOfPath = evidence.pinsOfPath?.map(\.description)
        crlURL = evidence.revocationList?.url
        rootProgram = evidence.rootProgram.map(RootProgramEvidenceJSON.init)
    }

    var isEmpty: Bool {
        openSSLError == nil && hostRequested == nil && namesPresented == nil && pinsConfigured == nil && pinsOfPath == nil && crlURL == nil
            && rootProgram == nil
    }
}

struct CertificateJSON: Encodable {
    let subject: String
    let issuer: String
    let serialNumber: String
    let notBefore: String
    let notAfter: String
    let daysLeft: Int
    let spkiSHA256: String
    let sha256: String
    let publicKey: String
    let dnsNames: [String]
    let ipAddresses: [String]

    init(_ certificate: Certificate, at time: Date) {
        subject = certificate.subject
        issuer = certificate.issuer
        serialNumber = certificate.serialNumber
        notBefore = Format.timestamp(certificate.notBefore)
        notAfter = Format.timestamp(certificate.notAfter)
        daysLeft = Format.daysLeft(certificate, at: time)
        spkiSHA256 = certificate.publicKeyPin.description
        sha256 = Format.hex(certificate.sha256Fingerprint)
        publicKey = certificate.publicKey.description
        dnsNames = certificate.dnsNames
        ipAddresses = certificate.ipAddresses
    }
}

struct PinMatchJSON: Encodable {
    let pin: String
    let depth: Int
}

/// One Signed Certificate Timestamp in `check`'s JSON (`scts`). Captured, not verified: nothing
/// here says whether the SCT is valid or whether the host meets a CT policy.
struct SignedCertificateTimestampJSON: Encodable {
    /// `tls-extension`, `certificate` or `ocsp-response`.
    let source: String
    /// `v1`, or `unknown-N` for a wire version N other than 0 (whose other fields are absent).
    let version: String
    /// The log ID in base64, as CT log lists write it.
    let logID: String?
    /// ISO 8601 with milliseconds.
    let timestamp: String?
    let timestampMilliseconds: UInt64?
    /// OpenSSL's long name, absent when OpenSSL does not know the pair.
    let signatureAlgorithm: String?

    init(_ sct: SignedCertificateTimestamp) {
        source = sct.source.rawValue
        version = Format.sctVersion(sct)
        logID = sct.isVersion1 ? sct.logIDBase64 : nil
        timestamp = sct.isVersion1 ? Format.timestamp(milliseconds: sct.timestampMilliseconds) : nil
        timestampMilliseconds = sct.isVersion1 ? sct.timestampMilliseconds : nil
        signatureAlgorithm = sct.signatureAlgorithm
    }
}

package enum Format {
    /// A CT policy's answer as a word, and the reason when it has one.
    static func compliance(_ compliance: CertificateTransparency.Compliance) -> (answer: String, detail: String?) {
        switch compliance {
        case .compliant: ("compliant", nil)
        case .notCompliant(let why): ("not-compliant", why)
        case .notApplicable(let why): ("not-applicable", why)
        case .unenforceable(let why): ("unenforceable", why)
        }
    }

    package static func timestamp(_ date: Date) -> String {
        Timestamp.iso8601(date)
    }

    /// An SCT's time, `2024-03-01T12:00:00.123Z`: the milliseconds as sent, without a detour
    /// through floating point.
    static func timestamp(milliseconds: UInt64) -> String {
        let seconds = timestamp(Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000)))
        let fraction = String(milliseconds % 1000)
        return seconds.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }

    /// `v1` for the one version RFC 6962 defines.
    static func sctVersion(_ sct: SignedCertificateTimestamp) -> String {
        sct.isVersion1 ? "v1" : "unknown-\(sct.version)"
    }

    static func day(_ date: Date) -> String {
        Timestamp.day(date)
    }

    /// The path a report shows, with its heading and the depths of the pins that matched it: the
    /// verified path, or for a refused chain the path that was built. Nil when none was built.
    static func reportedPath(_ verdict: Verdict) -> (heading: String, path: VerifiedPath, pinnedDepths: Set<Int>)? {
        let verified = verdict.verifiedPath != nil
        guard let path = verdict.verifiedPath ?? verdict.builtPath else { return nil }
        let end = String(path.anchoring.rawValue.map { $0 == "-" ? " " : $0 })
        let heading = verified ? "Verified path (ends at a \(end)):" : "Path built (ends at a \(end)), refused for the reasons above:"
        return (heading, path, Set(verdict.pinsFound.map(\.depth)))
    }

    static func daysLeft(_ certificate: Certificate, at time: Date) -> Int {
        Int((certificate.notAfter.timeIntervalSince(time) / 86_400).rounded(.down))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        Hex.encode(bytes)
    }

}

/// A `chain.root-distrusted` finding's program, date and the leaf's time compared with it.
struct RootProgramEvidenceJSON: Encodable {
    let program: String
    let root: String
    let status: String
    let distrustAfter: String?
    let compared: String?
    let comparedTime: String?

    init(_ evidence: RootProgramEvidence) {
        program = evidence.program.rawValue
        root = evidence.root
        status = evidence.status.rawValue
        distrustAfter = evidence.distrustAfter.map(Format.timestamp)
        compared = evidence.compared?.rawValue
        comparedTime = evidence.comparedTime.map(Format.timestamp)
    }
}
