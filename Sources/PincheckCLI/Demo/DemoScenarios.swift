import FoundationEssentials
import TrustEvaluator
import PincheckTLS

/// The demo's bundled policies.
enum DemoPolicy {
    case pinIntermediateKeys
    case pinIntermediateCertificate
    case pinLeafKey
    case pinLeafCertificate
    case pinECIntermediateKey
    case noPinning

    var title: String {
        switch self {
        case .pinIntermediateKeys: "public-key: both intermediate CAs"
        case .pinIntermediateCertificate: "certificate: RSA intermediate"
        case .pinLeafKey: "public-key: leaf only"
        case .pinLeafCertificate: "certificate: the leaf itself"
        case .pinECIntermediateKey: "public-key: ECDSA intermediate"
        case .noPinning: "none (chain + host)"
        }
    }

    func make() throws -> TrustPolicy {
        let anchors = try TrustAnchors(certificates: [try DemoScenario.certificate("rsa-root"), try DemoScenario.certificate("ec-root")])
        let pinning: TrustPolicy.Pinning
        switch self {
        case .pinIntermediateKeys:
            pinning = .publicKeys(
                try PinnedPublicKeys(certificates: [
                    try DemoScenario.certificate("rsa-intermediate"), try DemoScenario.certificate("ec-intermediate"),
                ]))
        case .pinIntermediateCertificate:
            pinning = .certificates(try PinnedCertificates([try DemoScenario.certificate("rsa-intermediate")]))
        case .pinLeafKey:
            pinning = .publicKeys(try PinnedPublicKeys(certificates: [try DemoScenario.certificate("rsa-leaf")]))
        case .pinLeafCertificate:
            pinning = .certificates(try PinnedCertificates([try DemoScenario.certificate("rsa-leaf")]))
        case .pinECIntermediateKey:
            pinning = .publicKeys(try PinnedPublicKeys(certificates: [try DemoScenario.certificate("ec-intermediate")]))
        case .noPinning:
            pinning = .none
        }
        return TrustPolicy(pinning: pinning, anchors: anchors)
    }
}

/// One demo case: a served chain, a policy, and the verdict it must get.
struct DemoScenario {
    static let host = "www.example.test"
    /// A fixed time inside every good certificate's validity, so the demo gives the same table forever.
    static let time = Date(timeIntervalSince1970: 1_906_502_400)  // 2030-06-01T00:00:00Z

    let title: String
    /// Why the row matters to someone choosing what to pin: one line under the table.
    let lesson: String
    let chain: [String]
    let policy: DemoPolicy
    let expectTrusted: Bool
    /// The OCSP response the server staples (a name in ``DemoCertificates/staples``), if any.
    var staple: String? = nil

    static let all: [DemoScenario] = [
        DemoScenario(
            title: "good RSA chain", lesson: "pinning the CA's key, not the leaf's, keeps working across every renewal the CA signs",
            chain: ["rsa-leaf", "rsa-intermediate"], policy: .pinIntermediateKeys, expectTrusted: true),
        DemoScenario(
            title: "good ECDSA chain", lesson: "one policy can pin two CAs (RSA and ECDSA): a backup pin is how a CA change stays possible",
            chain: ["ec-leaf", "ec-intermediate"], policy: .pinIntermediateKeys, expectTrusted: true),
        DemoScenario(
            title: "expired leaf", lesson: "a pin never overrides validity: a matching key on an expired certificate is still refused",
            chain: ["rsa-expired", "rsa-intermediate"], policy: .pinIntermediateKeys, expectTrusted: false),
        DemoScenario(
            title: "certificate for another host",
            lesson: "a pin never overrides the name check: any valid certificate of the pinned CA would do otherwise (CVE-2015-3996)",
            chain: ["rsa-wrong-host", "rsa-intermediate"], policy: .pinIntermediateKeys, expectTrusted: false),
        DemoScenario(
            title: "self-signed certificate", lesson: "without a pin the chain still has to lead to an anchor", chain: ["self-signed"],
            policy: .noPinning, expectTrusted: false),
        DemoScenario(
            title: "intermediate missing from the served chain",
            lesson:
                "a server that leaves out its intermediate fails here, as in OpenSSL, Go and most apps (browsers may hide it): fix the server's chain",
            chain: ["rsa-leaf"], policy: .noPinning, expectTrusted: false),
        DemoScenario(
            title: "pinned intermediate certificate",
            lesson: "certificate pinning (AFNetworking's mode) matches the whole certificate, so it must be renewed with the pin",
            chain: ["rsa-leaf", "rsa-intermediate"], policy: .pinIntermediateCertificate,
            expectTrusted: true),
        DemoScenario(
            title: "rotated leaf key, CA pinned", lesson: "a new leaf key is fine when the pin is on the CA",
            chain: ["rsa-leaf-rotated", "rsa-intermediate"], policy: .pinIntermediateKeys, expectTrusted: true),
        DemoScenario(
            title: "rotated leaf key, old leaf pinned",
            lesson: "pinning the leaf's key locks the app out on the first renewal with a new key: pin the CA, or keep a backup",
            chain: ["rsa-leaf-rotated", "rsa-intermediate"], policy: .pinLeafKey, expectTrusted: false),
        DemoScenario(
            title: "attacker chain + pinned CA appended",
            lesson: "pins match only the verified path: a pinned certificate appended to an attacker's chain counts for nothing",
            chain: ["attacker-leaf", "attacker-root", "rsa-intermediate"], policy: .pinIntermediateKeys,
            expectTrusted: false),
        DemoScenario(
            title: "valid chain, unpinned CA + pinned appended",
            lesson: "the same bypass with a valid chain: the appended pinned CA is not on the path, so the pin does not match",
            chain: ["rsa-leaf", "rsa-intermediate", "ec-intermediate"],
            policy: .pinECIntermediateKey, expectTrusted: false),
        DemoScenario(
            title: "good chain, stapled OCSP says revoked", lesson: "a revoked certificate is refused even when its pin matches",
            chain: ["rsa-leaf", "rsa-intermediate"], policy: .pinIntermediateKeys,
            expectTrusted: false, staple: "ocsp-revoked"),
        // AFNetworking's most common configuration: a pinned leaf certificate does not outvote a
        // revoked staple (revocation is judged on the path to the anchors in every mode).
        DemoScenario(
            title: "leaf certificate pinned, stapled OCSP says revoked",
            lesson: "in every pinning mode revocation is judged: a pinned leaf does not outvote its revocation",
            chain: ["rsa-leaf", "rsa-intermediate"], policy: .pinLeafCertificate,
            expectTrusted: false, staple: "ocsp-revoked"),
    ]

    static func certificate(_ name: String) throws -> Certificate {
        guard let pem = DemoCertificates.pem[name] else {
            throw PincheckError(.emptyInput, "the demo has no certificate named \(name)")
        }
        return try Certificate(pemEncoded: pem, source: "demo:\(name)")
    }

    static func staple(_ name: String) throws -> [UInt8] {
        guard let text = DemoCertificates.staples[name], let data = Data(base64Encoded: text) else {
            throw PincheckError(.emptyInput, "the demo has no OCSP response named \(name)")
        }
        return Array(data)
    }

    /// Serves the scenario's chain (and staple) from a local TLS server on 127.0.0.1 (an ephemeral
    /// port), takes what a real handshake delivers, and evaluates it with the scenario's policy.
    func run() throws -> DemoOutcome {
        let served = try chain.map(Self.certificate)
        guard let key = DemoCertificates.keys[chain[0]] else {
            throw PincheckError(.emptyInput, "the demo has no key for \(chain[0])")
        }
        let response = try staple.map(Self.staple)
        let server = try LocalTLSServer(chain: served, privateKeyPEM: key, stapledOCSPResponse: response)
        defer { server.stop() }
        let result = try TLSProbe(timeout: .seconds(5)).probe(ProbeTarget(host: "127.0.0.1", port: server.port), serverName: Self.host)
        let verdict = try Evaluator(policy: try policy.make()).evaluate(
            result.servedChain, host: Self.host, at: Self.time,
            stapledOCSPResponse: result.stapledOCSPResponse)
        return DemoOutcome(scenario: self, verdict: verdict, port: server.port, protocolVersion: result.protocolVersion)
    }
}

struct DemoOutcome {
    let scenario: DemoScenario
    let verdict: Verdict
    /// The local server's port and the negotiated protocol.
    let port: UInt16
    let protocolVersion: String

    var asExpected: Bool { verdict.isTrusted == scenario.expectTrusted }
}
