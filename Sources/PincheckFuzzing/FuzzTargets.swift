import Foundation
import PincheckOpenSSL
import ServerTrust
import TrustEvaluator

/// The fuzz targets' logic, shared by the libFuzzer executables (`Sources/Fuzz*/main.swift`, built
/// with `-DFUZZING -sanitize=fuzzer,address` by `scripts/fuzz.sh`) and by the test suite, which
/// replays every corpus and regression input through the same functions.
///
/// A target may throw `PincheckError` (bad input is expected); it must never crash, hang, leak,
/// or break an oracle (which traps, so the fuzzer reports it).
public enum FuzzTargets {
    /// The names `scripts/fuzz.sh list` prints, with the function each runs.
    public static let all: [(name: String, run: @Sendable ([UInt8]) -> Void)] = [
        ("FuzzCertificate", certificate),
        ("FuzzChain", chain),
        ("FuzzConfiguration", configuration),
        ("FuzzRevocation", revocation),
        ("FuzzChallenge", challenge),
        ("FuzzTransparency", transparency),
    ]

    /// DER, PEM and PEM bundles, and every accessor on what parsed.
    public static func certificate(_ bytes: [UInt8]) {
        guard let certificates = try? Certificate.parseBundle(bytes, source: "fuzz") else { return }
        for certificate in certificates {
            _ = certificate.subject
            _ = certificate.issuer
            _ = certificate.serialNumber
            _ = certificate.notBefore
            _ = certificate.notAfter
            _ = certificate.subjectAlternativeNames
            _ = certificate.publicKey
            _ = certificate.isSelfSigned
            _ = certificate.isCertificateAuthority
            _ = certificate.publicKeySHA1Pin
            // Certificate Transparency: the embedded SCT list and the precertificate TBS.
            if case .list(let list) = certificate.handle.embeddedSCTs {
                _ = try? SignedCertificateTimestamp.parseList(list, source: .certificate)
                _ = certificate.handle.precertificateTBS
            }
            for url in certificate.handle.crlDistributionPointURLs {
                precondition(url.lowercased().hasPrefix("http://"), "only http distribution points are fetched")
            }
            let again = try? Certificate(derEncoded: certificate.derBytes)
            precondition(again == certificate, "a parsed certificate must parse again from its own DER")
            precondition(certificate.publicKeyPin.digest.count == 32)
        }
    }

    /// A fuzzed served chain evaluated against fixed anchors, for a fixed host, with pins — and
    /// the oracle: "trusted" means the verified path ends at a configured anchor (or pinned
    /// certificate) and, when pinning, contains a pinned key.
    public static func chain(_ bytes: [UInt8]) {
        guard let served = try? Certificate.parseBundle(bytes, source: "fuzz") else { return }
        let fixture = ChainFixture.shared
        for (policy, kind) in fixture.policies {
            guard let verdict = try? Evaluator(policy: policy).evaluate(served, host: "www.example.test", at: fixture.time) else { continue }
            guard verdict.isTrusted else {
                precondition(verdict.verifiedPath == nil && !verdict.failures.isEmpty, "an untrusted verdict carries reasons and no path")
                continue
            }
            guard let path = verdict.verifiedPath, let top = path.last else { preconditionFailure("trusted without a verified path") }
            precondition(path.first == served.first, "the verified path starts at the served leaf")
            switch kind {
            case .anchorsOnly:
                precondition(fixture.anchors.contains(top), "trusted path must end at an anchor")
            case .publicKeyPins:
                precondition(fixture.anchors.contains(top), "trusted path must end at an anchor")
                precondition(path.contains { fixture.pinnedKeys.contains($0.publicKeyPin) }, "trusted path must contain a pinned key")
            case .certificatePins:
                precondition(fixture.pinnedCertificates.contains(top), "certificate pinning anchors on a pinned certificate")
            }
        }
    }

    /// Pin strings, and the configuration decoder in every format (JSON, TrustKit, Android, OkHttp).
    public static func configuration(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline).prefix(64) {
            if let pin = try? PublicKeyPin(String(line)) {
                precondition(pin.digest.count == pin.algorithm.digestLength)
                precondition((try? PublicKeyPin(pin.description)) == pin, "a pin round-trips through its text")
            }
        }
        _ = try? Configuration.decode(Data(bytes), source: "fuzz", baseDirectory: "/nonexistent", publicSuffixes: ChainFixture.shared.publicSuffixes)
        for format in ConfigurationFormat.allCases {
            _ = try? ConfigurationImporter.pincheckJSON(from: Data(bytes), format: format, source: "fuzz")
        }
        // Pin-set updates: the bytes signed with a fixed key, so every check after the signature
        // runs (duplicate keys, the envelope, the configuration, the compiled-in floor).
        let fixture = ChainFixture.shared
        if let signature = try? Ed25519.sign(bytes, privateKeyPEM: fixture.updateKeyPEM).signature {
            let manager = UpdatableTrustManager(compiledIn: fixture.updateFloor, keys: [fixture.updateKey], at: fixture.time)
            if (try? manager.apply(document: bytes, signature: signature, at: fixture.time)) != nil {
                let policy = (try? manager.trustManager(at: fixture.time).policy(for: "www.example.test")) ?? nil
                precondition(policy?.pinSets.contains { $0.enforcement == .enforce } == true, "an accepted update never unpins a compiled-in host")
                precondition(manager.trustManager(at: fixture.time).allHostsMustBeEvaluated, "an accepted update never lets unlisted hosts through")
            }
        }
    }

    /// Stapled OCSP responses against a fixed chain; must never accept a revoked or garbage staple
    /// when stapling is required.
    public static func revocation(_ bytes: [UInt8]) {
        let fixture = ChainFixture.shared
        guard
            let verdict = try? fixture.revocationManager.evaluate(
                fixture.goodChain, host: "www.example.test", at: fixture.time, stapledOCSPResponse: bytes)
        else { return }
        precondition(Disposition(serverTrust: verdict).allowsConnection == verdict.isTrusted, "a verdict with failures never allows the connection")
        if verdict.isTrusted {
            precondition(verdict.verifiedPath != nil, "a trusted verdict names the path it trusted")
            precondition(!verdict.warnings.contains { $0.code == .revoked }, "a revoked staple is never only a warning")
            // Stapling is required, so the staple was judged fresh: the NIO staple cache, which keeps
            // a copy until `freshUntil`, must not think it stale already (five minutes of skew allowed).
            if let freshUntil = StapledOCSP.freshUntil(bytes, for: fixture.goodChain[0]) {
                precondition(freshUntil >= fixture.time.addingTimeInterval(-300), "a response judged fresh is not past its nextUpdate")
            }
        } else {
            _ = StapledOCSP.freshUntil(bytes, for: fixture.goodChain[0])
        }
        // The unverified reading the connection summary prints, by certificate ID.
        _ = StapledOCSP.read(bytes, about: fixture.goodChain[0], issuer: fixture.goodChain[1])
        distributionPointCRL(bytes)
    }

    /// The same bytes as the CRL at a leaf's distribution point, under a policy that refuses
    /// anything but a good answer: every reading of it (issuingDistributionPoint, entries,
    /// critical extensions) must hold, and a trusted verdict must rest on a good status.
    static func distributionPointCRL(_ bytes: [UInt8]) {
        guard let crl = try? CertificateRevocationList(derEncoded: bytes) else { return }
        let fixture = ChainFixture.shared
        let leaf = fixture.crlChain[0]
        _ = crl.handle.scope
        _ = crl.handle.isDelta
        _ = crl.handle.unhandledCriticalExtensions
        _ = crl.handle.entryCount
        _ = crl.handle.entry(for: leaf.handle)
        _ = crl.handle.isIssued(byNameOf: fixture.crlChain[1].handle)
        let lists = FetchedRevocationLists(byURL: [fixture.crlURL: .list(crl)])
        guard
            let verdict = try? fixture.crlManager.evaluate(
                fixture.crlChain, host: "www.example.test", at: fixture.time,
                stapledOCSPResponse: nil, revocationLists: lists)
        else { return }
        precondition(verdict.revocationStatuses.count == 1, "one distribution point, one answer")
        if verdict.isTrusted {
            precondition(verdict.revocationStatuses[0].outcome == .good, "a hard policy trusts only a good answer")
            precondition(crl.handle.signatureVerifies(withKeyOf: fixture.crlChain[1].handle), "a good answer comes from the issuer's CRL")
        }
        if verdict.revocationStatuses[0].outcome == .revoked { precondition(!verdict.isTrusted, "a revoked leaf is never trusted") }
    }
}

/// Fixed inputs for the chain and revocation targets: the committed test PKI in Certificates/,
/// found from this source file's path (fuzzing and replay both run from a checkout).
struct ChainFixture: Sendable {
    enum Kind { case anchorsOnly, publicKeyPins, certificatePins }

    static let shared = ChainFixture()

    let time = Date(timeIntervalSince1970: 1_906_502_400)  // 2030-06-01
    let anchors: [Certificate]
    let pinnedKeys: Set<PublicKeyPin>
    let pinnedCertificates: [Certificate]
    let policies: [(TrustPolicy, Kind)]
    let goodChain: [Certificate]
    let revocationManager: TrustManager
    /// A leaf whose distribution point is `crlURL`, and a manager that refuses it without a good CRL.
    let crlChain: [Certificate]
    let crlURL = "http://crl.pincheck.test/intermediate.crl"
    let crlManager: TrustManager
    let publicSuffixes = PublicSuffixList(text: "com\nuk\nco.uk\n")
    /// The key the configuration target signs update documents with, and the app it updates.
    let updateKeyPEM: [UInt8]
    let updateKey: PinSetVerificationKey
    let updateFloor: TrustManager
    /// One manager per CT policy (Chrome's, Apple's), enforced on every anchor's paths for
    /// www.example.test, knowing two logs whose keys are made at start-up (a Google v3 list dated
    /// the day before the fixture's time): what the transparency target's SCTs are judged by.
    let transparencyManagers: [TrustManager]

    init() {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Certificates")
        func load(_ name: String) -> Certificate { try! Certificate.load(contentsOf: directory.appendingPathComponent("\(name).pem").path)[0] }
        anchors = [load("rsa-root"), load("ec-root")]
        let anchorSet = try! TrustAnchors(certificates: anchors)
        pinnedKeys = [load("rsa-intermediate").publicKeyPin, load("ec-intermediate").publicKeyPin]
        pinnedCertificates = [load("rsa-intermediate")]
        policies = [
            (TrustPolicy(anchors: anchorSet), .anchorsOnly),
            (TrustPolicy(pinning: .publicKeys(try! PinnedPublicKeys(pins: pinnedKeys)), anchors: anchorSet), .publicKeyPins),
            (TrustPolicy(pinning: .certificates(try! PinnedCertificates(pinnedCertificates)), anchors: anchorSet), .certificatePins),
        ]
        goodChain = [load("rsa-leaf"), load("rsa-intermediate")]
        let host = HostPolicy(
            pattern: try! HostPattern("www.example.test", publicSuffixes: nil), pinSets: [],
            validation: ValidationPolicy(anchors: anchorSet), revocation: RevocationPolicy(requireStapledOCSP: true))
        revocationManager = TrustManager(policies: [host])
        crlChain = try! Certificate.load(contentsOf: directory.appendingPathComponent("crl-fetch/good-chain.pem").path)
        let crlHost = HostPolicy(
            pattern: try! HostPattern("www.example.test", publicSuffixes: nil), pinSets: [],
            validation: ValidationPolicy(anchors: anchorSet),
            revocation: RevocationPolicy(distributionPointCRLs: DistributionPointCRLs(failure: .hard)))
        crlManager = TrustManager(policies: [crlHost])
        let pair = try! Ed25519.generate()
        updateKeyPEM = Array(pair.privateKeyPEM.utf8)
        updateKey = try! PinSetVerificationKey(rawRepresentation: pair.publicKey)
        updateFloor = TrustManager(policies: [try! HostPolicy("www.example.test", policy: policies[1].0)])
        let logs = (0..<2).map { index in
            let key = try! CertificateTransparencyTestLog.makeKey()
            return
                #"{"description": "Fuzz \#(index)", "log_id": "\#(Data(Digest.sha256(key.spkiDER)).base64EncodedString())", "key": "\#(Data(key.spkiDER).base64EncodedString())", "url": "https://fuzz\#(index).test/", "mmd": 86400, "state": {"usable": {"timestamp": "2020-01-01T00:00:00Z"}}}"#
        }
        let operators = logs.enumerated().map { #"{"name": "Operator \#($0.offset)", "email": ["ct@fuzz.test"], "logs": [\#($0.element)]}"# }
        let json = #"{"version": "1.0", "log_list_timestamp": "2030-05-31T00:00:00Z", "operators": [\#(operators.joined(separator: ", "))]}"#
        let transparencyLogs = CertificateTransparency.Logs([try! CertificateTransparency.LogList(json: Array(json.utf8), source: "fuzz fixture")])
        transparencyManagers = CertificateTransparency.Policy.allCases.map { policy in
            var requirement = CertificateTransparency.Requirement(policy: policy, logs: transparencyLogs)
            requirement.scope = .everyAnchor
            var validation = TrustPolicy(anchors: anchorSet)
            validation.validation.certificateTransparency = requirement
            return TrustManager(policies: [try! HostPolicy("www.example.test", policy: validation)])
        }
    }
}

extension ChainFixture.Kind: Sendable {}
