import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// DESIGN §2 as a table: pinning mode × allowInvalidCertificates × validatesDomainName × pins ×
/// served chain, for host www.example.test, anchors rsa-root + ec-root, at 2030-06-01.
///
/// The expected verdict of every row comes from ``Oracle``, written from DESIGN §2 and the
/// facts of Certificates/README.md without calling the library, and both the idiomatic API
/// (``TrustPolicy`` + ``Evaluator``) and the AFNetworking facade (``SecurityPolicy``) must give it.
@Suite("Evaluator: the AFSecurityPolicy decision table (DESIGN §2)")
struct EvaluatorTableTests {
    enum Mode: String, CaseIterable, Sendable { case none, certificate, publicKey }

    /// Which certificate is pinned.
    enum Pin: String, CaseIterable, Sendable {
        /// The served leaf itself.
        case leaf
        /// rsa-intermediate.
        case intermediate
        /// rsa-root.
        case root
        /// attacker-root: a CA that has nothing to do with the chain.
        case unrelated
        /// Nothing at all (only expressible through the facade).
        case none
    }

    /// The served chain (Certificates/chains/NAME.pem).
    enum Chain: String, CaseIterable, Sendable {
        case valid = "rsa-good"
        case selfSigned = "self-signed"
        case wrongHost = "rsa-wrong-host"
        case expired = "rsa-expired"
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let mode: Mode
        let allowInvalid: Bool
        let validatesDomainName: Bool
        let pin: Pin
        let chain: Chain

        var testDescription: String {
            "mode \(mode), allowInvalid \(allowInvalid), validatesDomainName \(validatesDomainName), pin \(pin), chain \(chain.rawValue)"
        }
    }

    static let rows: [Row] = Mode.allCases.flatMap { mode in
        [false, true].flatMap { allowInvalid in
            [true, false].flatMap { validatesDomainName in
                Pin.allCases.flatMap { pin in
                    Chain.allCases.map { chain in
                        Row(mode: mode, allowInvalid: allowInvalid, validatesDomainName: validatesDomainName, pin: pin, chain: chain)
                    }
                }
            }
        }
    }

    // MARK: The oracle

    /// What DESIGN §2 says a row must give.
    enum Expected: Equatable, CustomStringConvertible {
        /// Trusted; `path` is the verified path leaf first (nil: nothing was verified),
        /// `matchedDepth` the depth of the pinned certificate in it.
        case trusted(path: [Certificate]?, anchoring: VerifiedPath.Anchoring?, matchedDepth: Int?)
        /// Rejected, with this reason among the failures.
        case rejected(Reason.Code)

        var description: String {
            switch self {
            case .trusted(let path, let anchoring, let depth):
                "trusted (path \(path.map { $0.map(\.subject) } ?? []), \(anchoring.map(\.rawValue) ?? "no anchoring"), pin depth \(depth.map(String.init) ?? "-"))"
            case .rejected(let code): "rejected (\(code))"
            }
        }
    }

    /// DESIGN §2, step by step, over facts read from Certificates/README.md.
    enum Oracle {
        /// What the README says about each served chain.
        struct Facts {
            /// The leaf carries www.example.test in its subjectAltName.
            let namesHost: Bool
            /// Every certificate is inside its validity period at 2030-06-01.
            let inValidity: Bool
            /// The leaf is self-signed (so nothing else certifies it).
            let selfSigned: Bool
        }

        static func facts(_ chain: Chain) -> Facts {
            switch chain {
            case .valid: Facts(namesHost: true, inValidity: true, selfSigned: false)
            case .selfSigned: Facts(namesHost: true, inValidity: true, selfSigned: true)
            case .wrongHost: Facts(namesHost: false, inValidity: true, selfSigned: false)
            case .expired: Facts(namesHost: true, inValidity: false, selfSigned: false)
            }
        }

        /// The certificates that certify the leaf by signature, leaf first: leaf → rsa-intermediate
        /// → rsa-root for the RSA hierarchy, the leaf alone when it is self-signed.
        static func signaturePath(_ chain: Chain, leaf: Certificate) -> [Certificate] {
            facts(chain).selfSigned ? [leaf] : [leaf, Fixtures.rsaIntermediate, Fixtures.rsaRoot]
        }

        static func expected(_ row: Row, leaf: Certificate, pinned: Certificate?) -> Expected {
            let facts = facts(row.chain)
            let hostOK = !row.validatesDomainName || facts.namesHost
            let signaturePath = signaturePath(row.chain, leaf: leaf)
            let pinnedDepth = pinned.flatMap { signaturePath.firstIndex(of: $0) }

            // 1. Guard: a name check on an unvalidated chain needs pins.
            if row.allowInvalid && row.validatesDomainName && (row.mode == .none || row.pin == .none) {
                return .rejected(.selfSignedRequiresPinning)
            }
            // 7. A pinning mode with nothing pinned fails closed.
            if row.mode != .none && row.pin == .none { return .rejected(.noUsablePins) }

            // 2–4. Verification against the anchors: trust, validity, then the name.
            let anchorFailure: Reason.Code? =
                facts.selfSigned ? .selfSigned : !facts.inValidity ? .expired : !hostOK ? .hostMismatch : nil
            let anchoredPath = signaturePath   // leaf → rsa-intermediate → rsa-root when it verifies

            switch row.mode {
            case .none:
                // 3. Trusted iff allowInvalid or the chain verifies.
                if row.allowInvalid { return .trusted(path: nil, anchoring: nil, matchedDepth: nil) }
                if let anchorFailure { return .rejected(anchorFailure) }
                return .trusted(path: anchoredPath, anchoring: .trustAnchor, matchedDepth: nil)

            case .publicKey:
                // 4. The chain must verify first, unless allowInvalid.
                if !row.allowInvalid, let anchorFailure { return .rejected(anchorFailure) }
                // Pincheck's difference: with allowInvalid the name is still checked.
                if row.allowInvalid && !hostOK { return .rejected(.hostMismatch) }
                // 6. Some certificate that certifies the leaf has a pinned key.
                guard let pinnedDepth else { return .rejected(.pinMismatch) }
                return .trusted(path: signaturePath, anchoring: row.allowInvalid ? .signaturesOnly : .trustAnchor,
                                matchedDepth: pinnedDepth)

            case .certificate:
                if !row.allowInvalid, let anchorFailure { return .rejected(anchorFailure) }
                // 5. Re-verify with only the pinned certificate as anchor (partial chain): name and
                //    validity still apply, whatever allowInvalid says.
                if !hostOK { return .rejected(.hostMismatch) }
                if !facts.inValidity { return .rejected(.expired) }
                guard let pinnedDepth else { return .rejected(.pinMismatch) }
                return .trusted(path: Array(signaturePath[...pinnedDepth]), anchoring: .pinnedCertificate,
                                matchedDepth: pinnedDepth)
            }
        }
    }

    // MARK: Building both policies for a row

    static func pinnedCertificate(_ pin: Pin, leaf: Certificate) -> Certificate? {
        switch pin {
        case .leaf: leaf
        case .intermediate: Fixtures.rsaIntermediate
        case .root: Fixtures.rsaRoot
        case .unrelated: Fixtures.attackerRoot
        case .none: nil
        }
    }

    /// The idiomatic policy, or nil where it cannot be written (a pinning mode without pins).
    static func trustPolicy(_ row: Row, pinned: Certificate?) throws -> TrustPolicy? {
        let pinning: TrustPolicy.Pinning
        switch (row.mode, pinned) {
        case (.none, _): pinning = .none
        case (.certificate, let pinned?): pinning = .certificates(try PinnedCertificates([pinned]))
        // The key pin as the openssl CLI computed it, not as the library does.
        case (.publicKey, let pinned?): pinning = .publicKeys(try PinnedPublicKeys(parsing: [reference(pinned)]))
        case (_, nil): return nil
        }
        return Fixtures.policy(
            pinning,
            chainValidation: row.allowInvalid ? .disabled(because: "table row") : .required,
            nameValidation: row.validatesDomainName ? .required : .disabled(because: "table row"))
    }

    static func reference(_ certificate: Certificate) -> String {
        let name = Fixtures.referenceFingerprints.first { $0.value == hex(certificate.sha256Fingerprint) }!.key
        return Fixtures.referencePins[name]!
    }

    /// The facade, set up as AFNetworking code would. In mode none the pins are set anyway: they must be ignored.
    static func securityPolicy(_ row: Row, pinned: Certificate?) -> SecurityPolicy {
        let mode: SecurityPolicy.PinningMode = switch row.mode {
        case .none: .none
        case .certificate: .certificate
        case .publicKey: .publicKey
        }
        let policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: Set(pinned.map { [$0] } ?? []))
        policy.allowInvalidCertificates = row.allowInvalid
        policy.validatesDomainName = row.validatesDomainName
        policy.anchors = Fixtures.anchors
        return policy
    }

    // MARK: The table

    @Test("the oracle's table covers every combination")
    func tableIsComplete() {
        #expect(Self.rows.count == 3 * 2 * 2 * 5 * 4)
        #expect(Set(Self.rows.map(\.testDescription)).count == Self.rows.count)
        // The oracle is not trivially one-sided.
        let expectations = Self.rows.map { row in
            let leaf = Fixtures.chain(row.chain.rawValue)[0]
            return Oracle.expected(row, leaf: leaf, pinned: Self.pinnedCertificate(row.pin, leaf: leaf))
        }
        #expect(expectations.filter { if case .trusted = $0 { true } else { false } }.count >= 30)
        #expect(expectations.filter { if case .rejected = $0 { true } else { false } }.count >= 100)
    }

    @Test("both APIs give DESIGN §2's verdict", arguments: rows)
    func row(_ row: Row) throws {
        let served = Fixtures.chain(row.chain.rawValue)
        let leaf = served[0]
        let pinned = Self.pinnedCertificate(row.pin, leaf: leaf)
        let expected = Oracle.expected(row, leaf: leaf, pinned: pinned)

        var verdicts: [(api: String, verdict: Verdict)] = []
        if let policy = try Self.trustPolicy(row, pinned: pinned) {
            verdicts.append(("TrustPolicy", try Fixtures.evaluate(policy, served)))
        } else {
            // The idiomatic API cannot express a pinning mode with nothing pinned.
            #expect(row.mode != .none && row.pin == .none)
            switch row.mode {
            case .certificate: #expect(throws: PincheckError.self) { try PinnedCertificates([]) }
            case .publicKey: #expect(throws: PincheckError.self) { try PinnedPublicKeys(pins: []) }
            case .none: Issue.record("mode none never needs pins")
            }
            #expect(throws: PincheckError.self) { try Self.securityPolicy(row, pinned: pinned).trustPolicy() }
        }
        let facade = Self.securityPolicy(row, pinned: pinned)
        verdicts.append(("SecurityPolicy", try facade.evaluate(served, forDomain: Fixtures.host, at: Fixtures.time)))
        #expect(facade.evaluateServerTrust(served, forDomain: Fixtures.host, at: Fixtures.time) == verdicts.last!.verdict.isTrusted)

        for (api, verdict) in verdicts {
            switch expected {
            case .trusted(let path, let anchoring, let depth):
                #expect(verdict.isTrusted, "\(api): expected \(expected)")
                #expect(verdict.failures.isEmpty, "\(api): \(verdict.explanation)")
                #expect(verdict.verifiedPath?.certificates == path, "\(api): path")
                #expect(verdict.verifiedPath?.anchoring == anchoring, "\(api): anchoring")
                #expect(verdict.matchedPins.map(\.depth) == (depth.map { [$0] } ?? []), "\(api): matched pins")
                if let depth, let pinned {
                    #expect(verdict.matchedPins.first?.certificate == pinned)
                    #expect(verdict.verifiedPath?.certificates[depth] == pinned)
                }
                if row.mode == .certificate { #expect(verdict.verifiedPath?.certificates.last == pinned, "\(api): ends at the pin") }
                if anchoring == .trustAnchor { #expect(verdict.verifiedPath?.certificates.last == Fixtures.rsaRoot, "\(api): ends at the root") }
            case .rejected(let code):
                #expect(!verdict.isTrusted, "\(api): expected \(expected)")
                #expect(!verdict.failures.isEmpty)
                #expect(verdict.failureCodes.contains(code), "\(api): expected \(code) among \(verdict.failureCodes)")
                #expect(verdict.verifiedPath == nil, "\(api): an untrusted verdict has no verified path")
                #expect(verdict.matchedPins.isEmpty)
            }
            // A disabled check is always reported (the facade's no-pins rejection happens before any evaluation).
            if row.mode == .none || row.pin != .none {
                #expect(verdict.warningCodes.contains(.chainNotValidated) == row.allowInvalid, "\(api): chain-not-validated warning")
                #expect(verdict.warningCodes.contains(.hostNotChecked) == !row.validatesDomainName, "\(api): host-not-checked warning")
                #expect(verdict.checkedHost == (row.validatesDomainName ? Fixtures.host : nil))
            }
        }
        // Same answer, same reasons, whichever API.
        if verdicts.count == 2 {
            // (Warnings by code: the two APIs word the reason a check is disabled differently.)
            #expect(verdicts[0].verdict.summary.warningsByCode == verdicts[1].verdict.summary.warningsByCode)
        }
    }
}

@Suite("Evaluator: every key type and key rotation")
struct EvaluatorKeyTypeTests {
    @Test("every valid served chain is trusted, by anchor, by intermediate key and by intermediate certificate", arguments: [
        ("rsa-good", "rsa-intermediate", "rsa-root"), ("rsa-rotated", "rsa-intermediate", "rsa-root"),
        ("ec-good", "ec-intermediate", "ec-root"), ("ec-p384", "ec-intermediate", "ec-root"), ("ec-p521", "ec-intermediate", "ec-root"),
        ("ed25519", "ec-intermediate", "ec-root"), ("ed448", "ec-intermediate", "ec-root"),
    ])
    func validChains(chain: String, intermediate: String, root: String) throws {
        let served = Fixtures.chain(chain)
        for pinning in [TrustPolicy.Pinning.none, try Fixtures.keyPins(intermediate), try Fixtures.certificatePins(intermediate)] {
            let verdict = try Fixtures.evaluate(Fixtures.policy(pinning), served)
            #expect(verdict.isTrusted, verdict.explanation)
            #expect(verdict.verifiedPath?.first == served[0])
        }
        let anchored = try Fixtures.evaluate(Fixtures.policy(), served)
        #expect(anchored.verifiedPath?.certificates == [served[0], Fixtures.certificate(intermediate), Fixtures.certificate(root)])
        #expect(anchored.verifiedPath?.anchoring == .trustAnchor)
        // Pinning the other hierarchy's CA never passes.
        let other = intermediate == "rsa-intermediate" ? "ec-intermediate" : "rsa-intermediate"
        #expect(!(try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins(other)), served).isTrusted))
    }

    @Test("a DER leaf alone verifies once the intermediate is supplied")
    func derInput() throws {
        let served = try Certificate.load(contentsOf: Fixtures.path("chains/rsa-good.der"))
        #expect(!(try Fixtures.evaluate(Fixtures.policy(), served).isTrusted))
        #expect(try Fixtures.evaluate(Fixtures.policy(additionalIntermediates: [Fixtures.rsaIntermediate]), served).isTrusted)
    }

    @Test("after a leaf key rotation the leaf pin fails and the CA pin still passes")
    func rotation() throws {
        let rotated = Fixtures.chain("rsa-rotated")
        for pinning in [try Fixtures.keyPins("rsa-leaf"), try Fixtures.certificatePins("rsa-leaf")] {
            let verdict = try Fixtures.evaluate(Fixtures.policy(pinning), rotated)
            #expect(verdict.failureCodes == [.pinMismatch], verdict.explanation)
        }
        #expect(try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins("rsa-leaf", "rsa-intermediate")), rotated).isTrusted)
        #expect(try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins("rsa-leaf-rotated")), rotated).isTrusted)
    }
}
