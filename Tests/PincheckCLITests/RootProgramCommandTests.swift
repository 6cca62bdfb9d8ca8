import Foundation
import PincheckTestSupport
import Testing
import TrustEvaluator
@testable import PincheckCLI

/// The root programs on the command line: private roots in the system store, the data shown.
@Suite("pincheck and the root programs", .serialized)
struct RootProgramCommandTests {
    typealias F = CLIFixtures

    struct Fixture {
        let name: String
        let hosts: [String]
        let time: String
    }

    /// The private-PKI corpus (Certificates/private-pki/manifest.tsv).
    static let corpus: [Fixture] = {
        let text = (try? String(contentsOfFile: F.path("private-pki/manifest.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5 else { return nil }
            return Fixture(name: fields[0], hosts: fields[1 + 1].split(separator: ",").map(String.init), time: fields[3])
        }
    }()

    @Test("private roots installed in the system store (SSL_CERT_FILE) get the answers --ca-file gives: every corpus host trusted")
    func privateRootsInSystemStore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-system-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("certs"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // update-ca-certificates' result: one bundle of every root, and no hashed directory.
        var bundle = ""
        for fixture in Self.corpus { bundle += try String(contentsOfFile: F.path("private-pki/\(fixture.name)/root.pem"), encoding: .utf8) + "\n" }
        let bundlePath = folder.appendingPathComponent("ca-certificates.crt").path
        try bundle.write(toFile: bundlePath, atomically: true, encoding: .utf8)
        let environment = ["SSL_CERT_FILE": bundlePath, "SSL_CERT_DIR": folder.appendingPathComponent("certs").path]
        #expect(Self.corpus.count >= 15)
        var checks = 0
        var refused: [String] = []
        for fixture in Self.corpus {
            for host in fixture.hosts {
                let chain = F.path("private-pki/\(fixture.name)/chain.pem")
                let system = try F.runBinary(["verify", chain, "--host", host, "--at", fixture.time], environment: environment)
                checks += 1
                if system.status != 0 { refused.append("\(fixture.name) \(host): \(system.output)") }
                #expect(system.output.contains("Anchor: private, in no root program"))
            }
        }
        #expect(refused.isEmpty, "\(refused.count) of \(checks) refused: \(refused.prefix(3))")
        // Declared public, the same roots are held to the Baseline Requirements: the trustme rows fail.
        let trustme = try #require(Self.corpus.first { $0.name.hasPrefix("trustme") })
        let strict = try F.runBinary(["verify", F.path("private-pki/\(trustme.name)/chain.pem"), "--host", trustme.hosts[0], "--at", trustme.time,
                                      "--ca-file", F.path("private-pki/\(trustme.name)/root.pem"), "--web-pki-roots"])
        #expect(strict.status == 1 && strict.output.contains("chain.profile-violation"))
    }

    @Test("--version and root-programs name the data; --root-store-data refuses a file that is not root-program data (exit 2)")
    func dataShown() throws {
        let version = try F.runBinary(["--version"])
        #expect(version.output.contains("root programs: ") && version.output.contains(RootPrograms.bundled.sources[0].revision))
        let shown = try F.runBinary(["root-programs"])
        #expect(shown.status == 0)
        #expect(shown.output.contains("Izenpe.com: Chrome, Mozilla (distrusts certificates issued after 2026-04-15)"))
        let bad = try F.runBinary(["root-programs", "--root-store-data", F.path("rsa-root.pem")])
        #expect(bad.status == 2 && bad.errors.contains("input.root-program-data"))
        let moved = try F.runBinary(["root-programs", "--emit-swift"])
        #expect(moved.status == 2 && moved.errors.contains("scripts/generate-root-programs.sh"), "the old generator flag says where it went")
        let json = try F.runBinary(["verify", F.path("chains/rsa-good.pem"), "--host", "www.example.test", "--json"] + F.anchors + F.at)
        #expect(json.output.contains("\"rootPrograms\":{") && json.output.contains("\"anchorIsPublic\":false"))
    }
}

/// What `audit` says of the root programs, on verdicts made with programs built for the test PKI.
@Suite("audit: root-program notes")
struct AuditRootProgramNoteTests {
    static func programs(_ memberships: [RootPrograms.Membership]) -> RootPrograms {
        let root = TestPKI.certificate("rsa-root")
        return RootPrograms(roots: [RootPrograms.Root(name: "Test Root", sha256: root.sha256Fingerprint, subjectAndKey: nil, memberships: memberships)],
                            sources: [])
    }

    static func verdict(_ programs: RootPrograms, pinnedRoot: Certificate? = nil) throws -> Verdict {
        var validation = ValidationPolicy(anchors: try TrustAnchors(certificates: [TestPKI.certificate("rsa-root")]))
        validation.rootPrograms = RootProgramPolicy(data: programs)
        var pinned = [TestPKI.certificate("rsa-intermediate")]
        if let pinnedRoot { pinned.append(pinnedRoot) }
        let set = PinSet(.certificates(try PinnedCertificates(pinned)))
        let host = HostPolicy(pattern: try HostPattern("www.example.test", publicSuffixes: nil), pinSets: [set], validation: validation)
        return try TrustManager(policies: [host]).evaluate(TestPKI.chain("rsa-good"), host: "www.example.test", at: TestPKI.time)
    }

    @Test("a chain ending at a root a program has scheduled is named, with the program and the date; a root in no program is not")
    func scheduledRoot() throws {
        let date = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01: the test leaf predates it
        let scheduled = try Self.verdict(Self.programs([RootPrograms.Membership(program: .mozilla, status: .included, distrustAfter: date)]))
        #expect(scheduled.isTrusted)
        let notes = AuditResult.rootProgramNotes(scheduled)
        #expect(notes.contains { $0.contains("Test Root") && $0.contains("Mozilla (distrusts certificates issued after 2100-01-01)") }, "\(notes)")
        #expect(AuditResult.rootProgramNotes(try Self.verdict(.none)).isEmpty)
    }

    @Test("a pinned root in no program, on a host whose chain is public, can match only if the host moves to it")
    func privateRootPinnedOnPublicHost() throws {
        let included = Self.programs([RootPrograms.Membership(program: .chrome, status: .included)])
        let notes = AuditResult.rootProgramNotes(try Self.verdict(included, pinnedRoot: TestPKI.certificate("attacker-root")))
        #expect(notes.contains { $0.contains("is in no root program while the host's chain is public") }, "\(notes)")
        #expect(!AuditResult.rootProgramNotes(try Self.verdict(included)).contains { $0.contains("no root program") })
    }
}
