import Foundation
import PincheckTestSupport
import Testing
@testable import PincheckOpenSSL
@testable import TrustEvaluatorCore

/// The CRL fetcher as an attacker meets it: forged answers never kept, budgets on memory, fetches
/// in flight and distribution points, and destinations it never reaches.
@Suite("RevocationListFetcher: forgeries, failure memory, the cache folder, destinations, limits")
struct RevocationListFetcherTests {
    typealias D = DistributionPointCRLTests
    static let real = D.intermediateCRL
    /// Signed by another key than the intermediate's: what an on-path attacker can serve.
    static let forged = D.bytes("wrong-signer.crl")

    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-crl-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    static func fetcher(_ server: TestCRLServer, directory: String? = nil, configure: (inout RevocationListFetcher.Limits) -> Void = { _ in })
        throws -> RevocationListFetcher {
        var limits = RevocationListFetcher.Limits(maximumBytes: 1 << 20, timeout: .seconds(10))
        configure(&limits)
        guard let directory else { return RevocationListFetcher(limits: limits, proxy: .url(server.proxyURL)) }
        return try RevocationListFetcher(limits: limits, cachingIn: directory, proxy: .url(server.proxyURL))
    }

    enum Storage: String, CaseIterable, Sendable { case memory, folder }

    struct Case: Sendable, CustomTestStringConvertible {
        let failure: DistributionPointCRLs.Failure
        let storage: Storage
        var testDescription: String { "\(failure) failure, \(storage.rawValue)" }
    }

    static let cases = [DistributionPointCRLs.Failure.hard, .soft].flatMap { failure in Storage.allCases.map { Case(failure: failure, storage: $0) } }

    @Test("a forged CRL served once, then the real one: the next evaluation fetches again and answers from the real one", arguments: cases)
    func forgedThenReal(_ row: Case) async throws {
        let server = try TestCRLServer(["/intermediate.crl": .sequence([Self.forged, Self.real])])
        defer { server.stop() }
        let directory = row.storage == .folder ? try Self.folder() : nil
        defer { if let directory { try? FileManager.default.removeItem(atPath: directory) } }
        let first = try Self.fetcher(server, directory: directory) { $0.failureMemory = .zero }
        let forged = try await D.evaluate("revoked", row.failure, fetcher: first)
        #expect(forged.isTrusted == (row.failure == .soft), "\(forged.failures)")
        let why = (forged.failures + forged.warnings).first { $0.code == .crlUnavailable }
        #expect(why?.message.contains("signature does not verify") == true, "\(forged.failures + forged.warnings)")
        if let directory {
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty, "nothing stored before it verified")
        }
        // The next evaluation: the same process (memory), or the next one (the folder).
        let next = row.storage == .memory ? first : try Self.fetcher(server, directory: directory) { $0.failureMemory = .zero }
        let real = try await D.evaluate("revoked", row.failure, fetcher: next)
        #expect(real.failures.map(\.code) == [.revoked])
        #expect(server.requests(for: "/intermediate.crl") == 2)
        if let directory {
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1, "the verified CRL is stored")
        }
    }

    @Test("a failure is remembered for failureMemory, then the distribution point is asked again")
    func failureMemory() async throws {
        // Remembered: a long memory, so a loaded machine cannot outlast it between two evaluations.
        let server = try TestCRLServer(["/intermediate.crl": .sequence([Self.forged, Self.real])])
        defer { server.stop() }
        let fetcher = try Self.fetcher(server) { $0.failureMemory = .seconds(600) }
        let first = try await D.evaluate("revoked", .hard, fetcher: fetcher)
        #expect(first.failures.map(\.code) == [.crlUnavailable])
        let remembered = try await D.evaluate("revoked", .hard, fetcher: fetcher)
        #expect(remembered.failures.map(\.code) == [.crlUnavailable])
        #expect(remembered.failures.first?.message.contains("not asked again yet") == true, "\(remembered.failures)")
        #expect(server.requests(for: "/intermediate.crl") == 1, "a dead or lying server is not asked by every evaluation")
        // Forgotten: a memory of a millisecond has passed by the next evaluation.
        let brief = try TestCRLServer(["/intermediate.crl": .sequence([Self.forged, Self.real])])
        defer { brief.stop() }
        let forgetful = try Self.fetcher(brief) { $0.failureMemory = .milliseconds(1) }
        _ = try await D.evaluate("revoked", .hard, fetcher: forgetful)
        try await Task.sleep(for: .milliseconds(20))
        let later = try await D.evaluate("revoked", .hard, fetcher: forgetful)
        #expect(later.failures.map(\.code) == [.revoked])
        #expect(brief.requests(for: "/intermediate.crl") == 2)
    }

    @Test("a stored CRL that does not verify is not used: the distribution point is asked")
    func tamperedFolder() async throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestCRLServer(["/intermediate.crl": .bytes(Self.real)])
        defer { server.stop() }
        let stored = "\(directory)/\(Hex.encode(Digest.sha256(Array("http://crl.pincheck.test/intermediate.crl".utf8)))).crl"
        _ = FileManager.default.createFile(atPath: stored, contents: Data(Self.forged), attributes: [.posixPermissions: 0o600])
        let verdict = try await D.evaluate("revoked", .hard, fetcher: Self.fetcher(server, directory: directory))
        #expect(verdict.failures.map(\.code) == [.revoked])
        #expect(server.requests(for: "/intermediate.crl") == 1)
        #expect(FileManager.default.contents(atPath: stored).map(Array.init) == Self.real, "replaced by the CRL that verified")
    }

    @Test("the cache folder must be a folder of the running user's that no one else can write")
    func folderChecks() throws {
        let good = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: good) }
        try RevocationListFetcher.checkCacheDirectory(good)

        func refused(_ path: String, _ code: PincheckError.Code, _ words: String) {
            do {
                try RevocationListFetcher.checkCacheDirectory(path)
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.code == code)
                #expect(error.message.contains(words), "\(error.message)")
            }
            let quiet = RevocationListFetcher(cacheDirectory: path)
            #expect(quiet.cacheDirectory == nil && quiet.cacheDirectoryProblem?.code == code, "the non-throwing form keeps nothing there and says why")
        }
        refused("\(good)/missing", .unreadableFile, "does not exist")
        refused("/dev/null", .unreadableFile, "must be a folder")
        let file = "\(good)/file"
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        refused(file, .unreadableFile, "must be a folder")
        let open = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: open) }
        chmod(open, 0o777)
        refused(open, .invalidPolicy, "written by its group or by others")
        let foreign = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: foreign) }
        if chown(foreign, 65534, 65534) == 0 {
            refused(foreign, .invalidPolicy, "owned by user 65534")
        }
    }

    @Test("a certificate naming 5,000 distribution points costs at most the cap's requests, with a warning")
    func distributionPointCap() async throws {
        let work = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let points = (0..<5_000).map { "URI:http://crl\($0).pincheck.test/ca.crl" }.joined(separator: ",")
        try "basicConstraints=CA:FALSE\nsubjectAltName=DNS:www.example.test\ncrlDistributionPoints=\(points)\n"
            .write(toFile: "\(work)/ext.cnf", atomically: true, encoding: .utf8)
        #expect(try OpenSSLCLI.run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=www.example.test",
                                    "-keyout", "\(work)/leaf.key", "-out", "\(work)/leaf.csr"]) == 0)
        #expect(try OpenSSLCLI.run(["x509", "-req", "-in", "\(work)/leaf.csr", "-CA", TestPKI.path("rsa-intermediate.pem"),
                                    "-CAkey", TestPKI.path("keys/rsa-intermediate.key"), "-set_serial", "4242", "-days", "36500",
                                    "-extfile", "\(work)/ext.cnf", "-out", "\(work)/leaf.pem"]) == 0)
        let chain = try Certificate.load(contentsOf: "\(work)/leaf.pem") + [TestPKI.certificate("rsa-intermediate")]
        #expect(chain[0].handle.crlDistributionPointURLs.count == RevocationListFetcher.maximumDistributionPointsPerCertificate)
        let server = try TestCRLServer([:])
        defer { server.stop() }
        let verdict = try await Evaluator(policy: D.policy(.soft)).evaluate(chain, host: "www.example.test", at: TestPKI.time,
                                                                            fetchingRevocationListsWith: Self.fetcher(server))
        #expect(verdict.isTrusted, "\(verdict.failures)")
        #expect(server.totalRequests <= RevocationListFetcher.maximumDistributionPointsPerCertificate)
        #expect(server.totalRequests > 0)
        let ignored = try #require(verdict.warnings.first { $0.code == .crlPointsIgnored })
        #expect(ignored.message.contains("names 5000 http CRL distribution points; the first 4 were consulted and 4996 ignored"), "\(ignored.message)")
    }

    @Test("a redirect to another port reaches nothing; one on the same host and port is followed")
    func redirects() async throws {
        let elsewhere = try TestCRLServer(["/intermediate.crl": .bytes(Self.real)])
        defer { elsewhere.stop() }
        let server = try TestCRLServer([
            "/intermediate.crl": .redirect("http://127.0.0.1:\(elsewhere.port)/intermediate.crl"),
        ])
        defer { server.stop() }
        let away = try await D.evaluate("revoked", .hard, fetcher: Self.fetcher(server))
        #expect(away.failures.map(\.code) == [.crlUnavailable])
        #expect(away.failures.first?.message.contains("redirected to another host or port") == true, "\(away.failures)")
        #expect(elsewhere.totalRequests == 0)

        let moved = try TestCRLServer(["/intermediate.crl": .redirect("/moved/intermediate.crl"), "/moved/intermediate.crl": .bytes(Self.real)])
        defer { moved.stop() }
        let followed = try await D.evaluate("revoked", .hard, fetcher: Self.fetcher(moved))
        #expect(followed.failures.map(\.code) == [.revoked])
        #expect(moved.requests(for: "/moved/intermediate.crl") == 1)
    }

    @Test("destinations: metadata and link-local never, loopback only when allowed, even behind a name")
    func destinations() throws {
        let server = try TestCRLServer(["/intermediate.crl": .bytes(Self.real)])
        defer { server.stop() }
        func get(_ url: String, loopback: Bool = false) -> Result<[UInt8], HTTPFetch.Failure> {
            HTTPFetch.get(url, maximumBytes: 1 << 20, timeout: .seconds(5), proxy: "", destinations: .init(loopback: loopback))
        }
        for url in ["http://169.254.169.254/latest/meta-data/iam/security-credentials/", "http://[fe80::1]/x.crl", "http://[fd00:ec2::254]/",
                    "http://100.100.100.200/latest/meta-data/", "http://0.0.0.0/x.crl", "http://[::ffff:169.254.169.254]/", "http://224.0.0.1/x.crl"] {
            guard case .failure(.refused(let why)) = get(url) else {
                Issue.record("\(url) was not refused")
                continue
            }
            #expect(why.contains("never fetches"), "\(url): \(why)")
        }
        let direct = "http://127.0.0.1:\(server.port)/intermediate.crl"
        guard case .failure(.refused(let loopback)) = get(direct) else { Issue.record("loopback was fetched"); return }
        #expect(loopback.contains("loopback"))
        guard case .failure(.refused(let named)) = get("http://localhost:\(server.port)/intermediate.crl") else { Issue.record("localhost was fetched"); return }
        #expect(named.contains("a loopback name"), "refused by its name, before any lookup: \(named)")
        // A name that only resolution shows to be loopback: one of /etc/hosts' other loopback names.
        let hosts = (try? String(contentsOfFile: "/etc/hosts", encoding: .utf8)) ?? ""
        var other: String? = nil
        for line in hosts.split(separator: "\n") where other == nil {
            let fields: [String] = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard fields.count >= 2, fields[0].hasPrefix("127.") else { continue }
            other = fields.dropFirst().first { name in !name.hasPrefix("#") && !name.contains("localhost") }
        }
        if let other {
            guard case .failure(.refused(let resolved)) = get("http://\(other):\(server.port)/intermediate.crl") else { Issue.record("\(other) was fetched"); return }
            #expect(resolved.contains("resolves to"), "\(other): \(resolved)")
        }
        #expect(server.totalRequests == 0)
        let allowed = get(direct, loopback: true)
        guard case .success(let bytes) = allowed else { Issue.record("an allowed loopback fetch failed: \(allowed)"); return }
        #expect(bytes == Self.real)
    }

    @Test("a URL with CR, LF or a space never reaches a request line; the scheme is read in any case")
    func urls() throws {
        let server = try TestCRLServer(["/intermediate.crl": .bytes(Self.real)])
        defer { server.stop() }
        for url in ["http://crl.pincheck.test/intermediate.crl\r\nX-Injected: 1", "http://crl.pincheck.test/a b.crl",
                    "http://crl.pincheck.test/%zz.crl", "http://user@crl.pincheck.test/x.crl", "http://crl.pincheck.test:99999/x.crl", "ftp://crl.pincheck.test/x.crl"] {
            guard case .failure(.refused) = HTTPFetch.get(url, maximumBytes: 1 << 20, timeout: .seconds(5), proxy: server.proxyURL) else {
                Issue.record("\(url.debugDescription) was not refused")
                continue
            }
        }
        #expect(server.totalRequests == 0)
        let upper = HTTPFetch.get("HTTP://CRL.Pincheck.TEST/intermediate.crl", maximumBytes: 1 << 20, timeout: .seconds(5), proxy: server.proxyURL)
        #expect((try? upper.get()) == Self.real)
        #expect(server.requests(for: "/intermediate.crl") == 1)
        #expect(!server.received.joined().contains("X-Injected"))
    }

    @Test("at most maximumFetchesInFlight fetches run at once; the rest wait for a slot")
    func inFlightCap() async throws {
        let gate = Latch()
        let running = Locked((now: 0, most: 0))
        var limits = RevocationListFetcher.Limits(timeout: .seconds(20))
        limits.maximumFetchesInFlight = 3
        let fetcher = RevocationListFetcher(limits: limits, cacheDirectory: nil) { _ in
            running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            _ = gate.wait(timeout: .seconds(30))
            running.withLock { $0.now -= 1 }
            return .success(Self.real)
        }
        let requests = (0..<20).map { index in
            RevocationListFetcher.Request(url: "http://crl\(index).pincheck.test/ca.crl", issuer: SHA256Digest(hashing: [UInt8(index)])) { _ in nil }
        }
        async let all = fetcher.lists(requests, at: TestPKI.time)
        for _ in 0..<100 where running.withLock({ $0.now }) < 3 { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(running.withLock { $0.now } == 3, "three fetches under way, seventeen waiting")
        gate.signal()
        let lists = await all
        #expect(lists.byURL.count == 20)
        #expect(running.withLock { $0.most } == 3)
        #expect(fetcher.fetchCount == 20)
    }

    @Test("parsed CRLs kept in memory stay within maximumCachedBytes, least recently used first out")
    func memoryBudget() async throws {
        let cost = try CertificateRevocationList(derEncoded: Self.real).estimatedResidentBytes
        var limits = RevocationListFetcher.Limits()
        limits.maximumCachedBytes = cost * 3
        let fetcher = RevocationListFetcher(limits: limits, cacheDirectory: nil) { _ in .success(Self.real) }
        let urls = (0..<10).map { "http://crl\($0).pincheck.test/ca.crl" }
        for url in urls {
            _ = await fetcher.lists([RevocationListFetcher.Request(url: url, issuer: SHA256Digest(hashing: [1])) { _ in nil }], at: TestPKI.time)
            #expect(fetcher.cachedBytes <= limits.maximumCachedBytes)
        }
        #expect(fetcher.cachedBytes == cost * 3)
        #expect(fetcher.fresh([urls[0]], at: TestPKI.time) == nil)
        #expect(fetcher.fresh(Array(urls.suffix(3)), at: TestPKI.time) != nil)
        var tiny = RevocationListFetcher.Limits()
        tiny.maximumCachedBytes = cost - 1
        let none = RevocationListFetcher(limits: tiny, cacheDirectory: nil) { _ in .success(Self.real) }
        let used = await none.lists([RevocationListFetcher.Request(url: urls[0], issuer: SHA256Digest(hashing: [1])) { _ in nil }], at: TestPKI.time)
        guard case .list? = used.byURL[urls[0]] else { Issue.record("a CRL over the budget is still used once"); return }
        #expect(none.cachedBytes == 0, "but not kept")
    }

    @Test("waves of evaluations behind a trickling CRL server: one fetch, each wave answered by the remembered failure")
    func trickle() async throws {
        let server = try TestCRLServer(["/intermediate.crl": .trickle(Self.real, chunk: 1, pause: 0.5)])
        defer { server.stop() }
        // A long memory: a loaded machine may take longer over the waves than the default 10 s.
        let fetcher = try Self.fetcher(server) {
            $0.timeout = .seconds(1)
            $0.failureMemory = .seconds(600)
        }
        for _ in 0..<5 {
            let verdicts = try await withThrowingTaskGroup(of: Verdict.self) { group in
                for _ in 0..<16 { group.addTask { try await D.evaluate("good", .soft, fetcher: fetcher) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(verdicts.allSatisfy { $0.isTrusted && $0.warnings.contains { $0.code == .crlUnavailable } })
        }
        #expect(server.requests(for: "/intermediate.crl") == 1, "80 evaluations, one fetch: the failure is remembered")
    }
}
