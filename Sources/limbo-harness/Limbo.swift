import Foundation
import TrustEvaluator

/// limbo.json, as far as the harness reads it (limbo-schema.json, version 1).
struct LimboSuite: Decodable {
    let version: Int
    let testcases: [LimboCase]
}

struct LimboCase: Decodable {
    enum Kind: String, Decodable { case server = "SERVER", client = "CLIENT" }
    enum Expected: String, Decodable { case success = "SUCCESS", failure = "FAILURE" }
    struct PeerName: Decodable {
        let kind: String
        let value: String
    }

    let id: String
    let conflictsWith: [String]
    let features: [String]
    let validationKind: Kind
    let trustedCerts: [String]
    let untrustedIntermediates: [String]
    let peerCertificate: String
    let validationTime: String?
    let signatureAlgorithms: [String]
    let keyUsage: [String]
    let extendedKeyUsage: [String]
    let expectedResult: Expected
    let expectedPeerName: PeerName?
    let expectedPeerNames: [PeerName]
    let maxChainDepth: Int?
    let crls: [String]

    enum CodingKeys: String, CodingKey {
        case id, features, crls
        case conflictsWith = "conflicts_with"
        case validationKind = "validation_kind"
        case trustedCerts = "trusted_certs"
        case untrustedIntermediates = "untrusted_intermediates"
        case peerCertificate = "peer_certificate"
        case validationTime = "validation_time"
        case signatureAlgorithms = "signature_algorithms"
        case keyUsage = "key_usage"
        case extendedKeyUsage = "extended_key_usage"
        case expectedResult = "expected_result"
        case expectedPeerName = "expected_peer_name"
        case expectedPeerNames = "expected_peer_names"
        case maxChainDepth = "max_chain_depth"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        conflictsWith = try c.decodeIfPresent([String].self, forKey: .conflictsWith) ?? []
        features = try c.decodeIfPresent([String].self, forKey: .features) ?? []
        validationKind = try c.decode(Kind.self, forKey: .validationKind)
        trustedCerts = try c.decode([String].self, forKey: .trustedCerts)
        untrustedIntermediates = try c.decode([String].self, forKey: .untrustedIntermediates)
        peerCertificate = try c.decode(String.self, forKey: .peerCertificate)
        validationTime = try c.decodeIfPresent(String.self, forKey: .validationTime)
        signatureAlgorithms = try c.decodeIfPresent([String].self, forKey: .signatureAlgorithms) ?? []
        keyUsage = try c.decodeIfPresent([String].self, forKey: .keyUsage) ?? []
        extendedKeyUsage = try c.decodeIfPresent([String].self, forKey: .extendedKeyUsage) ?? []
        expectedResult = try c.decode(Expected.self, forKey: .expectedResult)
        expectedPeerName = try c.decodeIfPresent(PeerName.self, forKey: .expectedPeerName)
        expectedPeerNames = try c.decodeIfPresent([PeerName].self, forKey: .expectedPeerNames) ?? []
        maxChainDepth = try c.decodeIfPresent(Int.self, forKey: .maxChainDepth)
        crls = try c.decodeIfPresent([String].self, forKey: .crls) ?? []
    }
}

/// One line of the results file.
struct ResultLine: Encodable {
    let id: String
    let expected: String
    let actual: String
    let reason: String
}

struct Outcome {
    enum Actual: String { case success = "SUCCESS", failure = "FAILURE", skipped = "SKIPPED" }
    let actual: Actual
    let reason: String
    /// A trusted verdict that carried a profile warning.
    var warned = false
    /// A real-world conflict case that did not come out as docs/conformance.md says: always a failure.
    var brokenConflict = false

    static func failure(_ reason: String) -> Outcome { Outcome(actual: .failure, reason: reason) }
    static func skipped(_ reason: String) -> Outcome { Outcome(actual: .skipped, reason: reason) }
}

/// Runs one case through ``Evaluator``: anchors = trusted_certs, the peer certificate served
/// alone, untrusted_intermediates offered as additional intermediates.
enum LimboRunner {
    /// The date of the x509-limbo snapshot in ../shared/limbo (commit 8a2e6f4, 2026-06-29).
    static let snapshotDate = Date(timeIntervalSince1970: 1_782_691_200)

    /// Features Pincheck deliberately does not implement, with the reason (listed in docs/conformance.md).
    static let unsupported: [String: String] =
        PublicSuffixList.system == nil
        ? [
            "pedantic-public-suffix-wildcard":
                "the Public Suffix List is not installed (Debian: publicsuffix), so `*.co.uk` cannot be told from `*.example.co.uk`"
        ] : [:]

    /// Cases where the suite and the real world disagree, and Pincheck takes the real world's side
    /// (docs/conformance.md, "The strict profile against the real world"): Pincheck trusts these chains with a
    /// warning, as Chromium, Firefox, Go and rustls-webpki accept them. Each is run, and must come
    /// out trusted with that warning; it is then counted as skipped, never as passed.
    static let realWorldConflicts: [String: String] = [
        "rfc5280::aki::leaf-missing-aki": missingKeyIdentifier,
        "rfc5280::aki::intermediate-missing-aki": missingKeyIdentifier
            + "; a cross-signed Netflix intermediate (2015–2017) in the real-world corpus has none",
        "rfc5280::aki::cross-signed-root-missing-aki":
            "the anchor lacks authorityKeyIdentifier; a trust anchor is its name and key (RFC 5280 §6.1.1 d), and Chromium, Firefox, Go and rustls-webpki end a path at any certificate the caller trusts, as rfc5280::root-and-intermediate-swapped requires",
        "rfc5280::ski::root-missing-ski": missingKeyIdentifier + "; TWCA Global Root CA, a Mozilla root, has none",
        "rfc5280::ski::intermediate-missing-ski": missingKeyIdentifier,
        "rfc5280::root-non-critical-basic-constraints":
            "a trust anchor is trusted as configured (RFC 5280 §6.1.1 d); Chromium, Firefox, Go and rustls-webpki ignore basicConstraints criticality",
        "rfc5280::leaf-ku-keycertsign":
            "keyCertSign on a leaf that basicConstraints does not make a CA issues nothing; Chromium, Firefox, Go and rustls-webpki accept it",
        "webpki::eku::ee-critical-eku": "Chromium, Firefox, Go and rustls-webpki understand extendedKeyUsage, so a critical one is accepted",
        "webpki::eku::ee-without-eku":
            "a leaf without extendedKeyUsage serves any purpose in Chromium, Firefox, Go and rustls-webpki (the conflicting rfc5280::eku::ee-without-eku is run instead)",
        "webpki::san::public-suffix-private-namespace-wildcard-san":
            "conflicts with online::s3.amazonaws.com, Amazon's real certificate: Chromium refuses wildcards over ICANN registries only (EXCLUDE_PRIVATE_REGISTRIES), Firefox, Go and rustls have no such rule",
    ]
    /// Conflicts Pincheck settles without a warning: nothing in the chain is wrong for the real world.
    private static let silentConflicts: Set<String> = [
        "webpki::san::public-suffix-private-namespace-wildcard-san", "rfc5280::aki::cross-signed-root-missing-aki",
    ]
    private static let missingKeyIdentifier =
        "key identifiers help path building and stop no attack; Chromium, Firefox, Go and rustls-webpki do not require them"

    /// Of limbo's own `conflicts_with` pairs, the cases run on the RFC 5280 side (the real world's).
    static let rfc5280Side: Set<String> = ["rfc5280::eku::ee-without-eku"]

    static func run(_ testcase: LimboCase) -> Outcome {
        for feature in testcase.features {
            if let reason = unsupported[feature] { return .skipped("feature \(feature): \(reason)") }
        }
        // Two incompatible expectations (`conflicts_with`): Pincheck takes the Web PKI side unless
        // the real world is on the other.
        if !testcase.conflictsWith.isEmpty, !testcase.id.hasPrefix("webpki::"), !rfc5280Side.contains(testcase.id) {
            return .skipped("conflicts with \(testcase.conflictsWith.joined(separator: ", ")); Pincheck takes the Web PKI side")
        }
        let outcome = evaluate(testcase)
        guard let conflict = realWorldConflicts[testcase.id] else { return outcome }
        // Pincheck must really take the real world's side: trusted, with the finding as a warning.
        let wantsWarning = !silentConflicts.contains(testcase.id)
        guard outcome.actual == .success, outcome.warned || !wantsWarning else {
            var broken = Outcome.failure(
                "expected trusted\(wantsWarning ? " with a warning" : "") (real-world conflict: \(conflict)); got \(outcome.actual.rawValue): \(outcome.reason)"
            )
            broken.brokenConflict = true
            return broken
        }
        return .skipped("real-world conflict: \(conflict)")
    }

    /// What a case's inputs make: the peer, the policy (anchors as a Web PKI root store), the
    /// name asked for, the time; or the outcome that ends the case here.
    private struct Setup {
        let peer: Certificate
        let policy: TrustPolicy
        let host: String?
        let time: Date
    }

    private enum SetupResult {
        case ready(Setup)
        /// The case ends before any evaluation (bad input, an unsupported requirement).
        case done(Outcome)
    }

    private static func setup(_ testcase: LimboCase) -> SetupResult {
        let peer: Certificate
        var policy: TrustPolicy
        do throws(PincheckError) {
            peer = try Certificate(pemEncoded: testcase.peerCertificate)
            let trusted = try testcase.trustedCerts.map { pem throws(PincheckError) in try Certificate(pemEncoded: pem) }
            let intermediates = try testcase.untrustedIntermediates.map { pem throws(PincheckError) in try Certificate(pemEncoded: pem) }
            let revocationLists = try testcase.crls.map { pem throws(PincheckError) in try CertificateRevocationList(pemEncoded: pem) }
            // x509-limbo asks what a Web PKI verifier does: its roots stand for a browser's root
            // store, so the Baseline Requirements rows that private anchors are only warned
            // about (webpki::san::san-critical-with-nonempty-subject, webpki::eku::root-has-eku,
            // webpki::cn::*) refuse its chains.
            policy = TrustPolicy(anchors: try TrustAnchors(certificates: trusted, classification: .webPKI), additionalIntermediates: intermediates)
            policy.validation.revocationLists = revocationLists
        } catch {
            return .done(.failure("input rejected: \(error.code): \(error.message)"))
        }
        if let depth = testcase.maxChainDepth { policy.validation.maximumChainDepth = depth }
        for usage in testcase.keyUsage {
            guard let keyUsage = KeyUsage(limboName: usage) else { return .done(.skipped("unknown key usage \(usage)")) }
            policy.validation.requiredKeyUsages.insert(keyUsage)
        }
        var host: String?
        switch testcase.validationKind {
        case .server:
            host = testcase.expectedPeerName?.value
        case .client:
            // Client certificates name people and services, not hosts: the RFC 822 names are
            // checked against the leaf (name constraints are OpenSSL's) after the evaluation.
            policy = policy.judgingClients
        }
        for eku in testcase.extendedKeyUsage {
            switch (eku, testcase.validationKind) {
            case ("serverAuth", .server), ("clientAuth", .client): continue
            default: return .done(.skipped("extended key usage \(eku) for a \(testcase.validationKind.rawValue) case"))
            }
        }
        guard let text = testcase.validationTime else {
            // x509-limbo means "now"; every such case's certificates are valid from 1970 to 2969, so
            // a fixed instant (the suite snapshot's date) judges them the same and keeps runs reproducible.
            return .ready(Setup(peer: peer, policy: policy, host: host, time: LimboRunner.snapshotDate))
        }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let time = ISO8601DateFormatter().date(from: text) ?? fractional.date(from: text) else {
            return .done(.failure("unreadable validation_time \(text)"))
        }
        return .ready(Setup(peer: peer, policy: policy, host: host, time: time))
    }

    private static func evaluate(_ testcase: LimboCase) -> Outcome {
        let setup: Setup
        switch Self.setup(testcase) {
        case .ready(let made): setup = made
        case .done(let outcome): return outcome
        }
        let (peer, policy, host, time) = (setup.peer, setup.policy, setup.host, setup.time)
        let verdict: Verdict
        do {
            verdict = try Evaluator(policy: policy).evaluate([peer], host: host, at: time)
        } catch {
            return .failure("\(error.code): \(error.message)")
        }
        guard verdict.isTrusted else {
            return .failure(verdict.failures.map { "\($0.code): \($0.message)" }.joined(separator: "; "))
        }
        if testcase.validationKind == .client {
            let emails = Set(peer.subjectAlternativeNames.compactMap { if case .email(let e) = $0 { e.lowercased() } else { nil } })
            for name in testcase.expectedPeerNames where name.kind == "RFC822" && !emails.contains(name.value.lowercased()) {
                return .failure("host.mismatch: the client certificate does not name \(name.value)")
            }
        }
        return Outcome(
            actual: .success, reason: "trusted",
            warned: verdict.warnings.contains { $0.code == .profileViolation })
    }
}

extension KeyUsage {
    init?(limboName: String) {
        switch limboName {
        case "digitalSignature": self = .digitalSignature
        case "contentCommitment": self = .contentCommitment
        case "keyEncipherment": self = .keyEncipherment
        case "dataEncipherment": self = .dataEncipherment
        case "keyAgreement": self = .keyAgreement
        case "keyCertSign": self = .keyCertSign
        case "cRLSign": self = .cRLSign
        case "encipherOnly": self = .encipherOnly
        case "decipherOnly": self = .decipherOnly
        default: return nil
        }
    }
}

/// The counts, and the ids worth printing.
struct Tally {
    var passed = 0
    var falseAccepts: [String] = []
    var falseRejects: [(String, String)] = []
    var skipped: [(String, String)] = []

    mutating func record(_ testcase: LimboCase, _ outcome: Outcome) {
        if outcome.brokenConflict {
            falseRejects.append((testcase.id, outcome.reason))
            return
        }
        switch (testcase.expectedResult, outcome.actual) {
        case (_, .skipped): skipped.append((testcase.id, outcome.reason))
        case (.success, .success), (.failure, .failure): passed += 1
        case (.failure, .success): falseAccepts.append(testcase.id)
        case (.success, .failure): falseRejects.append((testcase.id, outcome.reason))
        }
    }

    func summary(seconds: TimeInterval) -> String {
        var lines: [String] = []
        for id in falseAccepts { lines.append("FALSE ACCEPT \(id)") }
        for (id, reason) in falseRejects { lines.append("FALSE REJECT \(id): \(reason)") }
        for (id, reason) in skipped { lines.append("SKIPPED \(id): \(reason)") }
        lines.append(String(format: "%d cases in %.1f s", passed + falseAccepts.count + falseRejects.count + skipped.count, seconds))
        lines.append("false accepts: \(falseAccepts.count)")
        lines.append("false rejects: \(falseRejects.count)")
        lines.append("skipped: \(skipped.count)")
        lines.append("\(passed) passed, \(falseAccepts.count + falseRejects.count) failed")
        return lines.joined(separator: "\n")
    }
}
