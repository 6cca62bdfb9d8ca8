import ArgumentParser
import Logging
import ServerTrust
import FoundationEssentials
import TrustEvaluator

/// An option's values spelled as their raw values: in `--help`, completions and errors. The
/// default description, `"\(value)"`, reflects on the value (a mirror and protocol-conformance
/// scans) for every value of every such option, each time argument-parser builds a command's
/// arguments — several times per start-up of `pincheck verify`.
/// (Public because the engine's public enums conform, and a witness is as visible as its type.)
public protocol RawValueArgument: ExpressibleByArgument, CaseIterable, RawRepresentable where RawValue == String {}

extension RawValueArgument {
    public var defaultValueDescription: String { rawValue }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
}

/// `--mode`: AFSecurityPolicy's pinning modes.
enum PinningModeArgument: String, RawValueArgument {
    case none
    case certificate
    case publicKey = "public-key"
}

/// `--revocation`: which revocation sources are consulted.
package enum RevocationArgument: String, RawValueArgument {
    /// The stapled OCSP response (and `--crl` files) only: nothing is fetched.
    case staple
    /// Also the CRLs at the leaf's distribution points, fetched.
    case crl
    /// Also the CRLs at the distribution points of every certificate below the anchor.
    case crlChain = "crl-chain"
}

/// `--revocation-failure`: what a CRL that cannot be had, is stale, or does not cover does.
enum RevocationFailureArgument: String, RawValueArgument {
    case soft
    case hard
}

/// `--ca-file`, the one declaration of it: every command that takes anchors reads them the same way.
struct AnchorFileOptions: ParsableArguments {
    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "Trust anchors (PEM bundle or DER) in place of the system store, also where a configuration says \"system\"; repeatable.",
            valueName: "file"))
    var files: [String] = []
}

/// The policy options shared by `verify`, `check` and `scan`.
struct PolicyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The name the certificate must carry (DNS name or IP address). Without it no name is checked.", valueName: "name"))
    var host: String?

    @OptionGroup var anchorFiles: AnchorFileOptions
    var caFiles: [String] { anchorFiles.files }

    @Flag(
        name: .customLong("web-pki-roots"),
        help:
            "Declare every --ca-file certificate a public Web PKI root (a copy of a browser's store). Not needed for roots a root program has: those are public by membership."
    )
    var webPKIRoots = false

    @Flag(
        name: .customLong("private-anchors"),
        help:
            "Declare the anchors (the system store's or --ca-file's) a private PKI's, whatever the root programs say: the Baseline Requirements rows only warn and --ct's public-anchors scope exempts them."
    )
    var privateAnchors = false

    @OptionGroup var rootProgramOptions: RootProgramOptions

    @Option(
        help: ArgumentHelp("Pinning mode: none, certificate or public-key. Default: public-key when pins are given, else none.", valueName: "mode"))
    var mode: PinningModeArgument?

    @Option(
        name: .customLong("pin-cert"),
        help: ArgumentHelp("A pinned certificate (PEM or DER); repeatable. In public-key mode its key is pinned.", valueName: "file"))
    var pinCertificates: [String] = []

    @Option(name: .customLong("pin"), help: ArgumentHelp("A public-key pin, sha256/BASE64; repeatable (public-key mode).", valueName: "pin"))
    var pins: [String] = []

    @Flag(name: .customLong("allow-invalid-certificates"), help: "Do not require the chain to verify against the anchors (test servers only).")
    var allowInvalidCertificates = false

    @Flag(name: .customLong("no-validate-domain-name"), help: "Do not check the host name against the certificate.")
    var noValidateDomainName = false

    @Option(
        name: .customLong("crl"),
        help: ArgumentHelp("A CRL (PEM or DER) that must cover the leaf, which it must not list; repeatable.", valueName: "file"))
    var crlFiles: [String] = []

    @Flag(name: .customLong("require-staple"), help: "Refuse a chain without a usable stapled OCSP response (a must-staple leaf always needs one).")
    var requireStaple = false

    @OptionGroup var revocationOptions: RevocationOptions

    @Option(
        help: ArgumentHelp(
            "A Pincheck JSON configuration (per-host pins); needs --host. --ca-file stands in for the system store it names.", valueName: "file"))
    var config: String?

    @OptionGroup var configurationFile: ConfigurationFileOptions
    var androidRaw: String? { configurationFile.androidRaw }
    var configFormat: ConfigurationFormat? { configurationFile.configFormat }

    @OptionGroup var when: TimeOption

    @OptionGroup var transparency: TransparencyOptions

    var effectiveMode: PinningModeArgument {
        mode ?? (pins.isEmpty && pinCertificates.isEmpty ? .none : .publicKey)
    }

    mutating func validate() throws {
        if webPKIRoots && caFiles.isEmpty {
            throw ValidationError("--web-pki-roots declares the --ca-file certificates public roots: give --ca-file FILE")
        }
        if webPKIRoots && privateAnchors {
            throw ValidationError("--web-pki-roots declares the anchors public and --private-anchors private: give one")
        }
        if configFormat != nil && config == nil {
            throw ValidationError("--config-format names the format of --config: give --config FILE")
        }
        if config != nil {
            guard mode == nil, pins.isEmpty, pinCertificates.isEmpty, !allowInvalidCertificates, !noValidateDomainName,
                crlFiles.isEmpty, !requireStaple, transparency.policy == nil
            else {
                throw ValidationError(
                    "--config sets the pins and checks per host: it cannot be combined with --mode, --pin, --pin-cert, --allow-invalid-certificates, --no-validate-domain-name, --crl, --require-staple or --ct (its hosts' \"certificateTransparency\" take their logs from --ct-log-list)"
                )
            }
        } else if transparency.policy == nil, !transparency.logLists.isEmpty || transparency.listDate != nil || !transparency.signatures.isEmpty {
            throw ValidationError(
                "--ct-log-list and --ct-log-list-date need --ct chrome|apple (or --config, whose hosts' \"certificateTransparency\" they serve)")
        }
        switch effectiveMode {
        case .none where !pins.isEmpty || !pinCertificates.isEmpty:
            throw ValidationError("--mode none takes no --pin or --pin-cert; choose --mode certificate or public-key")
        case .certificate where !pins.isEmpty:
            throw ValidationError("--mode certificate pins whole certificates: use --pin-cert FILE (--pin is for public-key mode)")
        case .certificate where pinCertificates.isEmpty:
            throw ValidationError("--mode certificate needs at least one --pin-cert FILE (Pincheck never pins nothing)")
        case .publicKey where pins.isEmpty && pinCertificates.isEmpty:
            throw ValidationError("--mode public-key needs at least one --pin sha256/… or --pin-cert FILE (Pincheck never pins nothing)")
        default:
            break
        }
    }

    /// The verification time: `--at`, or now.
    var time: Date { when.time }

    /// What decides: `--config`'s trust manager, or the command-line policy. Built once, so
    /// `check` and `scan` read their files once for every host.
    /// - Parameter defaultRevocation: The command's `--revocation` when none is given.
    /// - Parameter fetchTimeout: The command's `--timeout`, which bounds its CRL fetches too.
    /// - Parameter advisories: The warnings about the peer's set-up the command asks the plans for.
    func makeJudge(
        defaultRevocation: RevocationArgument = .staple, fetchTimeout: Double? = nil,
        advisories: EvaluationAdvisories = []
    ) throws -> Judge {
        if let config {
            // A configuration's hosts say which CRLs they check; the fetcher serves those that do.
            let fetcher = try revocationOptions.fetcher(timeout: fetchTimeout)
            let anchors = caFiles.isEmpty ? (privateAnchors ? TrustAnchors.system.classified(as: .privatePKI) : nil) : try caFileAnchors()
            // --ct-log-list serves the file's CT requirements in place of its own lists.
            let configured = try Configuration.load(
                contentsOf: config, anchors: anchors, androidRawFolder: androidRaw, format: configFormat,
                certificateTransparencyLogs: try transparency.logs()
            ).trustManager
            // A host whose configuration says nothing of distribution points gets the command's.
            let programs = try rootProgramOptions.policy()
            let manager = revocationOptions.apply(to: configured, default: defaultRevocation).mappingValidation { validation in
                var validation = validation
                validation.rootPrograms = programs
                validation.advisories = advisories
                return validation
            }
            return Judge(.manager(manager), fetcher: fetcher)
        }
        var policy = try makePolicy(defaultRevocation: defaultRevocation)
        policy.validation.advisories = advisories
        // Made only when something may be fetched, or to check a --crl-cache given anyway (a wrong
        // folder is named, never ignored): a fetcher and its transports cost a start 1 %.
        let fetches = policy.validation.revocation.distributionPointCRLs != nil
        let fetcher = fetches || revocationOptions.crlCache != nil ? try revocationOptions.fetcher(timeout: fetchTimeout) : nil
        return Judge(.policy(Evaluator(policy: policy)), fetcher: fetches ? fetcher : nil)
    }

    /// The `--ca-file` certificates: public or private by root-program membership, unless
    /// `--web-pki-roots` or `--private-anchors` declares them.
    func caFileAnchors() throws -> TrustAnchors {
        let classification: TrustAnchors.Classification = webPKIRoots ? .webPKI : privateAnchors ? .privatePKI : .byRootPrograms
        return try TrustAnchors(
            certificates: caFiles.flatMap { path throws(PincheckError) in try Certificate.load(contentsOf: path) },
            classification: classification)
    }

    /// Reads the named files and builds the policy.
    /// - Throws: `PincheckError` naming a file or pin that cannot be used.
    func makePolicy(defaultRevocation: RevocationArgument = .staple) throws -> TrustPolicy {
        let anchors = caFiles.isEmpty ? (privateAnchors ? TrustAnchors.system.classified(as: .privatePKI) : TrustAnchors.system) : try caFileAnchors()
        var pinned: [Certificate] = []
        for path in pinCertificates { pinned += try Certificate.load(contentsOf: path) }
        let pinning: TrustPolicy.Pinning
        switch effectiveMode {
        case .none: pinning = .none
        case .certificate: pinning = .certificates(try PinnedCertificates(pinned))
        case .publicKey: pinning = .publicKeys(try PinnedPublicKeys(pins: try pins.map { try PublicKeyPin($0) }, certificates: pinned))
        }
        var policy = TrustPolicy(
            pinning: pinning,
            anchors: anchors,
            chainValidation: allowInvalidCertificates ? .disabled(because: "--allow-invalid-certificates") : .required,
            nameValidation: noValidateDomainName ? .disabled(because: "--no-validate-domain-name") : .required)
        for path in crlFiles { policy.validation.revocationLists += try CertificateRevocationList.load(contentsOf: path) }
        policy.validation.revocation.requireStapledOCSP = requireStaple
        policy.validation.revocation.distributionPointCRLs = revocationOptions.distributionPointCRLs(default: defaultRevocation)
        policy.validation.certificateTransparency = try transparency.requirement()
        policy.validation.rootPrograms = try rootProgramOptions.policy()
        return policy
    }
}

/// `--root-program`, `--root-store-data`: whose distrust applies, with which data.
struct RootProgramOptions: ParsableArguments {
    enum ProgramArgument: String, RawValueArgument {
        case both, mozilla, chrome, none
    }

    @Option(
        name: .customLong("root-program"),
        help: ArgumentHelp(
            "Whose distrust dates and removals apply: both (refused if Mozilla or Chrome refuses; the default), mozilla, chrome, or none (not applied; each verdict then says what would have been refused).",
            valueName: "program"))
    var programArgument: ProgramArgument?
    /// `--root-program`, `both` when not given (optional for the reason `Verify.purposeArgument` is).
    var program: ProgramArgument { programArgument ?? .both }

    @Option(
        name: .customLong("root-store-data"),
        help: ArgumentHelp(
            "A newer root-program file read over the bundled data: Mozilla's certdata.txt, CCADB records (JSON lines) or Chrome Root Store constraints (JSON); repeatable, one of each kind. An older one, or one with under three quarters of the bundled data's roots (a file cut short), is refused.",
            valueName: "file"))
    var dataFiles: [String] = []

    @Flag(
        name: .customLong("allow-older-root-store-data"),
        help: "Accept a --root-store-data file older, or with far fewer roots, than the bundled data of its kind.")
    var allowOlder = false

    /// The data: bundled, or the files read over it.
    func data() throws -> RootPrograms {
        dataFiles.isEmpty ? .bundled : try RootPrograms(contentsOf: dataFiles, allowingOlder: allowOlder)
    }

    func policy() throws -> RootProgramPolicy {
        let distrust: RootProgramPolicy.Distrust =
            switch program {
            case .both: .both
            case .mozilla: .mozilla
            case .chrome: .chrome
            case .none: .notApplied(because: "--root-program none")
            }
        return RootProgramPolicy(data: try data(), distrust: distrust)
    }
}

/// `--ct`, `--ct-log-list`, …: the Certificate Transparency policy the leaf's SCTs must meet.
struct TransparencyOptions: ParsableArguments {
    @Option(
        name: .customLong("ct"),
        help: ArgumentHelp(
            "Require Certificate Transparency: chrome or apple, the browser policy the SCTs must meet. Needs --ct-log-list.", valueName: "policy"))
    var policy: CertificateTransparency.Policy?

    @Option(
        name: .customLong("ct-log-list"),
        help: ArgumentHelp(
            "A CT log list (Google v3 or Apple v5 JSON); repeatable. The only logs known: an SCT from a log in none of them never counts.",
            valueName: "file"))
    var logLists: [String] = []

    @Option(
        name: .customLong("ct-log-list-signature"),
        help: ArgumentHelp(
            "The detached signature of a --ct-log-list (Google's log_list.sig); repeatable, the n-th signs the n-th list. Given, every list needs one, and a list that does not verify is refused.",
            valueName: "file"))
    var signatures: [String] = []

    @Option(
        name: .customLong("ct-log-list-key"),
        help: ArgumentHelp(
            "The publisher's public key the signatures verify with (Google's log_list_pubkey.pem; PEM or DER): one for every list, or one per list in order.",
            valueName: "file"))
    var publisherKeys: [String] = []

    @Option(
        name: .customLong("ct-log-list-date"),
        help: ArgumentHelp(
            "The date of log lists that carry none (Apple's; a copy without log_list_timestamp), for the policy's list-age limit (Chrome: 70 days).",
            valueName: "time"),
        transform: TimeOption.parse)
    var listDate: Date?

    @Option(
        name: .customLong("ct-enforcement"),
        help: ArgumentHelp("enforce (a non-compliant certificate is not trusted; the default) or report-only (a warning).", valueName: "mode"))
    var enforcementArgument: CertificateTransparency.Enforcement?
    var enforcement: CertificateTransparency.Enforcement { enforcementArgument ?? .enforce }

    @Option(
        name: .customLong("ct-scope"),
        help: ArgumentHelp("public-anchors (paths to a private anchor are exempt, as in browsers; the default) or every-anchor.", valueName: "scope"))
    var scopeArgument: CertificateTransparency.Scope?
    var scope: CertificateTransparency.Scope { scopeArgument ?? .publiclyTrustedAnchors }

    @Option(
        name: .customLong("ct-when-unenforceable"),
        help: ArgumentHelp("What stale or undated log lists do: fail (the default) or allow (a warning, as Chrome does).", valueName: "action"))
    var whenUnenforceableArgument: CertificateTransparency.WhenUnenforceable?
    var whenUnenforceable: CertificateTransparency.WhenUnenforceable { whenUnenforceableArgument ?? .fail }

    func validate() throws {
        if policy != nil, logLists.isEmpty {
            throw ValidationError("--ct needs at least one --ct-log-list: the log lists are the only source of logs")
        }
        if !signatures.isEmpty || !publisherKeys.isEmpty {
            guard signatures.count == logLists.count else {
                throw ValidationError(
                    "--ct-log-list-signature: \(signatures.count) signature(s) for \(logLists.count) list(s); give one per --ct-log-list, in the same order"
                )
            }
            guard publisherKeys.count == 1 || publisherKeys.count == logLists.count else {
                throw ValidationError(
                    "--ct-log-list-key: give one key for every list, or one per --ct-log-list in the same order (signatures verify only with a key)")
            }
        }
    }

    /// The logs of the `--ct-log-list` files (each checked against its signature when signatures
    /// are given), or nil when none is given.
    func logs() throws(PincheckError) -> CertificateTransparency.Logs? {
        guard !logLists.isEmpty else { return nil }
        var lists: [CertificateTransparency.LogList] = []
        for (index, path) in logLists.enumerated() {
            if signatures.isEmpty {
                lists.append(try CertificateTransparency.LogList(contentsOf: path, publishedAt: listDate))
            } else {
                lists.append(
                    try CertificateTransparency.LogList(
                        contentsOf: path, signature: signatures[index],
                        publisherKey: publisherKeys[publisherKeys.count == 1 ? 0 : index],
                        publishedAt: listDate))
            }
        }
        return CertificateTransparency.Logs(lists)
    }

    /// The requirement, or nil without `--ct`.
    func requirement() throws(PincheckError) -> CertificateTransparency.Requirement? {
        guard let policy, let logs = try logs() else { return nil }
        var requirement = CertificateTransparency.Requirement(policy: policy, logs: logs, enforcement: enforcement)
        requirement.scope = scope
        requirement.whenUnenforceable = whenUnenforceable
        return requirement
    }
}

extension CertificateTransparency.Policy: RawValueArgument {}
extension CertificateTransparency.Enforcement: RawValueArgument {}
extension CertificateTransparency.Scope: RawValueArgument {}
extension CertificateTransparency.WhenUnenforceable: RawValueArgument {}

/// `--revocation`, `--revocation-failure`, `--crl-cache`: which revocation sources are consulted
/// (`verify`, `check`, `scan`, `audit`).
package struct RevocationOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Revocation sources: staple (the stapled OCSP response and --crl files; nothing fetched), crl (also the CRLs at the leaf's distribution points, fetched), crl-chain (those of every certificate). Default: crl for check, scan and audit, staple for verify. With a configuration, for hosts whose configuration sets no \"distributionPoints\".",
            valueName: "sources"))
    var revocation: RevocationArgument?

    @Option(
        name: .customLong("revocation-failure"),
        help: ArgumentHelp(
            "What a CRL that cannot be fetched, is stale or does not cover the certificate does: soft (a warning) or hard (not trusted). Default: soft.",
            valueName: "soft|hard"))
    var revocationFailureArgument: RevocationFailureArgument?
    var revocationFailure: RevocationFailureArgument { revocationFailureArgument ?? .soft }

    @Option(
        name: .customLong("crl-cache"),
        help: ArgumentHelp(
            "A folder that keeps fetched CRLs that verified until their nextUpdate, across runs. It must exist, be yours and not be writable by others.",
            valueName: "folder"))
    var crlCache: String?

    package init() {}

    /// What they ask of distribution points (nil: nothing), `fallback` when `--revocation` is not given.
    func distributionPointCRLs(default fallback: RevocationArgument) -> DistributionPointCRLs? {
        let failure: DistributionPointCRLs.Failure = revocationFailure == .hard ? .hard : .soft
        return switch revocation ?? fallback {
        case .staple: nil
        case .crl: DistributionPointCRLs(scope: .leaf, failure: failure)
        case .crlChain: DistributionPointCRLs(scope: .wholeChain, failure: failure)
        }
    }

    /// The fetcher, keeping CRLs in `--crl-cache` when given, each fetch bounded by `timeout`
    /// seconds (the command's `--timeout`) when given.
    /// - Throws: ``PincheckError`` when `--crl-cache` is missing, not a folder, or writable by others.
    @Flag(
        help: ArgumentHelp(
            "Fetch no CRL or issuer from a private network (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), where an enterprise PKI's CRLs usually are: for a run that must not reach the internal network."
        ))
    var refusePrivateFetches = false

    package func fetcher(timeout: Double? = nil) throws(PincheckError) -> RevocationListFetcher {
        var limits = RevocationListFetcher.Limits()
        limits.allowsPrivateNetworks = !refusePrivateFetches
        if let timeout { limits.timeout = .milliseconds(Int64((timeout * 1000).rounded(.up))) }
        guard let crlCache else { return RevocationListFetcher(limits: limits) }
        return try RevocationListFetcher(limits: limits, cachingIn: crlCache)
    }

    /// A configuration's trust manager with the command's distribution-point checks for the hosts
    /// whose configuration sets none.
    package func apply(to manager: TrustManager, default fallback: RevocationArgument) -> TrustManager {
        distributionPointCRLs(default: fallback).map(manager.consultingDistributionPoints) ?? manager
    }
}

/// `--json`, `--verbose`.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON Lines instead of the human-readable report: one object per result, with \"schema\" (docs/json.md).")
    var json = false

    @Flag(help: "Log each trust decision (host, disposition, rule, reason codes) to standard error, as the libraries log it with swift-log.")
    var verbose = false

    /// The libraries' logger: standard error at `.debug` with --verbose, silent otherwise.
    var logger: Logger {
        guard verbose else { return TrustLogging.silent }
        var logger = Logger(label: "pincheck", factory: { label in StreamLogHandler.standardError(label: label) })
        logger.logLevel = .debug
        return logger
    }
}

/// Judges served chains: with a configuration's trust manager (per-host pins, report-only,
/// revocation) or with one command-line policy.
struct Judge: Sendable {
    enum Kind: Sendable {
        case policy(Evaluator)
        case manager(TrustManager)
    }

    let kind: Kind
    /// Fetches the CRLs a policy checks at distribution points; nil: nothing is fetched.
    let fetcher: RevocationListFetcher?

    init(_ kind: Kind, fetcher: RevocationListFetcher? = nil) {
        self.kind = kind
        self.fetcher = fetcher
    }

    /// - Parameters:
    ///   - presentedSCTs: SCTs the server sent in the TLS extension (libssl's), for a CT policy.
    /// - Returns: What happened; `Disposition(serverTrust:)` says what a challenge handler does about it.
    func judge(
        _ chain: [Certificate], host: String?, port: Int = 443, at time: Date,
        stapledOCSPResponse: [UInt8]? = nil, presentedSCTs: [SignedCertificateTimestamp] = []
    ) throws(PincheckError) -> Verdict {
        // The command's own thread waits while the CRLs (if any) are fetched on the fetcher's threads.
        switch kind {
        case .policy(let evaluator):
            return try evaluator.evaluate(
                chain, host: host, at: time, stapledOCSPResponse: stapledOCSPResponse,
                presentedSCTs: presentedSCTs, waitingForRevocationListsFrom: fetcher)
        case .manager(let manager):
            guard let host else { throw PincheckError(.invalidHost, "--config chooses policies by host name: give --host") }
            return try manager.evaluate(
                chain, host: host, port: port, at: time, stapledOCSPResponse: stapledOCSPResponse,
                presentedSCTs: presentedSCTs, waitingForRevocationListsFrom: fetcher)
        }
    }
}

/// `--at TIME`, the time a command judges at: declared and parsed here once for every command.
struct TimeOption: ParsableArguments {
    @Option(
        name: .customLong("at"),
        help: ArgumentHelp(
            "The time to judge at (verdicts, expiry, days left), ISO 8601: 2030-06-01 or 2030-06-01T12:00:00Z. Default: now.",
            valueName: "time"),
        transform: TimeOption.parse)
    var at: Date?

    /// `--at`, or now.
    var time: Date { at ?? Date() }

    static func parse(_ text: String) throws -> Date {
        guard let date = Timestamp.parse(text) else {
            throw ValidationError("not an ISO 8601 date or time (for example 2030-06-01 or 2030-06-01T12:00:00Z)")
        }
        return date
    }
}

/// How a configuration file is read (`--config-format`, `--android-raw`): one group for every
/// command that reads one.
struct ConfigurationFileOptions: ParsableArguments {
    @Option(
        name: .customLong("config-format"),
        help: ArgumentHelp(
            "The configuration's format (pincheck, trustkit, android, okhttp, ats). Default: detected; an empty file is then refused.",
            valueName: "format"))
    var configFormat: ConfigurationFormat?

    @Option(
        name: .customLong("android-raw"),
        help: ArgumentHelp(
            "Where an Android configuration's @raw/NAME certificates are. Default: the app's res/raw, beside the file's res/xml.", valueName: "folder"
        ))
    var androidRaw: String?
}
