import Foundation
import ServerTrust
import Testing
import TrustEvaluator

@Suite("Adapter rules (DESIGN §4)")
struct ChallengeAdapterTests {
    enum CredentialKind: Sendable { case none, serverTrust, password, identity }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let adapter: @Sendable () -> ChallengeAdapter
        let challenge: @Sendable () -> Challenge
        let disposition: Disposition
        let rule: ChallengeAdapter.Rule
        let credential: CredentialKind
        let trustedVerdict: Bool?    // nil: no verdict expected
        let errorCode: ServerTrustError.Code?
        var testDescription: String { name }
    }

    static let now: @Sendable () -> Date = { PKI.time }
    static let password = Credential(user: "alice", password: "s3cret", persistence: .forSession)
    /// A host's policy, with the date its pins stop applying.
    struct HostRule {
        let policy: TrustPolicy
        let expires: Date?
        init(_ policy: TrustPolicy, expires: Date? = nil) { self.policy = policy; self.expires = expires }
    }

    enum Unlisted { case refuse, defaultValidation(anchors: TrustAnchors) }

    static func manager(_ hosts: [String: HostRule], unlisted: Unlisted = .refuse) -> TrustManager {
        let policies = hosts.map { try! HostPolicy($0.key, policy: $0.value.policy, expires: $0.value.expires) }
        switch unlisted {
        case .refuse:
            return TrustManager(policies: policies, allHostsMustBeEvaluated: true, defaultValidation: ValidationPolicy(anchors: PKI.anchors))
        case .defaultValidation(let anchors):
            return TrustManager(policies: policies, allHostsMustBeEvaluated: false, defaultValidation: ValidationPolicy(anchors: anchors))
        }
    }
    static let pinnedHost = manager(["www.example.test": .init(PKI.pinned(PKI.intermediate))])

    static let rows: [Row] = [
        Row(name: "pinned and trusted → useCredential + server trust",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, now: now) }, challenge: { PKI.serverTrust() },
            disposition: .useCredential, rule: .trusted, credential: .serverTrust, trustedVerdict: true, errorCode: nil),
        Row(name: "policy without pinning, trusted → useCredential",
            adapter: { ChallengeAdapter(trustManager: manager(["www.example.test": .init(TrustPolicy(anchors: PKI.anchors))]), now: now) },
            challenge: { PKI.serverTrust() },
            disposition: .useCredential, rule: .trusted, credential: .serverTrust, trustedVerdict: true, errorCode: nil),
        Row(name: "pin mismatch → cancel, verdict reaches the caller",
            adapter: { ChallengeAdapter(trustManager: manager(["www.example.test": .init(PKI.pinned(PKI.certificate("attacker-root")))]), now: now) },
            challenge: { PKI.serverTrust() },
            disposition: .cancelAuthenticationChallenge, rule: .untrusted, credential: .none, trustedVerdict: false, errorCode: .untrusted),
        Row(name: "wrong host for a pinned policy → cancel",
            adapter: { ChallengeAdapter(trustManager: manager(["www.example.test": .init(PKI.pinned(PKI.intermediate))]), now: now) },
            challenge: { PKI.serverTrust(chain: [PKI.certificate("rsa-wrong-host"), PKI.intermediate]) },
            disposition: .cancelAuthenticationChallenge, rule: .untrusted, credential: .none, trustedVerdict: false, errorCode: .untrusted),
        Row(name: "empty chain → cancel, evaluation failed",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, now: now) }, challenge: { PKI.serverTrust(chain: []) },
            disposition: .cancelAuthenticationChallenge, rule: .evaluationFailed, credential: .none, trustedVerdict: nil, errorCode: .evaluationFailed),
        Row(name: "unlisted host, allowed → performDefaultHandling, default validation ran and passed",
            adapter: { ChallengeAdapter(trustManager: manager([:], unlisted: .defaultValidation(anchors: PKI.anchors)), now: now) },
            challenge: { PKI.serverTrust() },
            disposition: .performDefaultHandling, rule: .unlistedDefaultHandling, credential: .none, trustedVerdict: true, errorCode: nil),
        Row(name: "unlisted host, allowed, default validation fails → cancel with the failing verdict (fail closed)",
            adapter: { ChallengeAdapter(trustManager: manager([:], unlisted: .defaultValidation(anchors: PKI.anchors)), now: now) },
            challenge: { PKI.serverTrust(host: "evil.example.test") },
            disposition: .cancelAuthenticationChallenge, rule: .unlistedDefaultHandling, credential: .none, trustedVerdict: false, errorCode: .untrusted),
        Row(name: "expired pin set → no policy applies → performDefaultHandling",
            adapter: { ChallengeAdapter(trustManager: manager(["www.example.test": .init(PKI.pinned(PKI.certificate("attacker-root")), expires: PKI.time.addingTimeInterval(-1))],
                                                               unlisted: .defaultValidation(anchors: PKI.anchors)), now: now) },
            challenge: { PKI.serverTrust() },
            disposition: .performDefaultHandling, rule: .unlistedDefaultHandling, credential: .none, trustedVerdict: true, errorCode: nil),
        Row(name: "unlisted host, refused → cancel",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, now: now) }, challenge: { PKI.serverTrust(host: "other.example.test") },
            disposition: .cancelAuthenticationChallenge, rule: .unlistedRefused, credential: .none, trustedVerdict: false, errorCode: .hostNotListed),
        Row(name: "allow invalid certificates → useCredential for server trust, even an attacker's chain",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, invalidCertificates: .allow(because: "test server"), now: now) },
            challenge: { PKI.serverTrust(chain: [PKI.certificate("attacker-leaf")]) },
            disposition: .useCredential, rule: .allowInvalidCertificates, credential: .serverTrust, trustedVerdict: nil, errorCode: nil),
        Row(name: "allow invalid certificates does not answer basic auth",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, invalidCertificates: .allow(because: "test server"), now: now) },
            challenge: { PKI.http() },
            disposition: .cancelAuthenticationChallenge, rule: .noCredential, credential: .none, trustedVerdict: nil, errorCode: .missingCredential),
        Row(name: "basic, first attempt, configured credential → useCredential",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, credential: password, now: now) }, challenge: { PKI.http() },
            disposition: .useCredential, rule: .firstAttemptCredential, credential: .password, trustedVerdict: nil, errorCode: nil),
        Row(name: "digest, first attempt, proposed credential only → useCredential",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, now: now) }, challenge: { PKI.http(.httpDigest, proposed: password) },
            disposition: .useCredential, rule: .firstAttemptCredential, credential: .password, trustedVerdict: nil, errorCode: nil),
        Row(name: "basic, no credential, cancel configured (SDWebImage) → cancel",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, missingCredential: .cancel, now: now) }, challenge: { PKI.http() },
            disposition: .cancelAuthenticationChallenge, rule: .noCredential, credential: .none, trustedVerdict: nil, errorCode: .missingCredential),
        Row(name: "digest, no credential, default handling configured (Alamofire) → performDefaultHandling",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, missingCredential: .performDefaultHandling, now: now) }, challenge: { PKI.http(.httpDigest) },
            disposition: .performDefaultHandling, rule: .noCredential, credential: .none, trustedVerdict: nil, errorCode: nil),
        Row(name: "basic, previous failure, cancel configured → cancel (no loop)",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, credential: password, afterFailure: .cancel, now: now) }, challenge: { PKI.http(failures: 1) },
            disposition: .cancelAuthenticationChallenge, rule: .retryAfterFailure, credential: .none, trustedVerdict: nil, errorCode: .credentialRejected),
        Row(name: "basic, previous failure, reject configured → rejectProtectionSpace (no loop)",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, credential: password, afterFailure: .rejectProtectionSpace, now: now) }, challenge: { PKI.http(failures: 3) },
            disposition: .rejectProtectionSpace, rule: .retryAfterFailure, credential: .none, trustedVerdict: nil, errorCode: .credentialRejected),
        Row(name: "client certificate with an identity → useCredential",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, clientIdentity: Credential(certificates: [PKI.certificate("rsa-client-only")], privateKey: PrivateKeyMaterial(bytes: [1, 2, 3]), persistence: .forSession), now: now) },
            challenge: { PKI.http(.clientCertificate) },
            disposition: .useCredential, rule: .clientIdentity, credential: .identity, trustedVerdict: nil, errorCode: nil),
        Row(name: "client certificate without an identity → performDefaultHandling",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, now: now) }, challenge: { PKI.http(.clientCertificate) },
            disposition: .performDefaultHandling, rule: .clientIdentity, credential: .none, trustedVerdict: nil, errorCode: nil),
        Row(name: "other method → performDefaultHandling",
            adapter: { ChallengeAdapter(trustManager: pinnedHost, credential: password, now: now) }, challenge: { PKI.http(.default) },
            disposition: .performDefaultHandling, rule: .otherMethod, credential: .none, trustedVerdict: nil, errorCode: nil),
    ]

    @Test("each rule gives its disposition, credential, verdict and error", arguments: rows)
    func rule(_ row: Row) async {
        let decision = await row.adapter().handle(row.challenge())
        #expect(decision.disposition == row.disposition)
        #expect(decision.rule == row.rule)
        let kind: CredentialKind = switch decision.credential?.kind {
        case nil: .none
        case .serverTrust?: .serverTrust
        case .password?: .password
        case .identity?: .identity
        }
        #expect(kind == row.credential)
        #expect(decision.verdict?.isTrusted == row.trustedVerdict)
        #expect(decision.error?.code == row.errorCode)
        if row.rule == .untrusted {
            #expect(decision.verdict?.failures.isEmpty == false, "the reasons reach the caller")
        }
    }

    enum OverrideCase: String, Sendable, CaseIterable { case disposition, credential, error, willCallCompletion, notHandled }

    @Test("an override handler answers first", arguments: OverrideCase.allCases)
    func override(_ which: OverrideCase) async {
        let stored = Stored()
        let adapter = ChallengeAdapter(trustManager: Self.pinnedHost, override: { _, completion in
            switch which {
            case .disposition: return .disposition(.rejectProtectionSpace, nil)
            case .credential: return .credential(Self.password)
            case .error: return .error(CancellationError())
            case .notHandled: return .notHandled
            case .willCallCompletion:
                stored.keep(completion)
                Task.detached { stored.take()?(.useCredential, Self.password) }
                return .willCallCompletion
            }
        }, now: Self.now)
        let decision = await adapter.handle(PKI.serverTrust())
        switch which {
        case .disposition: #expect(decision.disposition == .rejectProtectionSpace && decision.rule == .override)
        case .credential: #expect(decision.disposition == .useCredential && decision.credential?.user == "alice")
        case .error: #expect(decision.disposition == .cancelAuthenticationChallenge && decision.error?.code == .handlerError)
        case .willCallCompletion: #expect(decision.disposition == .useCredential && decision.rule == nil)
        case .notHandled: #expect(decision.disposition == .useCredential && decision.rule == .trusted)
        }
    }

    @Test("a 401 without WWW-Authenticate is not a challenge; with one, method and realm are read")
    func httpChallenge() {
        #expect(Challenge.http(response: FailureResponse(statusCode: 401), host: "h", port: 80, protocol: "http") == nil)
        #expect(Challenge.http(response: FailureResponse(statusCode: 200, headers: ["WWW-Authenticate": "Basic"]), host: "h", port: 80, protocol: "http") == nil)
        let basic = Challenge.http(response: FailureResponse(statusCode: 401, headers: ["www-authenticate": "Basic realm=\"vault\""]), host: "h", port: 80, protocol: "http")
        #expect(basic?.protectionSpace.authenticationMethod == .httpBasic)
        #expect(basic?.protectionSpace.realm == "vault")
        let digest = Challenge.http(response: FailureResponse(statusCode: 401, headers: ["WWW-Authenticate": "Digest realm=\"x\", nonce=\"1\""]), host: "h", port: 80, protocol: "http")
        #expect(digest?.protectionSpace.authenticationMethod == .httpDigest)
    }

    @Test("default handling for basic uses the URL's user first, then storage's default, else nothing")
    func defaultHandling() throws {
        let storage = try CredentialStorage()
        let challenge = PKI.http()
        #expect(ChallengeAdapter.defaultCredential(for: challenge, url: URL(string: "https://api.example.test/"), storage: storage) == nil)
        try storage.set(Credential(user: "bob", password: "pw", persistence: .forSession), for: challenge.protectionSpace)
        #expect(ChallengeAdapter.defaultCredential(for: challenge, url: URL(string: "https://api.example.test/"), storage: storage)?.user == "bob")
        #expect(ChallengeAdapter.defaultCredential(for: challenge, url: URL(string: "https://carol:pw2@api.example.test/"), storage: storage)?.user == "carol")
    }

    @Test("raw values match Foundation's")
    func rawValues() {
        #expect(Disposition.allCases.map(\.rawValue) == [0, 1, 2, 3])
        #expect(Persistence.allCases.map(\.rawValue) == [0, 1, 2])
        #expect(AuthenticationMethod.httpBasic.rawValue == "NSURLAuthenticationMethodHTTPBasic")
        #expect(AuthenticationMethod.all.filter(\.isSessionWide) == [.serverTrust, .clientCertificate, .ntlm, .negotiate])
    }
}

@Suite("Adapter: a stapled OCSP response travels with the server trust and is judged")
struct ChallengeAdapterStapleTests {
    @Test("a revoked staple for a leaf issued by the root cancels the challenge; without it the chain is trusted")
    func revokedStaple() throws {
        let leaf = PKI.certificate("revocation/rsa-direct-leaf")
        let staple = Array(try Data(contentsOf: URL(fileURLWithPath: PKI.path("revocation/ocsp-direct-revoked.der"))))
        let manager = TrustManager(policies: [try HostPolicy("www.example.test", policy: TrustPolicy(anchors: try TrustAnchors(certificates: [PKI.root])))],
                                   allHostsMustBeEvaluated: true, defaultValidation: ValidationPolicy(anchors: PKI.anchors))
        let adapter = ChallengeAdapter(trustManager: manager, now: { PKI.time })
        func challenge(_ staple: [UInt8]?) -> Challenge {
            Challenge(protectionSpace: ProtectionSpace(host: "www.example.test", port: 443, authenticationMethod: .serverTrust,
                                                       serverTrust: PeerTrust(servedChain: [leaf], stapledOCSPResponse: staple)))
        }
        let revoked = adapter.decide(challenge(staple))
        #expect(revoked.disposition == .cancelAuthenticationChallenge)
        #expect(revoked.verdict?.failures.map(\.code) == [.revoked])
        let plain = adapter.decide(challenge(nil))
        #expect(plain.disposition == .useCredential)
    }

    /// AFNetworking's most common configuration: the leaf itself pinned as a certificate. The
    /// pin does not outvote the staple, with chain validation on or off.
    @Test("with the leaf certificate-pinned, a revoked staple still cancels the challenge", arguments: [true, false])
    func pinnedLeafRevokedStaple(validatesChain: Bool) throws {
        let leaf = PKI.certificate("revocation/rsa-direct-leaf")
        let staple = Array(try Data(contentsOf: URL(fileURLWithPath: PKI.path("revocation/ocsp-direct-revoked.der"))))
        let policy = TrustPolicy(pinning: .certificates(try PinnedCertificates([leaf])), anchors: try TrustAnchors(certificates: [PKI.root]),
                                 chainValidation: validatesChain ? .required : .disabled(because: "self-signed pinning"))
        let adapter = ChallengeAdapter(trustManager: TrustManager(policies: [try HostPolicy("www.example.test", policy: policy)],
                                                                  defaultValidation: ValidationPolicy(anchors: PKI.anchors)),
                                       now: { PKI.time })
        func challenge(_ staple: [UInt8]?) -> Challenge {
            Challenge(protectionSpace: ProtectionSpace(host: "www.example.test", port: 443, authenticationMethod: .serverTrust,
                                                       serverTrust: PeerTrust(servedChain: [leaf], stapledOCSPResponse: staple)))
        }
        let revoked = adapter.decide(challenge(staple))
        #expect(revoked.disposition == .cancelAuthenticationChallenge)
        #expect(revoked.verdict?.failures.map(\.code).contains(.revoked) == true, "\(String(describing: revoked.verdict?.failures))")
        #expect(adapter.decide(challenge(nil)).disposition == .useCredential)
    }
}

/// A source that pins the intermediate until a switch-over time and the attacker's root after it.
private struct SwitchingSource: TrustManagerSource {
    let before: TrustManager, after: TrustManager, switchOver: Date
    func trustManager(at time: Date) -> TrustManager { time < switchOver ? before : after }
}

@Suite("ChallengeAdapter with a TrustManagerSource")
struct TrustManagerSourceTests {
    static func manager(pinning pin: Certificate) throws -> TrustManager {
        TrustManager(policies: [try HostPolicy("www.example.test", policy: PKI.pinned(pin))], allHostsMustBeEvaluated: true,
                     defaultValidation: ValidationPolicy(anchors: PKI.anchors))
    }

    @Test("each challenge is judged by the manager the source gives at the adapter's time")
    func managerAtTheChallengesTime() throws {
        let source = SwitchingSource(before: try Self.manager(pinning: PKI.intermediate),
                                     after: try Self.manager(pinning: PKI.certificate("attacker-root")),
                                     switchOver: PKI.time.addingTimeInterval(60))
        let clock = Box<Date>()
        clock.append(PKI.time)
        let adapter = ChallengeAdapter(trustManagerSource: source, now: { clock.all.last! })
        let before = adapter.decide(PKI.serverTrust())
        #expect(before.disposition == .useCredential)
        clock.append(PKI.time.addingTimeInterval(120))
        let after = adapter.decide(PKI.serverTrust())
        #expect(after.disposition == .cancelAuthenticationChallenge)
        #expect(after.verdict?.failures.map(\.code) == [.pinMismatch])
        #expect(adapter.updatableTrustManager == nil, "a source of the app's own is not an UpdatableTrustManager")
    }

    @Test("a TrustManager is its own source, and updatableTrustManager sets the source")
    func managerIsItsOwnSource() throws {
        let manager = try Self.manager(pinning: PKI.intermediate)
        let adapter = ChallengeAdapter(trustManagerSource: manager, now: { PKI.time })
        #expect(adapter.decide(PKI.serverTrust()).disposition == .useCredential)
        var updatable = ChallengeAdapter(trustManager: manager, now: { PKI.time })
        let updates = UpdatableTrustManager(compiledIn: try Self.manager(pinning: PKI.certificate("attacker-root")), keys: [], at: PKI.time)
        updatable.updatableTrustManager = updates
        #expect(updatable.trustManagerSource is UpdatableTrustManager)
        #expect(updatable.decide(PKI.serverTrust()).disposition == .cancelAuthenticationChallenge, "judged by the source, not trustManager")
    }
}
