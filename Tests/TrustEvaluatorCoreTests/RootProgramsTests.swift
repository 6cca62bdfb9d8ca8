import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// The root programs' data: parsed from the real files, bundled, loaded over; and what it decides.
@Suite("root programs: the data")
struct RootProgramDataTests {
    static let folder = SharedData.url("rootstores")
    static func file(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: folder.appendingPathComponent(name))) }
    static func day(_ text: String) -> Date { Timestamp.parseDay(text)! }

    @Test("the bundled data decodes, names its three sources with their revisions, and is small")
    func bundled() {
        let data = RootPrograms.bundled
        #expect(Set(data.sources.map(\.kind)) == Set(RootPrograms.Source.Kind.allCases))
        #expect(data.provenance.contains("9d75dfde2e791c38fdf5ea7f3da9609c46d8a4f8") && data.provenance.contains("aca3e87ef614dcd86c8eb535ef947f7c2236df38"))
        #expect(RootPrograms.bundledProvenance == data.provenance, "what --version prints is what verdicts use")
        #expect(data.roots.count { $0.membership(in: .mozilla)?.status == .included } > 100)
        #expect(data.roots.count { $0.membership(in: .chrome)?.status == .included } > 90)
        #expect(BundledRootPrograms.encoded.utf8.count < 1 << 20)
    }

    @Test("the bundled data is decoded on first need: sources and a private root's lookup decode nothing; a public root's does, and finds it")
    func bundledDecodedLazily() throws {
        let data = RootPrograms(lazilyDecoding: BundledRootPrograms.encoded)
        #expect(data.sources.count == 3)
        #expect(data.sources == (try RootProgramFacts(encoded: BundledRootPrograms.encoded)).sources, "the leading lines are every source")
        #expect(data.root(for: TestPKI.certificate("rsa-root")) == nil)
        #expect(!data.isDecoded, "a root the text does not name is looked up without decoding it")
        // A public root, made here from the first Mozilla root's fingerprint: found by it.
        let first = try #require(RootPrograms.bundled.roots.first { $0.membership(in: .mozilla) != nil })
        #expect(data.root(sha256: first.sha256) == first)
        #expect(data.isDecoded)
        #expect(data.roots == RootPrograms.bundled.roots)
    }

    @Test("a public root given as a certificate is found in the text not decoded yet (by its fingerprint)", SharedData.requires("realworld"))
    func bundledFindsPublicRootLazily() throws {
        let x1 = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("roots/ISRG-Root-X1-96bcec06.pem").path)[0]
        let data = RootPrograms(lazilyDecoding: BundledRootPrograms.encoded)
        #expect(data.root(for: x1)?.includedIn == [.chrome, .mozilla])
        #expect(data.isDecoded)
    }

    @Test("Mozilla's certdata.txt: 167 certificate objects, 121 trusted for servers, 6 distrust dates (Izenpe's on its trust object)",
          SharedData.requires("rootstores"))
    func certdata() throws {
        let parsed = try MozillaCertdata(try Self.file("nss-certdata.txt"), source: "certdata.txt")
        #expect(parsed.roots.count == 167)
        #expect(parsed.roots.count(where: \.trustedForServers) == 121)
        let dated = parsed.roots.filter { $0.distrustAfter != nil }
        #expect(dated.count == 6)
        let days = Dictionary(dated.map { ($0.label, Timestamp.day($0.distrustAfter!)) }, uniquingKeysWith: { a, _ in a })
        #expect(days["Izenpe.com"] == "2026-04-15", "the date sits on the trust object; the certificate object says CK_FALSE")
        #expect(days["ePKI Root Certification Authority"] == "2025-04-15")
        #expect(dated.filter { $0.label.contains("Entrust") }.allSatisfy { Timestamp.iso8601($0.distrustAfter!) == "2024-11-30T23:59:59Z" })
        #expect(dated.count { $0.label.contains("Entrust") } == 4)
    }

    @Test("the checked-in data is what the generator makes of the shared files", SharedData.requires("rootstores"))
    func generatedIsCurrent() throws {
        let files = try ["nss-certdata.txt", "ccadb-records.jsonl", "chrome-root-store-v17-constraints.json"].map { (bytes: try Self.file($0), name: $0) }
        let revisions = Dictionary(uniqueKeysWithValues: RootPrograms.bundled.sources.map { ($0.kind.rawValue, $0.revision) })
        let generated = try RootPrograms(generatingFrom: files, revisions: revisions)
        #expect(generated.roots == RootPrograms.bundled.roots, "run scripts/generate-root-programs.sh")
        let chrome = try ChromeConstraints(try Self.file("chrome-root-store-v17-constraints.json"), source: "chrome")
        #expect(chrome.anchors.count == 10)
        #expect(chrome.anchors.filter { $0.distrustAfter == .some(Date(timeIntervalSince1970: 1_731_369_599)) }.count == 9)
        #expect(chrome.anchors.first { $0.name == "GLOBALTRUST 2020" }?.distrustAfter == .some(Date(timeIntervalSince1970: 1_719_791_999)))
    }

    @Test("root-program files cut short at a line boundary are refused with input.root-program-data; the whole files load",
          SharedData.requires("rootstores"))
    func cutFilesRefused() throws {
        for name in ["ccadb-records.jsonl", "nss-certdata.txt"] {
            let whole = try Self.file(name)
            let loaded = try RootPrograms(files: [(whole, name)])
            #expect(loaded.sources.contains { $0.revision == "file \(name)" })
            // The first half of its lines: each line whole, so every record parses.
            let lines = whole.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            var half = Array(lines.prefix(lines.count / 2).joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")]
            if name.hasSuffix(".txt") {
                // certdata.txt cut after an object's END line, so the cut text is itself well formed.
                let end = Array("\nEND\n".utf8)
                let last = (0...(half.count - end.count)).last { half[$0..<($0 + end.count)].elementsEqual(end) }
                half = Array(half[..<(try #require(last) + end.count)])
            }
            do {
                _ = try RootPrograms(files: [(half, name)])
                Issue.record("\(name) cut in half was accepted")
            } catch {
                #expect(error.code == .malformedRootProgramData, "\(name): \(error)")
                #expect(error.message.contains("where the data in use holds") || name.hasSuffix(".txt"), "\(error.message)")
            }
        }
    }

    @Test("a root re-issued with the same subject and key is the program's root; another key under the same name is not")
    func subjectAndKey() {
        let root = Fixtures.rsaRoot
        let reissued = RootPrograms.Root(name: "Re-issued", sha256: Array(repeating: 7, count: 32), subjectAndKey: RootPrograms.subjectAndKey(of: root),
                                         publicKeySHA256: root.publicKeyPin.digest, memberships: [RootPrograms.Membership(program: .mozilla, status: .included)])
        let programs = RootPrograms(roots: [reissued], sources: [])
        #expect(programs.root(for: root)?.name == "Re-issued")
        #expect(programs.root(for: Fixtures.attackerRoot) == nil)
        let sameKeyOtherName = RootPrograms.Root(name: "Other", sha256: Array(repeating: 8, count: 32), subjectAndKey: Array(repeating: 9, count: 32),
                                                 publicKeySHA256: root.publicKeyPin.digest, memberships: [])
        #expect(RootPrograms(roots: [sameKeyOtherName], sources: []).root(for: root) == nil)
    }

    @Test("Chrome's constraints: blocks ORed, fields ANDed; an old-versions block never applies; an unknown field refuses the file")
    func chromeSemantics() throws {
        func read(_ blocks: String) throws -> Date?? {
            let text = #"{"anchors":[{"sha256":"\#(String(repeating: "ab", count: 32))","name":"T","constraints":\#(blocks)}]}"#
            return try ChromeConstraints(Array(text.utf8), source: "test").anchors[0].distrustAfter
        }
        #expect(try read(#"[{"sct_not_after_sec":100,"min_version":"131"},{"max_version_exclusive":"131"}]"#) == .some(Date(timeIntervalSince1970: 100)))
        #expect(try read(#"[{"sct_not_after_sec":100},{"sct_not_after_sec":200}]"#) == .some(Date(timeIntervalSince1970: 200)), "ORed: the later date")
        #expect(try read(#"[{"sct_not_after_sec":100},{"min_version":"120"}]"#) == .some(nil), "a block without a date trusts without one")
        #expect(try read(#"[{"max_version_exclusive":"120"}]"#) == nil, "no block applies: never trusted")
        #expect(throws: PincheckError.self) { try read(#"[{"sct_not_after_sec":100,"permitted_dns_names":["example.com"]}]"#) }
    }

    @Test("a file that is no root-program data, or is older than the data in use, is refused with a typed error")
    func loadingRefusals() throws {
        let certdata = RootProgramFixtures.certdata([(Fixtures.rsaRoot, true, nil)])
        do {
            _ = try RootPrograms(files: [(Array(certdata.utf8), "old-certdata.txt")])
            Issue.record("an older certdata.txt was accepted")
        } catch { #expect(error.code == .staleRootProgramData) }
        let loaded = try RootPrograms(files: [(Array(certdata.utf8), "old-certdata.txt")], allowingOlder: true)
        #expect(loaded.root(for: Fixtures.rsaRoot)?.membership(in: .mozilla)?.status == .included)
        #expect(loaded.sources.first { $0.kind == .mozillaCertdata }?.revision == "file old-certdata.txt")
        #expect(loaded.sources.first { $0.kind == .ccadb } == RootPrograms.bundled.sources.first { $0.kind == .ccadb }, "the other kinds stay")
        for (bytes, code) in [("CKA_CLASS CK_OBJECT_CLASS CKO_CERTIFICATE\nCKA_VALUE MULTILINE_OCTAL\n\\0x1\nEND\n", PincheckError.Code.malformedRootProgramData),
                              ("{\"type\": \"Root Certificate\"}\n", .malformedRootProgramData),
                              ("{\"anchors\": 3}", .malformedRootProgramData),
                              ("  \n", .emptyInput)] {
            #expect(throws: PincheckError.self) { try RootPrograms(files: [(Array(bytes.utf8), "bad")]) }
            do { _ = try RootPrograms(files: [(Array(bytes.utf8), "bad")]) } catch { #expect(error.code == code, "\(bytes): \(error)") }
        }
        #expect(throws: PincheckError.self) { try RootPrograms(files: [(Array(certdata.utf8), "a"), (Array(certdata.utf8), "b")], allowingOlder: true) }
    }
}

/// Root programs made of the test PKI's roots, and certdata.txt text for them.
enum RootProgramFixtures {
    static func programs(_ root: Certificate, _ memberships: [RootPrograms.Membership]) -> RootPrograms {
        RootPrograms(roots: [RootPrograms.Root(name: "Test Root", sha256: root.sha256Fingerprint, subjectAndKey: nil, memberships: memberships)],
                     sources: [RootPrograms.Source(kind: .mozillaCertdata, revision: "test", asOf: Date(timeIntervalSince1970: 0))])
    }

    /// A certdata.txt holding these certificates with trust objects (server trust, distrust date).
    static func certdata(_ roots: [(Certificate, Bool, String?)]) -> String {
        func octal(_ bytes: [UInt8]) -> String {
            stride(from: 0, to: bytes.count, by: 16).map { start in
                bytes[start..<min(start + 16, bytes.count)].map { "\\" + String($0, radix: 8).leftPadded(to: 3) }.joined()
            }.joined(separator: "\n")
        }
        var text = "BEGINDATA\n"
        for (certificate, trusted, distrust) in roots {
            let serial = DERFields.serial(of: certificate.derBytes)
            let issuer = DERFields.issuer(of: certificate.derBytes)
            let date = distrust.map { "CKA_NSS_SERVER_DISTRUST_AFTER MULTILINE_OCTAL\n\(octal(Array($0.utf8)))\nEND\n" } ?? "CKA_NSS_SERVER_DISTRUST_AFTER CK_BBOOL CK_FALSE\n"
            text += "CKA_CLASS CK_OBJECT_CLASS CKO_CERTIFICATE\nCKA_LABEL UTF8 \"\(certificate.subject)\"\n"
            text += "CKA_ISSUER MULTILINE_OCTAL\n\(octal(issuer))\nEND\nCKA_SERIAL_NUMBER MULTILINE_OCTAL\n\(octal(serial))\nEND\n"
            text += "CKA_VALUE MULTILINE_OCTAL\n\(octal(certificate.derBytes))\nEND\n\(date)\n"
            text += "CKA_CLASS CK_OBJECT_CLASS CKO_NSS_TRUST\n"
            text += "CKA_ISSUER MULTILINE_OCTAL\n\(octal(issuer))\nEND\nCKA_SERIAL_NUMBER MULTILINE_OCTAL\n\(octal(serial))\nEND\n"
            text += "CKA_TRUST_SERVER_AUTH CK_TRUST \(trusted ? "CKT_NSS_TRUSTED_DELEGATOR" : "CKT_NSS_MUST_VERIFY_TRUST")\n\n"
        }
        return text
    }
}

/// The issuer Name and serialNumber of a DER certificate, as certdata.txt stores them (whole TLVs).
enum DERFields {
    /// The TLVs of the TBSCertificate's fields, in order.
    static func tbsFields(_ der: [UInt8]) -> [[UInt8]] {
        func tlv(_ bytes: ArraySlice<UInt8>) -> (header: Int, length: Int) {
            let first = bytes[bytes.startIndex + 1]
            if first < 0x80 { return (2, Int(first)) }
            let count = Int(first & 0x7F)
            let length = bytes[(bytes.startIndex + 2)..<(bytes.startIndex + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
            return (2 + count, length)
        }
        let outer = tlv(der[...])
        let tbsStart = outer.header
        let tbs = tlv(der[tbsStart...])
        var index = tbsStart + tbs.header
        let end = index + tbs.length
        var fields: [[UInt8]] = []
        while index < end {
            let field = tlv(der[index...])
            fields.append(Array(der[index..<(index + field.header + field.length)]))
            index += field.header + field.length
        }
        return fields
    }

    static func serial(of der: [UInt8]) -> [UInt8] {
        let fields = tbsFields(der)
        return fields[0][0] == 0xA0 ? fields[1] : fields[0]
    }

    static func issuer(of der: [UInt8]) -> [UInt8] {
        let fields = tbsFields(der)
        return fields[0][0] == 0xA0 ? fields[3] : fields[2]
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// Distrust dates and removals, on the test PKI with programs made for it.
@Suite("root programs: distrust")
struct RootProgramDistrustTests {
    static let leaf = Fixtures.chain("rsa-good")[0]

    static func verdict(_ memberships: [RootPrograms.Membership], distrust: RootProgramPolicy.Distrust = .both,
                        at time: Date = Fixtures.time) throws -> Verdict {
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [Fixtures.rsaRoot]))
        policy.validation.rootPrograms = RootProgramPolicy(data: RootProgramFixtures.programs(Fixtures.rsaRoot, memberships), distrust: distrust)
        return try Evaluator(policy: policy).evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: time)
    }

    static func dated(_ program: RootPrograms.Program, _ offset: TimeInterval) -> RootPrograms.Membership {
        RootPrograms.Membership(program: program, status: .included, distrustAfter: leaf.notBefore.addingTimeInterval(offset))
    }

    @Test("Mozilla's date against the leaf's notBefore: before it refused, at it and after trusted; the evidence names program, date and time compared",
          arguments: [RootPrograms.Program.mozilla, .chrome])
    func dateAgainstNotBefore(program: RootPrograms.Program) throws {
        let refused = try Self.verdict([Self.dated(program, -1)])
        let reason = try #require(refused.failures.first { $0.code == .rootDistrusted }, "\(refused.failures)")
        let evidence = try #require(reason.evidence.rootProgram)
        #expect(evidence.program == program && evidence.compared == .notBefore && evidence.comparedTime == Self.leaf.notBefore)
        #expect(evidence.distrustAfter == Self.leaf.notBefore.addingTimeInterval(-1))
        #expect(reason.message.contains(program.description))
        #expect(try Self.verdict([Self.dated(program, 0)]).isTrusted, "issued at the date: still trusted")
        #expect(try Self.verdict([Self.dated(program, 1)]).isTrusted)
        #expect(try Self.verdict([Self.dated(program, -1)]).rootPrograms?.anchor?.name == "Test Root")
    }

    @Test("--root-program picks whose dates apply; both refuses when either refuses; none names what it let through")
    func selection() throws {
        let split = [Self.dated(.mozilla, -1), Self.dated(.chrome, 1)]
        #expect(try !Self.verdict(split, distrust: .both).isTrusted)
        #expect(try !Self.verdict(split, distrust: .mozilla).isTrusted)
        #expect(try Self.verdict(split, distrust: .chrome).isTrusted)
        let optedOut = try Self.verdict(split, distrust: .notApplied(because: "test"))
        #expect(optedOut.isTrusted)
        #expect(optedOut.warnings.contains { $0.code == .rootDistrusted && $0.message.contains("not applied: test") && $0.message.contains("Mozilla") })
    }

    @Test("a removed root: refused from its data's date on; an audit of an earlier time cannot tell, and trusts")
    func removal() throws {
        let since = Fixtures.time.addingTimeInterval(-86_400)
        let removed = RootPrograms.Membership(program: .chrome, status: .removed, statusSince: since)
        let verdict = try Self.verdict([removed])
        #expect(verdict.failures.contains { $0.code == .rootDistrusted && $0.evidence.rootProgram?.status == .removed })
        #expect(try Self.verdict([removed], at: since.addingTimeInterval(-1)).isTrusted)
        #expect(try Self.verdict([RootPrograms.Membership(program: .mozilla, status: .removed)]).failures.contains { $0.code == .rootDistrusted })
    }

    @Test("a verdict cached before a removal's date is not reused after it")
    func cacheBoundary() throws {
        let since = Fixtures.time.addingTimeInterval(60)
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: [Fixtures.rsaRoot]))
        policy.validation.rootPrograms = RootProgramPolicy(data: RootProgramFixtures.programs(Fixtures.rsaRoot, [RootPrograms.Membership(program: .mozilla, status: .removed, statusSince: since)]))
        let manager = TrustManager.single(policy, verdictCache: VerdictCache())
        #expect(try manager.evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: Fixtures.time).isTrusted)
        #expect(try !manager.evaluate(Fixtures.chain("rsa-good"), host: Fixtures.host, at: since.addingTimeInterval(1)).isTrusted)
    }
}

/// Public or private by membership, whichever store or file the anchor came from.
@Suite("root programs: what is public")
struct RootProgramClassificationTests {
    typealias Corpus = PrivatePKICorpusTests

    @Test("a trustme chain (critical SAN beside a subject) is trusted under its root as a private anchor, refused when a program has the root or it is declared public")
    func classification() throws {
        let fixture = try #require(Corpus.all.first { $0.tool.contains("trustme") })
        let host = fixture.hosts[0]
        func verdict(_ anchors: TrustAnchors, programs: RootPrograms = .bundled) throws -> Verdict {
            var policy = TrustPolicy(anchors: anchors)
            policy.validation.rootPrograms.data = programs
            return try Evaluator(policy: policy).evaluate(try fixture.chain, host: host, at: fixture.time)
        }
        let root = try fixture.root
        let byMembership = try verdict(try TrustAnchors(certificates: [root]))
        #expect(byMembership.isTrusted, "\(byMembership.failures)")
        #expect(byMembership.rootPrograms?.anchorIsPublic == false && byMembership.rootPrograms?.anchor == nil)
        let inProgram = try verdict(try TrustAnchors(certificates: [root]),
                                    programs: RootProgramFixtures.programs(root, [RootPrograms.Membership(program: .mozilla, status: .included)]))
        #expect(inProgram.failures.contains { $0.code == .profileViolation }, "a program's root is held to the Baseline Requirements")
        #expect(inProgram.rootPrograms?.anchorIsPublic == true)
        #expect(try !verdict(try TrustAnchors(certificates: [root], classification: .webPKI)).isTrusted)
        let declaredPrivate = try verdict(try TrustAnchors(certificates: [root], classification: .privatePKI),
                                          programs: RootProgramFixtures.programs(root, [RootPrograms.Membership(program: .mozilla, status: .included)]))
        #expect(declaredPrivate.isTrusted, "declared private wins over membership")
    }

    @Test("a real public root given as a file is public: CT applies without declaring it", SharedData.requires("ct", "realworld"))
    func publicRootAsFile() throws {
        let subject = CTPolicyTests.subject
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(subject.file)").path)
        var policy = TrustPolicy(anchors: try TrustAnchors(certificates: RealWorldCorpus.anchors(for: chain)),
                                 nameValidation: .disabled(because: "CT is the subject"))
        policy.validation.certificateTransparency = CertificateTransparency.Requirement(policy: .chrome, logs: CTEvaluationTests.missingOne)
        let verdict = try Evaluator(policy: policy).evaluate(chain, host: nil, at: subject.time)
        #expect(verdict.rootPrograms?.anchorIsPublic == true, "\(String(describing: verdict.rootPrograms))")
        #expect(verdict.failures.contains { $0.code == .ctNotCompliant }, "not exempt: \(String(describing: verdict.certificateTransparency?.compliance))")
    }

    @Test("Chrome's date against the earliest verified SCT, when the policy verifies SCTs", SharedData.requires("ct", "realworld"))
    func chromeDateAgainstSCT() throws {
        let subject = CTPolicyTests.subject
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(subject.file)").path)
        let anchors = RealWorldCorpus.anchors(for: chain)
        let sctTimes = CertificateTransparency.assess(leaf: subject.leaf, issuer: subject.issuer, policy: .chrome, logs: CTLogLists.both, at: subject.time)
            .timestamps.filter { $0.status == .verified }.map(\.sct.timestamp)
        let earliest = try #require(sctTimes.min())
        func verdict(_ date: Date, ct: Bool) throws -> Verdict {
            var policy = TrustPolicy(anchors: try TrustAnchors(certificates: anchors), nameValidation: .disabled(because: "CT is the subject"))
            if ct { policy.validation.certificateTransparency = CertificateTransparency.Requirement(policy: .chrome, logs: CTLogLists.both) }
            let root = try #require(anchors.first { chain.last?.issuer == $0.subject } ?? anchors.first)
            policy.validation.rootPrograms.data = RootProgramFixtures.programs(root, [RootPrograms.Membership(program: .chrome, status: .included, distrustAfter: date)])
            return try Evaluator(policy: policy).evaluate(chain, host: nil, at: subject.time)
        }
        let refused = try verdict(earliest.addingTimeInterval(-1), ct: true)
        let reason = try #require(refused.failures.first { $0.code == .rootDistrusted })
        #expect(reason.evidence.rootProgram?.compared == .earliestVerifiedSCT && reason.evidence.rootProgram?.comparedTime == earliest)
        #expect(try verdict(earliest, ct: true).isTrusted, "an SCT at the date: trusted")
        let withoutCT = try verdict(earliest.addingTimeInterval(-1), ct: false)
        #expect(withoutCT.failures.first { $0.code == .rootDistrusted }?.evidence.rootProgram?.compared ?? .notBefore == .notBefore)
    }

    @Test("real public chains whose roots carry a program's date, issued before it, stay trusted", SharedData.requires("realworld"))
    func realChainsUnchanged() throws {
        var dated = 0
        for file in RealWorldCorpus.chainFiles {
            let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(file)").path)
            let anchors = RealWorldCorpus.anchors(for: chain)
            guard !anchors.isEmpty, let time = RealWorldCorpus.time(for: chain, anchors: anchors) else { continue }
            let policy = TrustPolicy(anchors: try TrustAnchors(certificates: anchors), nameValidation: .disabled(because: "the root is the subject"))
            let verdict = try Evaluator(policy: policy).evaluate(chain, host: nil, at: time)
            guard let root = verdict.rootPrograms?.anchor, root.memberships.contains(where: { $0.distrustAfter != nil }) else { continue }
            dated += 1
            #expect(verdict.isTrusted, "\(file) under \(root.name): \(verdict.failures)")
        }
        #expect(dated >= 1, "the set holds chains under Entrust-era dated roots")
    }
}

/// The CA families of the root programs (what lint says of them: TrustEvaluatorFormatsTests).
@Suite("root programs: CA families")
struct CAFamilyTests {
    @Test("Let's Encrypt's E6 has 5 siblings under ISRG Root X2 (E5–E9), expires 2027-03-12 and publishes partitioned CRLs",
          SharedData.requires("realworld"))
    func letsEncrypt() throws {
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/rpv-letsencrypt_org_valid-04e9d2d4.pem").path)
        let families = RootPrograms.bundled.families
        let e6 = try #require(families.ca(for: chain[1]))
        #expect(e6.name == "E6")
        let time = Timestamp.parse("2024-07-15")!
        #expect(families.siblings(of: e6, at: time).map(\.name) == ["E5", "E6", "E7", "E8", "E9"])
        #expect(e6.validTo.map(Timestamp.day) == "2027-03-12")
        #expect(e6.crlPartitions > 1)
        let later = families.siblings(of: e6, at: Timestamp.parse("2028-01-01")!).map(\.name)
        #expect(!later.contains("E6") && !later.contains("E7"), "expired siblings are no family: \(later)")
        #expect(families.ca(for: Fixtures.rsaIntermediate) == nil)
    }
}

@Suite("root programs: successors")
struct RootSuccessorTests {
    @Test("ISRG Root X1 cross-signs its successor ISRG Root X2: the CCADB lists X2 (its TLS-capable cross-certificate of 2026) among what X1 issued", SharedData.requires("realworld"))
    func crossSignedSuccessor() throws {
        let x1 = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("roots/ISRG-Root-X1-96bcec06.pem").path)[0]
        let issued = RootPrograms.bundled.families.issued(by: x1.sha256Fingerprint, at: Timestamp.parse("2026-06-01")!).map(\.name)
        #expect(issued.contains("ISRG Root X2") && issued.contains("R11"), "\(issued)")
    }
}
