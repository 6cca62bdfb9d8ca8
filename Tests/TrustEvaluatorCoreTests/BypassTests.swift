import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Each known bypass of DESIGN §2 and §5, and the x509-limbo-style hardening of §5, as its own test.
@Suite("Known bypasses and hardening (DESIGN §2, §5)")
struct BypassTests {
    typealias Pinning = TrustPolicy.Pinning
    static let disabled = ValidationPolicy.ChainValidation.disabled(because: "test server")
    static let noName = ValidationPolicy.NameValidation.disabled(because: "test")

    /// The pinning modes, each pinning `names` (nil: no pinning).
    enum Mode: String, CaseIterable, Sendable {
        case none, certificate, publicKey

        func pinning(_ names: [String]) throws -> Pinning {
            switch self {
            case .none: .none
            case .certificate: .certificates(try PinnedCertificates(names.map(Fixtures.certificate)))
            case .publicKey: .publicKeys(try PinnedPublicKeys(parsing: names.map { Fixtures.referencePins[$0]! }))
            }
        }
    }

    private func expectRejected(_ verdict: Verdict, _ code: Reason.Code? = nil, _ comment: Comment? = nil,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!verdict.isTrusted, "\(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
        #expect(verdict.verifiedPath == nil, sourceLocation: sourceLocation)
        #expect(verdict.matchedPins.isEmpty, sourceLocation: sourceLocation)
        if let code {
            #expect(verdict.failureCodes.contains(code), "expected \(code) in \(verdict.failureCodes) \(comment?.rawValue ?? "")",
                    sourceLocation: sourceLocation)
        }
    }

    // MARK: DESIGN §2's list

    @Test("AFNetworking 2.5.1: the default policy rejects a self-signed certificate for the right host")
    func afnetworking251() throws {
        let facade = SecurityPolicy.defaultPolicy()
        #expect(facade.pinningMode == .none && !facade.allowInvalidCertificates && facade.validatesDomainName)
        facade.anchors = Fixtures.anchors
        let served = Fixtures.chain("self-signed")
        #expect(served[0].dnsNames == [Fixtures.host])   // it really is for the right host

        let viaFacade = try facade.evaluate(served, forDomain: Fixtures.host, at: Fixtures.time)
        expectRejected(viaFacade, .selfSigned)
        #expect(!facade.evaluateServerTrust(served, forDomain: Fixtures.host, at: Fixtures.time))
        let idiomatic = try Fixtures.evaluate(TrustPolicy(anchors: Fixtures.anchors), served)
        expectRejected(idiomatic, .selfSigned)
        // Also when the caller forgets the host.
        expectRejected(try facade.evaluate(served, forDomain: nil, at: Fixtures.time), .selfSigned)
    }

    @Test("CVE-2015-3996: a CA-valid certificate for another host is rejected in every mode unless domain validation is off",
          arguments: [(Mode.none, false), (.certificate, false), (.certificate, true), (.publicKey, false), (.publicKey, true)])
    func cve2015_3996(mode: Mode, allowInvalid: Bool) throws {
        let pinning = try mode.pinning(["rsa-intermediate"])
        let chainValidation: ValidationPolicy.ChainValidation = allowInvalid ? Self.disabled : .required
        let served = Fixtures.chain("rsa-wrong-host")

        let checked = try Fixtures.evaluate(Fixtures.policy(pinning, chainValidation: chainValidation), served)
        expectRejected(checked, .hostMismatch)
        let reason = try #require(checked.failure(.hostMismatch))
        #expect(reason.evidence.hostRequested == Fixtures.host)
        #expect(reason.evidence.namesPresented == ["other.example.test"])

        let unchecked = try Fixtures.evaluate(Fixtures.policy(pinning, chainValidation: chainValidation, nameValidation: Self.noName), served)
        #expect(unchecked.isTrusted, unchecked.explanation)
        #expect(unchecked.warningCodes.contains(.hostNotChecked))
    }

    @Test("CVE-2016-2402: a pinned CA appended to an unpinned but valid chain does not count")
    func cve2016_2402() throws {
        let served = Fixtures.chain("unpinned-ca-with-pinned-appended")
        let ecIntermediate = Fixtures.certificate("ec-intermediate")
        #expect(served.contains(ecIntermediate))

        for chainValidation in [ValidationPolicy.ChainValidation.required, Self.disabled] {
            let verdict = try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins("ec-intermediate"), chainValidation: chainValidation), served)
            expectRejected(verdict, .pinMismatch, "\(chainValidation)")
            #expect(verdict.warningCodes.contains(.pinOutsideVerifiedPath), "\(chainValidation): \(verdict.explanation)")
            let warning = verdict.warnings.first { $0.code == .pinOutsideVerifiedPath }
            #expect(warning?.message.contains(ecIntermediate.subject) == true)
        }
        for chainValidation in [ValidationPolicy.ChainValidation.required, Self.disabled] {
            let verdict = try Fixtures.evaluate(Fixtures.policy(try Fixtures.certificatePins("ec-intermediate"), chainValidation: chainValidation), served)
            expectRejected(verdict, .pinMismatch, "certificate mode, \(chainValidation)")
            #expect(verdict.warningCodes.contains(.pinOutsideVerifiedPath), "certificate mode, \(chainValidation): \(verdict.explanation)")
        }
        // Control: pinning the CA that really issued the leaf passes on the same served chain.
        #expect(try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins("rsa-intermediate")), served).isTrusted)
        #expect(try Fixtures.evaluate(Fixtures.policy(try Fixtures.certificatePins("rsa-intermediate")), served).isTrusted)
    }

    @Test("a pinned path through a non-CA intermediate is rejected",
          arguments: [Mode.publicKey, .certificate], [false, true])
    func nonCAIntermediate(mode: Mode, allowInvalid: Bool) throws {
        for pins in [["rsa-nonca-intermediate"], ["rsa-root"], ["rsa-nonca-intermediate", "rsa-root"]] {
            let policy = Fixtures.policy(try mode.pinning(pins), chainValidation: allowInvalid ? Self.disabled : .required)
            let verdict = try Fixtures.evaluate(policy, chain: "rsa-nonca")
            expectRejected(verdict, allowInvalid ? nil : .invalidCA, "pins \(pins)")
        }
    }

    @Test("a non-CA without keyUsage cannot issue, even with chain validation disabled (basicConstraints attack)",
          arguments: [(Mode.none, false), (.publicKey, false), (.publicKey, true), (.certificate, false), (.certificate, true)])
    func basicConstraintsAttack(mode: Mode, allowInvalid: Bool) throws {
        let pinning: Pinning = switch mode {
        case .none: .none
        case .certificate: .certificates(try PinnedCertificates([EmbeddedPKI.root]))
        case .publicKey: .publicKeys(try PinnedPublicKeys(certificates: [EmbeddedPKI.root]))
        }
        let policy = Fixtures.policy(pinning, chainValidation: allowInvalid ? Self.disabled : .required, anchors: EmbeddedPKI.anchors)
        // Control: a leaf the root really issued passes, so the embedded signatures are sound.
        let control = try Fixtures.evaluate(policy, [EmbeddedPKI.leaf])
        #expect(control.isTrusted, control.explanation)

        let attack = try Fixtures.evaluate(policy, [EmbeddedPKI.issuedByNonCA, EmbeddedPKI.nonCAWithoutKeyUsage])
        // Public-key mode without chain validation finds no signature path to the pinned root;
        // everywhere else OpenSSL refuses the non-CA issuer.
        expectRejected(attack, mode == .publicKey && allowInvalid ? .pinMismatch : .invalidCA)
    }

    @Test("a pinned path through a pathLen-violating intermediate is rejected",
          arguments: [Mode.publicKey, .certificate], [false, true])
    func pathLengthViolation(mode: Mode, allowInvalid: Bool) throws {
        for pins in [["rsa-intermediate"], ["rsa-root"], ["rsa-intermediate", "rsa-root"]] {
            let policy = Fixtures.policy(try mode.pinning(pins), chainValidation: allowInvalid ? Self.disabled : .required)
            let verdict = try Fixtures.evaluate(policy, chain: "rsa-pathlen")
            expectRejected(verdict, allowInvalid && mode == .publicKey ? nil : .pathLengthExceeded, "pins \(pins)")
        }
    }

    @Test("public-key mode with allowInvalid: an attacker's leaf followed by the real pinned CA is rejected",
          arguments: [ValidationPolicy.NameValidation.required, .disabled(because: "test")])
    func attackerLeafWithPinnedCA(nameValidation: ValidationPolicy.NameValidation) throws {
        let served = Fixtures.chain("attacker-with-pinned-ca")
        let pinning = try Fixtures.keyPins("rsa-intermediate", "rsa-root")
        let verdict = try Fixtures.evaluate(Fixtures.policy(pinning, chainValidation: Self.disabled, nameValidation: nameValidation), served)
        expectRejected(verdict, .pinMismatch)
        // Only the attacker's leaf certifies itself: the served CA certificates did not sign it.
        #expect(verdict.failure(.pinMismatch)?.evidence.pinsOfPath == [served[0].publicKeyPin])
        #expect(verdict.warningCodes.filter { $0 == .pinOutsideVerifiedPath }.count == 2)
        // And through the facade, as AFNetworking code would configure it.
        let facade = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [Fixtures.rsaIntermediate, Fixtures.rsaRoot])
        facade.allowInvalidCertificates = true
        facade.validatesDomainName = nameValidation == .required
        facade.anchors = Fixtures.anchors
        #expect(!facade.evaluateServerTrust(served, forDomain: Fixtures.host, at: Fixtures.time))
    }

    @Test("the attacker's chain with the real CA appended is rejected in every mode without allowInvalid", arguments: Mode.allCases)
    func attackerChainValidated(mode: Mode) throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(try mode.pinning(["rsa-intermediate"])), chain: "attacker-with-pinned-ca")
        expectRejected(verdict, .unknownIssuer)
        expectRejected(try Fixtures.evaluate(Fixtures.policy(try mode.pinning(["rsa-root"])), chain: "attacker"))
    }

    @Test("an expired leaf whose key is pinned is rejected unless allowInvalid (public-key mode only)",
          arguments: [(Mode.publicKey, false, false), (.publicKey, true, true), (.certificate, false, false), (.certificate, true, false), (.none, false, false)])
    func expiredPinnedLeaf(mode: Mode, allowInvalid: Bool, trusted: Bool) throws {
        let policy = Fixtures.policy(try mode.pinning(["rsa-expired"]), chainValidation: allowInvalid ? Self.disabled : .required)
        let verdict = try Fixtures.evaluate(policy, chain: "rsa-expired")
        if trusted {
            #expect(verdict.isTrusted, verdict.explanation)
            #expect(verdict.verifiedPath?.anchoring == .signaturesOnly)
            #expect(verdict.matchedPins.map(\.depth) == [0])
        } else {
            expectRejected(verdict, .expired)
        }
    }

    @Test("a not-yet-valid leaf is rejected, its key pinned or not", arguments: [Mode.none, .certificate, .publicKey])
    func notYetValid(mode: Mode) throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(try mode.pinning(["rsa-not-yet-valid"])), chain: "rsa-not-yet-valid")
        expectRejected(verdict, .notYetValid)
    }

    // MARK: Names (DESIGN §5 hardening)

    @Test("the subject CN is never used as a name")
    func commonNameIgnored() throws {
        let served = Fixtures.chain("rsa-cn-only")
        #expect(served[0].subject.contains("CN=\(Fixtures.host)"))
        expectRejected(try Fixtures.evaluate(Fixtures.policy(), served), .hostMismatch)
        expectRejected(try Fixtures.evaluate(Fixtures.policy(try Fixtures.certificatePins("rsa-cn-only"), chainValidation: Self.disabled), served), .hostMismatch)
        expectRejected(try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins("rsa-cn-only"), chainValidation: Self.disabled), served), .hostMismatch)
        // Without a name to check the chain itself is fine.
        #expect(try Fixtures.evaluate(Fixtures.policy(), served, host: nil).isTrusted)
    }

    @Test("a partial wildcard (w*.example.test) never matches", arguments: ["wxyz.example.test", "w.example.test", "www.example.test"])
    func partialWildcardCertificate(host: String) throws {
        let served = [EmbeddedPKI.partialWildcardLeaf]
        #expect(served[0].dnsNames.contains("w*.example.test"))
        let policy = Fixtures.policy(anchors: EmbeddedPKI.anchors)
        // Control: the certificate's exact name passes.
        #expect(try Fixtures.evaluate(policy, served, host: "exact.example.test").isTrusted)
        expectRejected(try Fixtures.evaluate(policy, served, host: host), .hostMismatch)
        let pinned = Fixtures.policy(.publicKeys(try PinnedPublicKeys(certificates: served)), chainValidation: Self.disabled, anchors: EmbeddedPKI.anchors)
        expectRejected(try Fixtures.evaluate(pinned, served, host: host), .hostMismatch, "public-key mode, chain not validated")
    }

    @Test("a host containing a wildcard is not a host", arguments: ["*.example.test", "w*.example.test", "*"])
    func wildcardHost(host: String) throws {
        let error = #expect(throws: PincheckError.self) { try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-wildcard", host: host) }
        #expect(error?.code == .invalidHost)
    }

    @Test("*.example.test matches exactly one extra label", arguments: [
        ("www.example.test", true), ("a.example.test", true), ("a.b.example.test", false), ("example.test", false), ("www.example.tes", false),
    ])
    func wildcardCertificate(host: String, matches: Bool) throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-wildcard", host: host)
        if matches { #expect(verdict.isTrusted, verdict.explanation) } else { expectRejected(verdict, .hostMismatch) }
    }

    @Test("IP subjectAltNames match only their own address", arguments: [
        ("127.0.0.1", nil), ("::1", nil), ("[::1]", nil), ("0:0:0:0:0:0:0:1", nil), ("localhost", nil),
        ("127.0.0.2", Reason.Code.ipAddressMismatch), ("[::2]", .ipAddressMismatch), ("127.0.0.1.example.test", .hostMismatch),
    ] as [(String, Reason.Code?)])
    func ipAddresses(host: String, failure: Reason.Code?) throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-ip", host: host)
        if let failure { expectRejected(verdict, failure) } else { #expect(verdict.isTrusted, verdict.explanation) }
        // The same address must not pass as the DNS name of another certificate.
        if failure == nil && host != "localhost" {
            expectRejected(try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-good", host: host), .ipAddressMismatch)
        }
    }

    @Test("host names are normalised: case and one trailing dot", arguments: ["WWW.Example.TEST.", "www.example.test.", " www.EXAMPLE.test "])
    func hostNormalisation(host: String) throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-good", host: host)
        #expect(verdict.isTrusted, verdict.explanation)
        #expect(verdict.checkedHost == Fixtures.host)
    }

    // MARK: Paths (DESIGN §5)

    @Test("junk in the middle of the served chain does not matter")
    func junkInTheMiddle() throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "with-junk")
        #expect(verdict.isTrusted, verdict.explanation)
        #expect(verdict.verifiedPath?.certificates == [Fixtures.certificate("rsa-leaf"), Fixtures.rsaIntermediate, Fixtures.rsaRoot])
        #expect(verdict.servedChain.count == 3)
    }

    @Test("a missing intermediate is a chain error, fixed only by configuration (no AIA fetching)")
    func missingIntermediate() throws {
        let rejected = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-leaf-only")
        expectRejected(rejected, .unknownIssuer)
        #expect(!rejected.failureCodes.contains(.pinMismatch))
        // With pinning too, it is a chain error, not a pin error.
        expectRejected(try Fixtures.evaluate(Fixtures.policy(try Fixtures.keyPins("rsa-intermediate")), chain: "rsa-leaf-only"), .unknownIssuer)

        let supplied = try Fixtures.evaluate(Fixtures.policy(additionalIntermediates: [Fixtures.rsaIntermediate]), chain: "rsa-leaf-only")
        #expect(supplied.isTrusted, supplied.explanation)
        #expect(supplied.verifiedPath?.certificates == [Fixtures.certificate("rsa-leaf"), Fixtures.rsaIntermediate, Fixtures.rsaRoot])
        let suppliedAndPinned = try Fixtures.evaluate(
            Fixtures.policy(try Fixtures.keyPins("rsa-intermediate"), additionalIntermediates: [Fixtures.rsaIntermediate]), chain: "rsa-leaf-only")
        #expect(suppliedAndPinned.isTrusted, suppliedAndPinned.explanation)
    }

    @Test("a certificate for the wrong purpose (clientAuth only) is rejected")
    func wrongPurpose() throws {
        expectRejected(try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-client-only"), .wrongPurpose)
        expectRejected(try Fixtures.evaluate(Fixtures.policy(try Fixtures.certificatePins("rsa-client-only"), chainValidation: Self.disabled), chain: "rsa-client-only"), .wrongPurpose)
    }

    @Test("a name outside the issuer's name constraints is rejected, a name inside is accepted")
    func nameConstraints() throws {
        expectRejected(try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-nc-violating"), .nameConstraints)
        expectRejected(try Fixtures.evaluate(Fixtures.policy(nameValidation: Self.noName), chain: "rsa-nc-violating"), .nameConstraints)
        let inside = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-nc-good", host: "www.allowed.test")
        #expect(inside.isTrusted, inside.explanation)
    }

    @Test("a valid 4-certificate chain is accepted")
    func deepChain() throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(), chain: "rsa-deep")
        #expect(verdict.isTrusted, verdict.explanation)
        #expect(verdict.verifiedPath?.count == 4)
        #expect(verdict.verifiedPath?.last == Fixtures.rsaRoot)
    }

    @Test("maximumChainDepth counts intermediates between leaf and anchor, as OpenSSL's depth", arguments: [
        ("rsa-good", 0, false), ("rsa-good", 1, true), ("rsa-deep", 1, false), ("rsa-deep", 2, true),
    ])
    func maximumDepth(chain: String, depth: Int, trusted: Bool) throws {
        let verdict = try Fixtures.evaluate(Fixtures.policy(maximumChainDepth: depth), chain: chain)
        if trusted { #expect(verdict.isTrusted, verdict.explanation) } else { expectRejected(verdict, .tooLong) }
    }

    @Test("maximumChainDepth also bounds pinned paths", arguments: [Mode.certificate, .publicKey], [false, true])
    func maximumDepthWithPins(mode: Mode, allowInvalid: Bool) throws {
        let policy = Fixtures.policy(try mode.pinning(["rsa-root"]), chainValidation: allowInvalid ? Self.disabled : .required, maximumChainDepth: 0)
        expectRejected(try Fixtures.evaluate(policy, chain: "rsa-good"))
    }

    @Test("a pin of a served certificate outside the verified path never counts", arguments: [Mode.certificate, .publicKey], [false, true])
    func pinOutsidePath(mode: Mode, allowInvalid: Bool) throws {
        let policy = Fixtures.policy(try mode.pinning(["attacker-root"]), chainValidation: allowInvalid ? Self.disabled : .required)
        let verdict = try Fixtures.evaluate(policy, chain: "with-junk")
        expectRejected(verdict, .pinMismatch)
        #expect(verdict.warningCodes.contains(.pinOutsideVerifiedPath), verdict.explanation)
    }
}
