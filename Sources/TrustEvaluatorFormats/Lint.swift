import FoundationEssentials
import TrustEvaluatorCore

/// One finding of ``Configuration/lint(at:expiringWithinDays:publicRoots:)``.
public struct LintFinding: Sendable, Hashable, CustomStringConvertible {
    public enum Level: String, Sendable, Hashable, Comparable {
        case warning
        case error

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs == .warning && rhs == .error }
    }

    public let level: Level
    /// A stable code, such as `no-backup-pin`.
    public let code: String
    /// Where in the file (`hosts[2]`).
    public let path: String
    public let pattern: String
    public let message: String

    public var description: String { "\(level.rawValue): \(path) (\(pattern)): \(message) [\(code)]" }

    package init(level: Level, code: String, path: String, pattern: String, message: String) {
        self.level = level
        self.code = code
        self.path = path
        self.pattern = pattern
        self.message = message
    }
}

extension Configuration {
    /// Pin health: what will hurt when a server rotates its keys, or is weaker than it looks.
    /// - Parameters:
    ///   - time: "Now", for expiry checks.
    ///   - days: Pinned leaf certificates expiring within this many days are flagged.
    ///   - publicRoots: More roots to count as public besides the root programs' (each host's
    ///     `ValidationPolicy.rootPrograms`); pinning one is over-broad.
    /// - Returns: Findings, errors first. Errors: an enforced pin set without a backup pin, an
    ///   expired pin set, CT log lists too old (or undated) for a policy that then refuses every
    ///   connection. Warnings: everything else, among them a CT requirement whose scope exempts
    ///   every anchor the host has, lists that become too old within `days`, and a pin on a root a
    ///   program has distrusted or scheduled to distrust.
    public func lint(at time: Date, expiringWithinDays days: Int = 30, publicRoots: [Certificate] = []) -> [LintFinding] {
        var findings: [LintFinding] = []
        for entry in hosts {
            let pattern = entry.policy.pattern.description
            func add(_ level: LintFinding.Level, _ code: String, _ message: String) {
                findings.append(LintFinding(level: level, code: code, path: entry.path, pattern: pattern, message: message))
            }
            if let requirement = entry.policy.validationPolicy.certificateTransparency {
                for (level, code, message) in Self.transparencyFindings(
                    requirement, anchors: entry.policy.validationPolicy.anchors,
                    programs: entry.policy.validationPolicy.rootPrograms.data,
                    at: time, expiringWithinDays: days)
                {
                    add(level, code, message)
                }
            }
            let sets = entry.policy.pinSets
            guard let set = sets.first else {
                add(.warning, "no-pins", "no pins: this host gets default validation only")
                continue
            }
            // The engine's rule, on what a set shows without a server (`lint --chain` adds the rest).
            for (index, pinSet) in sets.enumerated() {
                guard let finding = pinSet.backupPinFinding(onChain: nil) else { continue }
                add(
                    .error, "no-backup-pin", finding.message(naming: "the pin set for \(pattern)" + BackupPinFinding.setNumber(index, of: sets.count))
                )
            }
            if let expires = set.expires, expires <= time {
                add(.error, "pin-set-expired", "the pin set expired on \(Timestamp.day(expires)); the host is effectively unpinned")
            }
            let certificates = sets.flatMap(\.pinnedCertificates)
            let pins = sets.flatMap(\.keyPins)
            for pin in pins where pin.algorithm == .sha1 {
                add(.warning, "sha1-pin", "\(pin) is a SHA-1 pin; use sha256/")
            }
            let programs = entry.policy.validationPolicy.rootPrograms.data
            for (code, message) in Self.rootPinFindings(pins, programs: programs, publicRoots: publicRoots) { add(.warning, code, message) }
            for (message, code) in Self.familyFindings(pinned: certificates, pins: pins, programs: programs, at: time) {
                add(.warning, code, message)
            }
            for certificate in certificates where !certificate.isCertificateAuthority {
                let left = Int(certificate.notAfter.timeIntervalSince(time) / 86_400)
                if left <= days {
                    add(
                        .warning, "leaf-pin-expiring",
                        "the pinned leaf \(certificate.subject) expires in \(left) days; pin its issuer or add the next key")
                }
            }
            if entry.policy.pattern.kind == .oneLabel {
                add(
                    .warning, "deeper-subdomains-unpinned",
                    "\(pattern) matches one label only: deeper names such as a.b.\(entry.policy.pattern.base) are not pinned (use **. or includeSubdomains)"
                )
            }
        }
        return findings.sorted { ($0.level, $1.path) > ($1.level, $0.path) }
    }

    /// Pins on public roots (over-broad) and on roots a program distrusts.
    private static func rootPinFindings(_ pins: [PublicKeyPin], programs: RootPrograms, publicRoots: [Certificate]) -> [(String, String)] {
        var findings: [(String, String)] = []
        for pin in pins {
            let programRoots = programs.roots(withKey: pin)
            if let root = programRoots.first {
                findings.append(
                    (
                        "public-root-pin",
                        "\(pin) is the key of a public root (\(root.name), \(root.programSummary)): every certificate that CA issues matches it"
                    ))
            } else if let root = publicRoots.first(where: { $0.publicKeyPin == pin }) {
                findings.append(
                    ("public-root-pin", "\(pin) is the key of a public root (\(root.subject)): every certificate that CA issues matches it"))
            }
            for root in programRoots where root.isDistrustedOrScheduled {
                findings.append(
                    (
                        "distrusted-root-pin",
                        "\(pin) is the key of \(root.name), which a browser's root program distrusts (\(root.programSummary)): certificates issued under it after that are refused; pin the CA the host moves to"
                    ))
            }
        }
        return findings
    }

    /// The backup-pin findings a server's chain shows that the configuration alone does not: the
    /// engine's own warning (``BackupPinFinding/everyPinOnChain`` among them), read from the
    /// verdict of `chain` for `host`, at error level as `lint` reports a missing backup pin.
    /// Findings `lint(at:expiringWithinDays:publicRoots:)` already gives are not repeated.
    package func backupPinFindings(
        servedChain chain: [Certificate], host: String, at time: Date,
        besides known: [LintFinding]
    ) throws(PincheckError) -> [LintFinding] {
        let verdict = try trustManager.evaluate(chain, host: host, at: time, waitingForRevocationListsFrom: nil)
        guard let policy = verdict.hostPolicy else { return [] }
        let pattern = policy.pattern.description
        let path = hosts.first { $0.policy.pattern == policy.pattern }?.path ?? "hosts"
        return verdict.warnings.filter { $0.code == .noBackupPin }.compactMap { warning in
            guard !known.contains(where: { $0.code == "no-backup-pin" && $0.message == warning.message }) else { return nil }
            return LintFinding(level: .error, code: "no-backup-pin", path: path, pattern: pattern, message: warning.message + " (on \(host)'s chain)")
        }
    }

    /// A pinned intermediate that is one of several its CA issues from under the same parent
    /// (``CAFamilies``), when neither the parent's key nor every sibling is pinned.
    private static func familyFindings(
        pinned certificates: [Certificate], pins: [PublicKeyPin], programs: RootPrograms,
        at time: Date
    ) -> [(String, String)] {
        let families = programs.families
        var findings: [(String, String)] = []
        var reported: Set<String> = []
        for certificate in certificates {
            guard let ca = families.ca(for: certificate) else { continue }
            let siblings = families.siblings(of: ca, at: time)
            guard siblings.count > 1 else { continue }
            let pinnedSiblings = siblings.filter { sibling in certificates.contains { $0.sha256Fingerprint == sibling.sha256 } }
            let parentKey = programs.root(sha256: ca.parentSHA256)?.publicKeySHA256
            let parentPinned = parentKey.map { key in pins.contains { $0.algorithm == .sha256 && $0.digest == key } } ?? false
            let parent = programs.caName(sha256: ca.parentSHA256) ?? "its parent"
            guard !parentPinned, pinnedSiblings.count < siblings.count, reported.insert("\(ca.owner)/\(parent)").inserted else { continue }
            findings.append(
                (
                    "the pins cover \(pinnedSiblings.count) of the \(siblings.count) intermediates \(ca.owner) issues from under \(parent) (\(siblings.map(\.name).joined(separator: ", "))): a renewal may come from any of them; pin \(parent)'s key, or every sibling",
                    "ca-family-partly-pinned"
                ))
        }
        return findings
    }

    /// A CT requirement that can never apply, or whose lists are (or soon are) too old for its policy.
    private static func transparencyFindings(
        _ requirement: CertificateTransparency.Requirement, anchors: TrustAnchors, programs: RootPrograms, at time: Date,
        expiringWithinDays days: Int
    ) -> [(LintFinding.Level, String, String)] {
        var findings: [(LintFinding.Level, String, String)] = []
        let policy = requirement.policy.rawValue
        let allPrivate =
            switch anchors.classification {
            case .privatePKI: true
            case .webPKI: false
            case .byRootPrograms: anchors.origin == .certificates && anchors.certificates.allSatisfy { programs.root(for: $0) == nil }
            }
        if requirement.scope == .publiclyTrustedAnchors, allPrivate {
            findings.append(
                (
                    .warning, "ct-never-applies",
                    "the \(policy) CT policy never applies here: every anchor of this host is a private one (in no root program), and scope \"public-anchors\" exempts paths to private anchors, as browsers do (\"scope\": \"every-anchor\" checks this PKI's SCTs)"
                ))
        }
        guard let limit = requirement.policy.maximumListAge else { return findings }
        // The evaluation's own rule: unenforceable only after the last instant the lists are young enough.
        let refuses = requirement.enforcement == .enforce && requirement.whenUnenforceable == .fail
        let outcome =
            refuses ? "every connection to this host is refused (ct.unenforceable)" : "connections are accepted with a ct.unenforceable warning"
        let limitDays = Int(limit.components.seconds / 86_400)
        guard let newest = requirement.logs.newestTimestamp else {
            findings.append(
                (
                    refuses ? .error : .warning, "ct-lists-stale",
                    "the log lists are undated, so the \(policy) CT policy (lists at most \(limitDays) days old) cannot be enforced: \(outcome)"
                ))
            return findings
        }
        let stale = requirement.policy.listsYoungEnough(newest: newest) ?? .distantFuture
        if time > stale {
            findings.append(
                (
                    refuses ? .error : .warning, "ct-lists-stale",
                    "the newest log list is dated \(Timestamp.day(newest)), more than \(limitDays) days ago: the \(policy) CT policy cannot be enforced and \(outcome); update the lists"
                ))
        } else if stale.timeIntervalSince(time) <= Double(days) * 86_400 {
            let left = Int(stale.timeIntervalSince(time) / 86_400)
            findings.append(
                (
                    .warning, "ct-lists-expiring",
                    "the newest log list is dated \(Timestamp.day(newest)): in \(left) days (\(Timestamp.day(stale))) it is too old for the \(policy) CT policy and \(outcome); update the lists"
                ))
        }
        return findings
    }
}
