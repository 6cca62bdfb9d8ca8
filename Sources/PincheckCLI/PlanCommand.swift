import ArgumentParser
import FoundationEssentials
import PincheckTLS
import ServerTrust
import TrustEvaluator

/// `pincheck plan CONFIG --next FILE…`: will a renewal or a CA change break the app's pins?
struct Plan: ConsoleCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        _superCommandName: Pincheck.name,
        abstract: "Will a certificate, key or CA change break clients pinned by a configuration? And which pins keep both working.",
        discussion: """
            For each host the configuration pins (or each --host), judges the chain served now \
            (--current FILE, or fetched live) and the one that will be served (--next: a certificate \
            or chain, a CSR, or a public or private key; a lone leaf is completed with today's \
            intermediates, a key keeps today's path above the leaf), and prints survives or breaks \
            with the reason, and the smallest pin set that keeps both working plus a backup pin on \
            neither chain (the configuration's own pins that qualify, or --backup), ready to paste \
            in the configuration's own format.
            Exit codes: 0 every host survives · 1 some host breaks · 2 bad input · 3 the current chain could not be fetched.
            """)

    @OptionGroup var app: AppConfigurationOptions

    @Option(
        name: .customLong("next"),
        help: ArgumentHelp(
            "What will be served: a certificate or chain (PEM/DER), a CSR, or a public or private key (PEM); repeatable.", valueName: "file"))
    var next: [String] = []

    @Option(help: ArgumentHelp("The chain served today (leaf first). Default: fetched from each host.", valueName: "file"))
    var current: String?

    @Option(
        name: .customLong("host"),
        help: ArgumentHelp("A host to plan for; repeatable. Default: every exact name the configuration pins.", valueName: "name"))
    var hosts: [String] = []

    @Option(help: ArgumentHelp("A spare key (CSR, public or private key, or certificate) to pin as the backup; repeatable.", valueName: "file"))
    var backup: [String] = []

    @Option(help: ArgumentHelp("Where to fetch today's chain from, ADDRESS[:PORT] (one host). Default: the host itself.", valueName: "address"))
    var address: String?

    @OptionGroup var keyPassphrase: KeyPassphraseOptions

    func validate() throws {
        guard !next.isEmpty else { throw ValidationError("give what will be served with --next FILE") }
    }

    func execute(_ console: Console) throws -> ExitStatus {
        let data = Data(try InputFile.read(app.config, limit: InputFile.configurationLimit, what: "configuration file"))
        let format = app.configFormat ?? ConfigurationImporter.detect(data)
        let configuration = try app.load()
        let time = app.time, json = app.json
        let passphrase = try keyPassphrase.passphrase()
        let change = try NextServed(files: next, passphrase: passphrase)
        let backups = try backup.map { file throws(PincheckError) -> PublicKeyPin in try NextServed.keyPin(of: file, passphrase: passphrase) }
        let currentChain = try current.map { file throws(PincheckError) in try Certificate.load(contentsOf: file) }

        var names = try hosts.map { host throws(PincheckError) in try HostName.peerName(for: host).text }
        if names.isEmpty {
            names = configuration.hosts.compactMap { entry in
                switch entry.policy.pattern.kind {
                case .exact, .includingSubdomains: entry.policy.pattern.base
                case .oneLabel, .anyDepth: nil
                }
            }
        }
        guard !names.isEmpty else {
            throw PincheckError(.invalidPolicy, "the configuration pins no exact name; give the hosts to plan for with --host")
        }
        let probe = app.probe

        var worst = ExitStatus.trusted
        for (index, name) in names.enumerated() {
            let served: [Certificate]
            if let currentChain {
                served = currentChain
            } else {
                let target = try ProbeTarget(parsing: address ?? name, defaultPort: 443)
                do { served = try probe.probe(target, serverName: name).servedChain } catch {
                    worst = ExitStatus.worst(worst, .networkFailure)
                    console.line(
                        json
                            ? JSONLines.line(["host": .string(name), "error": .string("\(error)")])
                            : "\(name): today's chain could not be fetched: \(error)")
                    continue
                }
            }
            let outcome = try PlanOutcome(
                host: name, manager: configuration.trustManager, current: served, next: change,
                backups: backups, at: time)
            worst = ExitStatus.worst(worst, outcome.breaks ? .notTrusted : .trusted)
            if json {
                console.line(outcome.jsonLine(format: format))
            } else {
                if index > 0 { console.line() }
                outcome.render(to: console, format: format)
            }
        }
        return worst
    }
}

/// What `--next` says will be served: certificates, or only a new leaf key.
struct NextServed {
    var certificates: [Certificate] = []
    var leafKey: PublicKeyPin? = nil
    var description: String

    /// - Parameter passphrase: Opens an encrypted private key among the files.
    init(files: [String], passphrase: [UInt8]? = nil) throws(PincheckError) {
        var kinds: [String] = []
        for file in files {
            let bytes = try InputFile.read(file, limit: InputFile.certificateLimit, what: "--next file")
            if let key = try PublicKeyFile.read(bytes, source: file, passphrase: passphrase) {
                guard leafKey == nil else {
                    throw PincheckError(.invalidPolicy, "--next names more than one key; give one new leaf key (or the certificates)", source: file)
                }
                leafKey = key.pin
                kinds.append("a new leaf key (\(key.kind))")
            } else {
                certificates += try Certificate.parseBundle(bytes, source: file)
                kinds.append(file)
            }
        }
        guard certificates.isEmpty || leafKey == nil else {
            throw PincheckError(.invalidPolicy, "--next mixes certificates and a bare key; give one or the other")
        }
        description = kinds.joined(separator: ", ")
    }

    /// The SPKI pin of a key, CSR or certificate file (`--backup`).
    static func keyPin(of file: String, passphrase: [UInt8]? = nil) throws(PincheckError) -> PublicKeyPin {
        let bytes = try InputFile.read(file, limit: InputFile.certificateLimit, what: "--backup file")
        if let key = try PublicKeyFile.read(bytes, source: file, passphrase: passphrase) { return key.pin }
        guard let certificate = try Certificate.parseBundle(bytes, source: file).first else {
            throw PincheckError(.emptyInput, "no key in the --backup file", source: file)
        }
        return certificate.publicKeyPin
    }
}

/// One host's plan.
struct PlanOutcome {
    let host: String
    let policy: HostPolicy?
    let currentAllowed: Bool
    let currentReasons: [String]
    /// The keys of today's verified (or built) path, leaf first.
    let currentKeys: [PublicKeyPin]
    /// The keys of the next path, leaf first.
    let nextKeys: [PublicKeyPin]
    let breaks: Bool
    let reason: String
    let suggestion: [PublicKeyPin]
    let backupsFound: Bool
    /// What the CA families say of today's pins (``CAFamilies``): siblings, expiry, CRL partitions,
    /// a pin above where the verified path ends.
    let familyNotes: [String]

    init(host: String, manager: TrustManager, current: [Certificate], next: NextServed, backups: [PublicKeyPin], at time: Date) throws(PincheckError)
    {
        self.host = host
        let today = try manager.evaluate(current, host: host, at: time)
        policy = today.hostPolicy
        currentAllowed = Disposition(serverTrust: today).allowsConnection
        currentReasons = today.failures.map { "\($0.code)" }
        let todayPath = (today.verifiedPath ?? today.builtPath)?.certificates ?? current
        let todayKeys = todayPath.map(\.publicKeyPin)
        let pinned = Self.enforcedPins(policy, at: time)
        let upcoming: [PublicKeyPin]

        if next.certificates.isEmpty, let key = next.leafKey {
            // A new key under today's CA: the path above the leaf stays.
            upcoming = [key] + todayKeys.dropFirst()
            let survives = pinned.isEmpty || pinned.contains { upcoming.contains($0) }
            breaks = !survives
            reason = survives ? Self.survivalReason(pinned, upcoming) : Self.breakReason(today, pinned, upcoming)
        } else {
            var chain = next.certificates
            // A lone leaf from today's issuer: the server will send it with today's intermediates.
            if chain.count == 1, !chain[0].isSelfSigned { chain += current.dropFirst() }
            let nextTime = max(time, chain[0].notBefore.addingTimeInterval(1))
            let verdict = try manager.evaluate(chain, host: host, at: nextTime)
            upcoming = ((verdict.verifiedPath ?? verdict.builtPath)?.certificates ?? chain).map(\.publicKeyPin)
            breaks = !Disposition(serverTrust: verdict).allowsConnection
            if !breaks {
                reason = Self.survivalReason(pinned, upcoming)
            } else if verdict.failures.allSatisfy({ $0.code == .pinMismatch }) {
                reason = Self.breakReason(today, pinned, upcoming)
            } else {
                reason =
                    "the next chain itself is refused: "
                    + verdict.failures.map { "\($0.code): \($0.message.split(separator: "\n").first ?? "")" }.joined(separator: "; ")
            }
        }

        // The smallest set that keeps both working: a key on both paths, above the leaf if one is;
        // else one key of each path (the issuing CA's when there is one).
        let common = todayKeys.enumerated().filter { upcoming.contains($0.element) }
        var chosen: [PublicKeyPin]
        if let stable = common.first(where: { $0.offset > 0 }) ?? common.first {
            chosen = [stable.element]
        } else {
            chosen = [todayKeys.count > 1 ? todayKeys[1] : todayKeys[0], upcoming.count > 1 ? upcoming[1] : upcoming[0]]
        }
        // Backups: the configuration's own pins on neither chain, then --backup keys.
        let spare = (pinned + backups).filter { !todayKeys.contains($0) && !upcoming.contains($0) }
        backupsFound = !spare.isEmpty
        for pin in spare where !chosen.contains(pin) { chosen.append(pin) }
        suggestion = chosen
        currentKeys = todayKeys
        nextKeys = upcoming
        familyNotes = Self.familyNotes(today, pinned: pinned, at: time)
    }

    /// The CA family each pinned CA of today's path belongs to, and a pin that can never match
    /// because the verified path ends below it.
    static func familyNotes(_ today: Verdict, pinned: [PublicKeyPin], at time: Date) -> [String] {
        let programs = today.hostPolicy?.validationPolicy.rootPrograms.data ?? .bundled
        let families = programs.families
        var notes: [String] = []
        var seen: Set<[UInt8]> = []
        for match in today.pinsFound where match.depth > 0 && seen.insert(match.certificate.sha256Fingerprint).inserted {
            let certificate = match.certificate
            if let ca = families.ca(for: certificate) {
                let siblings = families.siblings(of: ca, at: time)
                let parent = programs.caName(sha256: ca.parentSHA256) ?? "its parent"
                if siblings.count > 1 {
                    let covered = siblings.count { sibling in today.pinsFound.contains { $0.certificate.sha256Fingerprint == sibling.sha256 } }
                    notes.append(
                        "the pin on \(ca.name) covers \(covered) of the \(siblings.count) intermediates \(ca.owner) issues from under \(parent) (\(siblings.map(\.name).joined(separator: ", "))), and it may issue the next certificate from any of them: pin \(parent)'s key, or every sibling's"
                    )
                }
                // The same CA under other parents: cross-signed, or re-issued under a successor root.
                let others = families.all.filter {
                    $0.name == ca.name && $0.owner == ca.owner && $0.parentSHA256 != ca.parentSHA256 && $0.isValid(at: time)
                }
                let otherParents = others.compactMap { programs.caName(sha256: $0.parentSHA256) }
                if !otherParents.isEmpty {
                    notes.append(
                        "\(ca.name) is also issued under \(Set(otherParents).sorted().joined(separator: ", ")) (a cross-sign or a successor root): a pin on \(parent) does not cover that path"
                    )
                }
                if let end = ca.validTo {
                    notes.append(
                        "\(ca.name) expires \(Timestamp.day(end)) (\(Int(end.timeIntervalSince(time) / 86_400)) days): a pin on it ends then at the latest"
                    )
                }
                if ca.crlPartitions > 1 { notes.append("\(ca.name) publishes its CRL in \(ca.crlPartitions) partitions") }
            } else if certificate.isSelfSigned, let root = programs.root(for: certificate) {
                let issued = families.issued(by: root.sha256, at: time)
                // A root among what it issued is a successor it cross-signed (ISRG Root X1 → X2).
                let rootNames = Set(programs.roots.map(\.name))
                let successors = issued.filter { rootNames.contains($0.name) && $0.name != root.name }
                let intermediates = issued.filter { !rootNames.contains($0.name) }
                notes.append(
                    "the pin on \(root.name) covers the \(intermediates.count) TLS intermediate\(intermediates.count == 1 ? "" : "s") it issued (\(intermediates.map(\.name).joined(separator: ", "))) and any it issues later"
                )
                if !successors.isEmpty {
                    notes.append(
                        "\(root.name) cross-signs \(successors.map(\.name).joined(separator: ", ")): a successor root, whose own intermediates this pin covers only on the cross-signed path"
                    )
                }
                if root.isDistrustedOrScheduled { notes.append("\(root.name): \(root.programSummary)") }
            }
        }
        if let note = Self.pinAbovePathNote(today, pinned: pinned, programs: programs) { notes.append(note) }
        return notes
    }

    /// A pin above the verified path's end, when that is why the pins did not match.
    private static func pinAbovePathNote(_ today: Verdict, pinned: [PublicKeyPin], programs: RootPrograms) -> String? {
        // A pin above the verified path's end: the path stops at an anchor that is not a root
        // (an intermediate the store trusts itself), so a pin on the CA above it never matches.
        // Only for a chain refused for its pins alone: its built path is then the verified one.
        guard !today.failures.isEmpty, today.failures.allSatisfy({ $0.code == .pinMismatch }),
            let path = today.builtPath, path.anchoring == .trustAnchor, let top = path.certificates.last, !top.isSelfSigned,
            !pinned.isEmpty, !pinned.contains(where: { pin in path.certificates.contains { pin.matches($0) } })
        else { return nil }
        let above = pinned.flatMap { programs.roots(withKey: $0) }.first { $0.name.isEmpty == false }
        let pinnedName = above.map { "\($0.name)'s key" } ?? "a CA above it"
        return
            "the verified path ends at \(top.subject), an anchor of the store although it is not a root: \(pinnedName) sits above where the path ends and can never match; pin \(top.subject)'s key or one below it"
    }

    /// The pins that decide: every active, enforced pin set's.
    static func enforcedPins(_ policy: HostPolicy?, at time: Date) -> [PublicKeyPin] {
        policy?.pinSets.filter { $0.enforcement == .enforce && $0.isActive(at: time) }.flatMap(\.keyPins) ?? []
    }

    static func survivalReason(_ pinned: [PublicKeyPin], _ nextKeys: [PublicKeyPin]) -> String {
        guard !pinned.isEmpty else { return "not pinned: only default validation applies" }
        let depths = nextKeys.enumerated().filter { pinned.contains($0.element) }.map { "\($0.offset)" }
        return "a pinned key is on the next path (depth \(depths.joined(separator: ", ")))"
    }

    static func breakReason(_ today: Verdict, _ pinned: [PublicKeyPin], _ nextKeys: [PublicKeyPin]) -> String {
        let depths = Set(today.pinsFound.map(\.depth))
        if depths == [0] { return "only the leaf key is pinned and the next leaf has a new key" }
        if today.pinsFound.isEmpty {
            return today.pinsCompared
                ? "no pin matches today's chain either" : "no pinned key is on the next path (today's chain is refused before its pins are compared)"
        }
        return
            "no pinned key is on the next path: today's pins match at depth \(depths.sorted().map(String.init).joined(separator: ", ")), and the next path's keys are other keys"
    }

    /// The suggested pins in the configuration's own format.
    func snippet(format: ConfigurationFormat) -> String {
        let pattern = policy.map { "\($0.pattern.base)" } ?? host
        switch format {
        case .pincheck:
            return #"{ "pattern": "\#(pattern)", "pins": [\#(suggestion.map { "\"\($0)\"" }.joined(separator: ", "))] }"#
        case .okHttp:
            return suggestion.map { "\(pattern) \($0)" }.joined(separator: "\n")
        case .trustKit:
            return (["<key>TSKPublicKeyHashes</key>", "<array>"] + suggestion.map { "    <string>\($0.base64)</string>" } + ["</array>"]).joined(
                separator: "\n")
        case .android:
            return (["<pin-set>"] + suggestion.map { "    <pin digest=\"SHA-256\">\($0.base64)</pin>" } + ["</pin-set>"]).joined(separator: "\n")
        case .ats:
            // Keys that are leaves today or next go to the leaf identities; the others to the CA ones.
            let leaves = Set([currentKeys.first, nextKeys.first].compactMap { $0 })
            func identities(_ key: String, _ pins: [PublicKeyPin]) -> [String] {
                pins.isEmpty
                    ? []
                    : ["<key>\(key)</key>", "<array>"]
                        + pins.map { "    <dict><key>SPKI-SHA256-BASE64</key><string>\($0.base64)</string></dict>" } + ["</array>"]
            }
            return
                (identities("NSPinnedLeafIdentities", suggestion.filter { leaves.contains($0) })
                + identities("NSPinnedCAIdentities", suggestion.filter { !leaves.contains($0) })).joined(separator: "\n")
        }
    }

    func render(to console: Console, format: ConfigurationFormat) {
        let verdict = breaks ? console.paint("BREAKS", .red) : console.paint("SURVIVES", .green)
        console.line("\(host): \(verdict) — \(reason)")
        console.line("  today: \(currentAllowed ? "allowed" : "refused (\(currentReasons.joined(separator: ", ")))")")
        console.line("  pins that keep both working, with a backup on neither chain (\(format.rawValue)):")
        for line in snippet(format: format).split(separator: "\n") { console.line("    \(line)") }
        for note in familyNotes { console.line("  CA family: \(note)") }
        if !backupsFound {
            console.line(
                "  " + console.paint("no backup pin:", .yellow)
                    + " make a spare key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out spare.key), keep it offline, and plan again with --backup spare.key"
            )
        }
    }

    func jsonLine(format: ConfigurationFormat) -> String {
        JSONLines.line([
            "host": .string(host),
            "policy": policy.map { .string("\($0.pattern)") } ?? .null,
            "current": .string(currentAllowed ? "allowed" : "refused"),
            "currentReasons": .array(currentReasons.map(JSONValue.string)),
            "next": .string(breaks ? "breaks" : "survives"),
            "reason": .string(reason),
            "pins": .array(suggestion.map { .string("\($0)") }),
            "backupFound": .string(backupsFound ? "yes" : "no"),
            "snippet": .string(snippet(format: format)),
            "caFamily": .array(familyNotes.map(JSONValue.string)),
        ])
    }
}
