import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// The parsed-certificate cache and the verdict cache: a cached answer is the answer a fresh
/// evaluation gives, at every verification time, including either side of every validity boundary.
@Suite("caches")
struct CachingTests {
    // MARK: Verdict cache: cached == uncached

    /// Two verdicts say the same thing: same reasons, same path, same pins, same time and chain.
    static func expectSame(_ cached: Verdict, _ fresh: Verdict, _ context: String) {
        #expect(cached.isTrusted == fresh.isTrusted, "\(context)")
        #expect(cached.failures == fresh.failures, "\(context)")
        #expect(cached.warnings == fresh.warnings, "\(context)")
        #expect(cached.verifiedPath?.certificates == fresh.verifiedPath?.certificates, "\(context)")
        #expect(cached.verifiedPath?.anchoring == fresh.verifiedPath?.anchoring, "\(context)")
        #expect(cached.matchedPins == fresh.matchedPins, "\(context)")
        #expect(cached.checkedHost == fresh.checkedHost, "\(context)")
        #expect(cached.evaluationTime == fresh.evaluationTime, "\(context)")
        #expect(cached.servedChain == fresh.servedChain, "\(context)")
    }

    /// Every second at which something becomes or stops being valid, and its neighbours.
    static func times(around certificates: [Certificate], lists: [CertificateRevocationList] = []) -> [Date] {
        var instants: Set<Int64> = [Int64(Fixtures.time.timeIntervalSince1970)]
        let boundaries = certificates.flatMap { [$0.handle.notBeforeSeconds, $0.handle.notAfterSeconds] }
            + lists.flatMap { [$0.handle.lastUpdateSeconds] + ($0.handle.nextUpdateSeconds.map { [$0] } ?? []) }
        for boundary in boundaries {
            for offset in [-86_400, -1, 0, 1, 2, 86_400] as [Int64] { instants.insert(boundary + offset) }
        }
        return instants.sorted().map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// Evaluates `chain` at every time around its boundaries, forwards, backwards and shuffled,
    /// through one caching evaluator, and compares each answer with a fresh evaluation.
    static func expectCachedEqualsUncached(_ policy: TrustPolicy, chain: [Certificate], host: String?,
                                           lists: [CertificateRevocationList] = [], _ context: String) throws -> Int {
        let cache = VerdictCache()
        let cached = Evaluator(policy: policy, verdictCache: cache)
        let fresh = Evaluator(policy: policy)
        var pinned: [Certificate] = []
        if case .certificates(let certificates) = policy.pinning { pinned = certificates.certificates }
        let instants = times(around: chain + policy.validation.anchors.certificates + pinned, lists: lists)
        var generator = SplitMix(seed: 2030)
        let orders = [instants, instants.reversed(), instants.shuffled(using: &generator)]
        var hits = 0
        for order in orders {
            for time in order {
                let before = cache.count
                let answer = try cached.evaluate(chain, host: host, at: time)
                if cache.count == before { hits += 1 }
                expectSame(answer, try fresh.evaluate(chain, host: host, at: time), "\(context) at \(Timestamp.iso8601(time))")
            }
        }
        return hits
    }

    @Test("a cached verdict equals a fresh one on either side of every validity boundary", arguments: [
        "rsa-good", "rsa-expired", "rsa-not-yet-valid", "rsa-deep", "ec-good", "rsa-wrong-host", "self-signed",
    ])
    func boundaries(chain name: String) throws {
        let chain = Fixtures.chain(name)
        let policies: [(String, TrustPolicy)] = [
            ("none", Fixtures.policy()),
            ("public-key", Fixtures.policy(try Fixtures.keyPins("rsa-intermediate", "ec-intermediate"))),
            ("certificate", Fixtures.policy(.certificates(try PinnedCertificates([Fixtures.rsaIntermediate])))),
            ("allow-invalid", Fixtures.policy(try Fixtures.keyPins("rsa-intermediate", "ec-intermediate"),
                                              chainValidation: .disabled(because: "test"))),
        ]
        var hits = 0
        for (label, policy) in policies {
            hits += try Self.expectCachedEqualsUncached(policy, chain: chain, host: Fixtures.host, "\(name), \(label)")
        }
        // The cache was really used: most times fall inside a window seen before.
        #expect(hits > 0)
    }

    @Test("CRL validity bounds a cached verdict like certificate validity")
    func crlBoundaries() throws {
        let lists = try ["crl-intermediate-revokes-leaf", "crl-root-empty"].flatMap {
            try CertificateRevocationList.load(contentsOf: Fixtures.path("revocation/\($0).pem"))
        }
        var policy = Fixtures.policy()
        policy.validation.revocationLists = lists
        policy.validation.revocationScope = .wholeChain
        let hits = try Self.expectCachedEqualsUncached(policy, chain: Fixtures.chain("rsa-good"), host: Fixtures.host,
                                                       lists: lists, "rsa-good with CRLs")
        #expect(hits > 0)
    }

    @Test("a verdict is not reused across the expiry of the leaf")
    func expiryIsNotCrossed() throws {
        let chain = Fixtures.chain("rsa-expired")
        let evaluator = Evaluator(policy: Fixtures.policy(), verdictCache: VerdictCache())
        let notAfter = Date(timeIntervalSince1970: TimeInterval(chain[0].handle.notAfterSeconds))
        let valid = try evaluator.evaluate(chain, host: Fixtures.host, at: notAfter)
        let expired = try evaluator.evaluate(chain, host: Fixtures.host, at: notAfter.addingTimeInterval(1))
        #expect(valid.isTrusted)
        #expect(expired.failures.map(\.code) == [.expired])
    }

    @Test("another host, another chain or another evaluator never hits an entry")
    func keys() throws {
        let cache = VerdictCache()
        let good = Fixtures.chain("rsa-good")
        let policy = Fixtures.policy()
        let evaluator = Evaluator(policy: policy, verdictCache: cache)
        #expect(try evaluator.evaluate(good, host: Fixtures.host, at: Fixtures.time).isTrusted)
        #expect(cache.count == 1)
        // Same chain, another name: judged afresh (and rejected).
        #expect(try !evaluator.evaluate(good, host: "other.example.test", at: Fixtures.time).isTrusted)
        // A different chain for the same host.
        #expect(try !evaluator.evaluate(Fixtures.chain("rsa-wrong-host"), host: Fixtures.host, at: Fixtures.time).isTrusted)
        // A stricter policy sharing the cache must not see the first evaluator's verdict.
        let pinned = Evaluator(policy: Fixtures.policy(try Fixtures.keyPins("ec-intermediate")), verdictCache: cache)
        #expect(try !pinned.evaluate(good, host: Fixtures.host, at: Fixtures.time).isTrusted)
        #expect(cache.count == 4)
        // The same inputs again: a hit, trusted as before.
        #expect(try evaluator.evaluate(good, host: Fixtures.host, at: Fixtures.time.addingTimeInterval(3600)).isTrusted)
        #expect(cache.count == 4)
    }

    @Test("a policy with a stapled OCSP response is never cached")
    func timeDependentChecksAreNotCached() throws {
        let cache = VerdictCache()
        let evaluator = Evaluator(policy: Fixtures.policy(), verdictCache: cache)
        _ = try evaluator.evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: Fixtures.time, stapledOCSPResponse: [0x30, 0x00])
        #expect(cache.count == 0)
        // Without a response nothing depends on time, and the verdict is cached.
        _ = try evaluator.evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: Fixtures.time, stapledOCSPResponse: nil)
        #expect(cache.count == 1)
    }

    @Test("a trust manager takes the evaluator's caches: a second evaluation is a hit with the same verdict and rule")
    func trustManagerHits() throws {
        let cache = VerdictCache()
        let certificates = CertificateCache()
        let sets = [PinSet(try Fixtures.keySet("rsa-intermediate", "ec-intermediate")),
                    PinSet(try Fixtures.keySet("attacker-root"), enforcement: .reportOnly)]
        let policy = HostPolicy(pattern: try HostPattern(Fixtures.host, publicSuffixes: nil), pinSets: sets,
                                validation: ValidationPolicy(anchors: Fixtures.anchors))
        let manager = TrustManager(policies: [policy], certificateCache: certificates, verdictCache: cache)
        let der = Fixtures.chain("rsa-good").map(\.derBytes)
        let first = try manager.evaluate(derEncoded: der, host: Fixtures.host, at: Fixtures.time)
        #expect(cache.count == 1)
        #expect(certificates.count == 2)
        let second = try manager.evaluate(derEncoded: der, host: Fixtures.host, at: Fixtures.time.addingTimeInterval(60))
        #expect(cache.count == 1, "the second evaluation is a hit, not a new entry")
        #expect(second.isTrusted && first.isTrusted)
        #expect(second.coverage == .hostPolicy && second.hostPolicy?.pattern == policy.pattern)
        #expect(second.reportOnlyFailures.map(\.code) == [.pinMismatch])
        #expect(second.evaluationTime == Fixtures.time.addingTimeInterval(60))
    }

    @Test("a pin set's expiry bounds a cached verdict: after it, default validation decides")
    func pinSetExpiryBoundsTheCache() throws {
        let expiry = Fixtures.time.addingTimeInterval(3_600)
        let wrongPins = PinSet(try Fixtures.keySet("attacker-root"), expires: expiry)
        let policy = HostPolicy(pattern: try HostPattern(Fixtures.host, publicSuffixes: nil), pinSets: [wrongPins],
                                validation: ValidationPolicy(anchors: Fixtures.anchors))
        let cached = TrustManager(policies: [policy], verdictCache: VerdictCache())
        let fresh = TrustManager(policies: [policy])
        let chain = Fixtures.chain("rsa-good")
        for time in [expiry.addingTimeInterval(-1), expiry, expiry.addingTimeInterval(1), expiry.addingTimeInterval(-1)] {
            let hit = try cached.evaluate(chain, host: Fixtures.host, at: time)
            let reference = try fresh.evaluate(chain, host: Fixtures.host, at: time)
            #expect(hit.isTrusted == reference.isTrusted, "\(time)")
            #expect(hit.coverage == reference.coverage, "\(time)")
            #expect(hit.isTrusted == (time >= expiry), "the wrong pins apply until they expire")
        }
        #expect(try fresh.evaluate(chain, host: Fixtures.host, at: expiry).coverage == .pinSetExpired)
    }

    @Test("the cache stays within its capacity, dropping the least recently used verdict")
    func capacity() throws {
        let cache = VerdictCache(capacity: 2)
        let evaluator = Evaluator(policy: Fixtures.policy(), verdictCache: cache)
        let good = Fixtures.chain("rsa-good")
        for index in 0..<20 {
            _ = try evaluator.evaluate(good, host: "host\(index).example.test", at: Fixtures.time)
        }
        #expect(cache.count <= cache.capacity)
        #expect(cache.capacity >= 2)
    }

    // MARK: Parsed-certificate cache

    @Test("the certificate cache returns the certificate parsed the first time")
    func certificateCache() throws {
        let cache = CertificateCache(capacity: 8)
        let der = Fixtures.rsaIntermediate.derBytes
        let first = try cache.certificate(derEncoded: der)
        let second = try cache.certificate(derEncoded: der)
        #expect(first.handle === second.handle)
        #expect(first == Fixtures.rsaIntermediate)
        #expect(first.sha256Fingerprint == Fixtures.rsaIntermediate.sha256Fingerprint)
        #expect(cache.count == 1)
    }

    @Test("a certificate hashed at first use equals, and hashes as, the one the cache hashed, read from many threads at once")
    func fingerprintAtFirstUse() async throws {
        let der = Fixtures.certificate("rsa-leaf").derBytes
        let cached = try CertificateCache(capacity: 2).certificate(derEncoded: der)
        let fresh = try Certificate(derEncoded: der)
        #expect(fresh.handle !== cached.handle)
        let fingerprints = await withTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<16 { group.addTask { fresh.sha256Fingerprint } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(fingerprints.count == 16)
        #expect(Set(fingerprints) == Set([cached.sha256Fingerprint]))
        #expect(fresh == cached && fresh.hashValue == cached.hashValue)
        #expect(Set<Certificate>([fresh, cached]).count == 1)
        #expect(try Certificate(derEncoded: Fixtures.rsaIntermediate.derBytes) != fresh)
    }

    @Test("malformed DER is rejected every time and never cached")
    func certificateCacheRejects() throws {
        let cache = CertificateCache()
        var broken = Fixtures.rsaIntermediate.derBytes
        broken.removeLast(10)
        for _ in 0..<2 {
            #expect(throws: PincheckError.self) { try cache.certificate(derEncoded: broken) }
            #expect(throws: PincheckError.self) { try cache.certificate(derEncoded: []) }
        }
        #expect(cache.count == 0)
    }

    @Test("the certificate cache is bounded")
    func certificateCacheCapacity() throws {
        let cache = CertificateCache(capacity: 3)
        for name in ["rsa-root", "rsa-intermediate", "rsa-leaf", "ec-root", "ec-intermediate", "ec-leaf", "rsa-expired"] {
            _ = try cache.certificate(derEncoded: Fixtures.certificate(name).derBytes)
        }
        #expect(cache.count <= cache.capacity)
    }

    @Test("DER in: the cached and the uncached evaluator agree, and a bad certificate names its position")
    func derEvaluation() throws {
        let policy = Fixtures.policy(try Fixtures.keyPins("rsa-intermediate"))
        let cached = Evaluator(policy: policy, certificateCache: CertificateCache(), verdictCache: VerdictCache())
        let plain = Evaluator(policy: policy)
        for name in ["rsa-good", "rsa-wrong-host", "attacker-with-pinned-ca"] {
            let der = Fixtures.chain(name).map(\.derBytes)
            for _ in 0..<2 {
                Self.expectSame(try cached.evaluate(derEncoded: der, host: Fixtures.host, at: Fixtures.time),
                                try plain.evaluate(derEncoded: der, host: Fixtures.host, at: Fixtures.time), name)
            }
        }
        let bad = [Fixtures.chain("rsa-good")[0].derBytes, [0x30, 0x03, 0x02, 0x01]]
        for evaluator in [cached, plain] {
            #expect(throws: PincheckError.self) { try evaluator.evaluate(derEncoded: bad, host: Fixtures.host, at: Fixtures.time) }
            #expect(throws: PincheckError.self) { try evaluator.evaluate(derEncoded: [], host: Fixtures.host, at: Fixtures.time) }
        }
        do {
            _ = try plain.evaluate(derEncoded: bad, host: Fixtures.host, at: Fixtures.time)
        } catch {
            #expect(error.source == "served certificate 1")
        }
    }

    @Test("concurrent evaluations through shared caches give the uncached answers")
    func concurrency() async throws {
        let policy = Fixtures.policy(try Fixtures.keyPins("rsa-intermediate", "ec-intermediate"))
        let certificates = CertificateCache(capacity: 4)
        let verdicts = VerdictCache(capacity: 4)
        let cached = Evaluator(policy: policy, certificateCache: certificates, verdictCache: verdicts)
        let names = ["rsa-good", "ec-good", "rsa-wrong-host", "rsa-expired", "rsa-deep", "attacker"]
        let expected = try names.map { try Evaluator(policy: policy).evaluate(Fixtures.chain($0), host: Fixtures.host, at: Fixtures.time).isTrusted }
        let ders = names.map { Fixtures.chain($0).map(\.derBytes) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for round in 0..<60 {
                        let index = (task + round) % names.count
                        let verdict = try cached.evaluate(derEncoded: ders[index], host: Fixtures.host, at: Fixtures.time)
                        #expect(verdict.isTrusted == expected[index], "\(names[index])")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(certificates.count <= certificates.capacity)
        #expect(verdicts.count <= verdicts.capacity)
    }

    @Test("the LRU storage evicts the least recently used key")
    func lruOrder() {
        var storage = LRUStorage<Int, String>(capacity: 2)
        storage.insert("a", for: 1)
        storage.insert("b", for: 2)
        _ = storage.value(for: 1)          // 1 is now the most recently used
        storage.insert("c", for: 3)        // evicts 2
        #expect(storage.value(for: 2) == nil)
        #expect(storage.value(for: 1) == "a")
        #expect(storage.value(for: 3) == "c")
        storage.removeValue(for: 1)
        storage.insert("d", for: 4)
        #expect(storage.count == 2)
        #expect(storage.value(for: 3) == "c")
        #expect(storage.value(for: 4) == "d")
    }
}

/// A small deterministic generator, so the shuffled order is the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("verification times out of range")
struct ExtremeTimeTests {
    @Test("NaN and infinite times never trap, and fail closed", arguments: [
        TimeInterval.nan, .infinity, -.infinity, 1e300, -1e300,
    ])
    func extremes(seconds: TimeInterval) throws {
        let time = Date(timeIntervalSince1970: seconds)
        for cache in [nil, VerdictCache()] {
            let evaluator = Evaluator(policy: Fixtures.policy(), verdictCache: cache)
            let verdict = try evaluator.evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: time)
            #expect(!verdict.isTrusted)
            #expect(verdict.failures.contains { $0.code == .expired || $0.code == .notYetValid })
        }
        #expect(!Timestamp.iso8601(time).isEmpty)
    }
}
