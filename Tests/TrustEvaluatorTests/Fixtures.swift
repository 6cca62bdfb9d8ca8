import Foundation
import Testing
import PincheckTestSupport
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// The committed test PKI (``TestPKI``) and what most engine tests build from it.
enum Fixtures {
    static let time = TestPKI.time
    static let root = TestCertificates.root
    static func path(_ relative: String) -> String { TestPKI.path(relative) }
    static func certificate(_ name: String) -> Certificate { TestPKI.certificate(name) }
    static func chain(_ name: String) -> [Certificate] { TestPKI.chain(name) }

    static let rsaRoot = certificate("rsa-root")
    static let ecRoot = certificate("ec-root")
    /// Both test roots: the anchors of most tests.
    static let anchors = try! TrustAnchors(certificates: [rsaRoot, ecRoot])

    /// `NAME sha256/…` lines of Certificates/pins.txt, computed by the openssl CLI.
    static func referenceLines(_ file: String) -> [String: String] {
        let text = try! String(contentsOfFile: path(file), encoding: .utf8)
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { result[String(parts[0])] = String(parts[1]) }
        }
        return result
    }
}

// MARK: Shared helpers for the TrustEvaluator tests

extension Fixtures {
    /// The host every served chain in Certificates/chains is made for.
    static let host = "www.example.test"

    /// Certificates/pins.txt: `NAME → sha256/…`, as the openssl CLI computed them.
    static let referencePins = referenceLines("pins.txt")
    /// Certificates/fingerprints.txt: `NAME → lowercase hex SHA-256 of the DER`.
    static let referenceFingerprints = referenceLines("fingerprints.txt")

    /// Every certificate name listed in pins.txt (one per `Certificates/*.pem`), sorted.
    static var pinnedNames: [String] { referencePins.keys.sorted() }

    static let rsaIntermediate = certificate("rsa-intermediate")
    static let attackerRoot = certificate("attacker-root")

    /// The default policy of most tests: chain and name required, the two test roots as anchors.
    static func policy(
        _ pinning: TrustPolicy.Pinning = .none,
        chainValidation: ValidationPolicy.ChainValidation = .required,
        nameValidation: ValidationPolicy.NameValidation = .required,
        additionalIntermediates: [Certificate] = [],
        maximumChainDepth: Int = 10,
        anchors: TrustAnchors = Fixtures.anchors
    ) -> TrustPolicy {
        TrustPolicy(pinning: pinning, anchors: anchors, chainValidation: chainValidation,
                    nameValidation: nameValidation, additionalIntermediates: additionalIntermediates,
                    maximumChainDepth: maximumChainDepth)
    }

    /// Public-key pinning of these certificates' SPKIs (read from pins.txt, not computed by the library).
    static func keyPins(_ names: String...) throws -> TrustPolicy.Pinning {
        .publicKeys(try PinnedPublicKeys(parsing: names.map { referencePins[$0]! }))
    }

    /// The same pins as a pin set's.
    static func keySet(_ names: String...) throws -> PinSet.Pins {
        .publicKeys(try PinnedPublicKeys(parsing: names.map { referencePins[$0]! }))
    }

    /// Certificate pinning of these certificates.
    static func certificatePins(_ names: String...) throws -> TrustPolicy.Pinning {
        .certificates(try PinnedCertificates(names.map(certificate)))
    }

    /// `Evaluator(policy:).evaluate(chain, host:, at: Fixtures.time)`.
    static func evaluate(_ policy: TrustPolicy, _ chain: [Certificate], host: String? = Fixtures.host) throws -> Verdict {
        try Evaluator(policy: policy).evaluate(chain, host: host, at: time)
    }

    /// The served chain `Certificates/chains/NAME.pem` evaluated under `policy`.
    static func evaluate(_ policy: TrustPolicy, chain name: String, host: String? = Fixtures.host) throws -> Verdict {
        try evaluate(policy, chain(name), host: host)
    }
}

extension Verdict {
    /// The failure codes, in order.
    var failureCodes: [Reason.Code] { failures.map(\.code) }
    /// The warning codes, in order.
    var warningCodes: [Reason.Code] { warnings.map(\.code) }

    /// The first failure with this code.
    func failure(_ code: Reason.Code) -> Reason? { failures.first { $0.code == code } }

    /// Everything that identifies an outcome, as a comparable value (Verdict itself is not Equatable).
    var summary: VerdictSummary {
        VerdictSummary(
            isTrusted: isTrusted,
            failures: failures.map { "\($0.code): \($0.message)" },
            warnings: warnings.map { "\($0.code): \($0.message)" },
            path: verifiedPath?.certificates.map(\.sha256Fingerprint),
            anchoring: verifiedPath?.anchoring,
            matchedPins: matchedPins.map { "\($0.pin)@\($0.depth)" },
            checkedHost: checkedHost)
    }

    /// A one-line account of the verdict for `#expect` comments.
    var explanation: Comment {
        Comment(rawValue: (failures + warnings).map(\.description).joined(separator: "\n"))
    }
}

/// A `Verdict` reduced to comparable values.
struct VerdictSummary: Hashable, Sendable {
    var isTrusted: Bool
    var failures: [String]
    var warnings: [String]
    var path: [[UInt8]]?
    var anchoring: VerifiedPath.Anchoring?
    var matchedPins: [String]
    var checkedHost: String?

    /// The same summary with warnings reduced to their codes.
    var warningsByCode: VerdictSummary {
        var copy = self
        copy.warnings = warnings.map { String($0.prefix { $0 != ":" }) }
        return copy
    }
}

/// Lowercase hex of bytes, as fingerprints.txt writes them.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
