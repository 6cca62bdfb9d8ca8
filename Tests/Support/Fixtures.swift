import Foundation
import Testing
import TrustEvaluatorCore
import TrustEvaluatorFormats

/// The committed test PKI (``TestPKI``) and what most engine tests build from it.
package enum Fixtures {
    package static let time = TestPKI.time
    package static let root = TestCertificates.root
    package static func path(_ relative: String) -> String { TestPKI.path(relative) }
    package static func certificate(_ name: String) -> Certificate { TestPKI.certificate(name) }
    package static func chain(_ name: String) -> [Certificate] { TestPKI.chain(name) }

    package static let rsaRoot = certificate("rsa-root")
    package static let ecRoot = certificate("ec-root")
    /// Both test roots: the anchors of most tests.
    package static let anchors = try! TrustAnchors(certificates: [rsaRoot, ecRoot])

    /// `NAME sha256/…` lines of Certificates/pins.txt, computed by the openssl CLI.
    package static func referenceLines(_ file: String) -> [String: String] {
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
    package static let host = "www.example.test"

    /// Certificates/pins.txt: `NAME → sha256/…`, as the openssl CLI computed them.
    package static let referencePins = referenceLines("pins.txt")
    /// Certificates/fingerprints.txt: `NAME → lowercase hex SHA-256 of the DER`.
    package static let referenceFingerprints = referenceLines("fingerprints.txt")

    /// Every certificate name listed in pins.txt (one per `Certificates/*.pem`), sorted.
    package static var pinnedNames: [String] { referencePins.keys.sorted() }

    /// A slice of the Public Suffix List, enough for the host-pattern and importer tests.
    package static let psl = PublicSuffixList(text: """
        // A slice of the Public Suffix List
        com
        net
        uk
        co.uk
        *.ck
        !www.ck
        s3.amazonaws.com
        *.compute.amazonaws.com
        github.io
        """)

    package static let rsaIntermediate = certificate("rsa-intermediate")
    package static let attackerRoot = certificate("attacker-root")

    /// The default policy of most tests: chain and name required, the two test roots as anchors.
    package static func policy(
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
    package static func keyPins(_ names: String...) throws -> TrustPolicy.Pinning {
        .publicKeys(try PinnedPublicKeys(parsing: names.map { referencePins[$0]! }))
    }

    /// The same pins as a pin set's.
    package static func keySet(_ names: String...) throws -> PinSet.Pins {
        .publicKeys(try PinnedPublicKeys(parsing: names.map { referencePins[$0]! }))
    }

    /// Certificate pinning of these certificates.
    package static func certificatePins(_ names: String...) throws -> TrustPolicy.Pinning {
        .certificates(try PinnedCertificates(names.map(certificate)))
    }

    /// `Evaluator(policy:).evaluate(chain, host:, at: Fixtures.time)`.
    package static func evaluate(_ policy: TrustPolicy, _ chain: [Certificate], host: String? = Fixtures.host) throws -> Verdict {
        try Evaluator(policy: policy).evaluate(chain, host: host, at: time)
    }

    /// The served chain `Certificates/chains/NAME.pem` evaluated under `policy`.
    package static func evaluate(_ policy: TrustPolicy, chain name: String, host: String? = Fixtures.host) throws -> Verdict {
        try evaluate(policy, chain(name), host: host)
    }
}

extension Verdict {
    /// The failure codes, in order.
    package var failureCodes: [Reason.Code] { failures.map(\.code) }
    /// The warning codes, in order.
    package var warningCodes: [Reason.Code] { warnings.map(\.code) }

    /// The first failure with this code.
    package func failure(_ code: Reason.Code) -> Reason? { failures.first { $0.code == code } }

    /// Everything that identifies an outcome, as a comparable value (Verdict itself is not Equatable).
    package var summary: VerdictSummary {
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
    package var explanation: Comment {
        Comment(rawValue: (failures + warnings).map(\.description).joined(separator: "\n"))
    }
}

/// A `Verdict` reduced to comparable values.
package struct VerdictSummary: Hashable, Sendable {
    package var isTrusted: Bool
    package var failures: [String]
    package var warnings: [String]
    package var path: [[UInt8]]?
    package var anchoring: VerifiedPath.Anchoring?
    package var matchedPins: [String]
    package var checkedHost: String?

    /// The same summary with warnings reduced to their codes.
    package var warningsByCode: VerdictSummary {
        var copy = self
        copy.warnings = warnings.map { String($0.prefix { $0 != ":" }) }
        return copy
    }
}

/// Lowercase hex of bytes, as fingerprints.txt writes them.
package func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
