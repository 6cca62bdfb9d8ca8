import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// `../shared/realworld/`: 197 chains public CAs issued to real sites (2014–2026) and their
/// Mozilla roots; browsers trusted each one for its names at its time (the folder's README).
enum RealWorldCorpus {
    static let folder = SharedData.url("realworld")

    static var chainFiles: [String] {
        let chains = folder.appendingPathComponent("chains").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: chains)) ?? [])
            .filter { $0.hasSuffix(".pem") }.sorted()
    }

    static let roots: [Certificate] = {
        let path = folder.appendingPathComponent("roots").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { $0.hasSuffix(".pem") }.sorted().flatMap { name in
            (try? Certificate.load(contentsOf: "\(path)/\(name)")) ?? []
        }
    }()

    /// The roots a served certificate names as its issuer (or is): usually the last one's issuer;
    /// chains that end in a cross-certificate from a root outside the set (Starfield Class 2 above
    /// Amazon Root CA 1) reach their root from an earlier certificate.
    static func anchors(for chain: [Certificate]) -> [Certificate] {
        roots.filter { root in chain.contains { $0.issuer == root.subject || $0.subject == root.subject } }
    }

    /// A time inside the validity of the leaf, its root and as many served certificates as
    /// overlap with them (servers sometimes send an old cross-certificate along).
    static func time(for chain: [Certificate], anchors: [Certificate]) -> Date? {
        guard let leaf = chain.first else { return nil }
        var from = leaf.notBefore, until = leaf.notAfter
        for certificate in anchors + chain.dropFirst() {
            let narrowed = (max(from, certificate.notBefore), min(until, certificate.notAfter))
            if narrowed.0 < narrowed.1 { (from, until) = narrowed }
        }
        return from < until ? from.addingTimeInterval(until.timeIntervalSince(from) / 2) : nil
    }

    /// Every name of the leaf's subjectAltName as a host: DNS names (a wildcard's `*` replaced by
    /// a label) and IP addresses.
    static func hosts(of leaf: Certificate) -> [String] {
        leaf.dnsNames.map { $0.hasPrefix("*.") ? "wildcard-host" + $0.dropFirst(1) : $0 } + leaf.ipAddresses
    }
}

@Suite("The real world: chains public CAs issued, judged by the default policy", SharedData.requires("realworld"))
struct RealWorldChainTests {
    @Test("the corpus is there and whole")
    func corpusPresent() {
        #expect(RealWorldCorpus.chainFiles.count == 197, "expected ../shared/realworld/chains with 197 chains")
        #expect(RealWorldCorpus.roots.count == 38)
    }

    @Test("every chain is trusted for every name of its leaf, at a time inside its validity, against its root",
          arguments: RealWorldCorpus.chainFiles)
    func trusted(file: String) throws {
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(file)").path)
        let anchors = RealWorldCorpus.anchors(for: chain)
        try #require(!anchors.isEmpty, "no root in ../shared/realworld/roots for \(chain.last!.issuer)")
        let time = try #require(RealWorldCorpus.time(for: chain, anchors: anchors))
        let evaluator = Evaluator(policy: TrustPolicy(anchors: try TrustAnchors(certificates: anchors)))
        let hosts = RealWorldCorpus.hosts(of: chain[0])
        try #require(!hosts.isEmpty)
        for host in hosts {
            let verdict = try evaluator.evaluate(chain, host: host, at: time)
            #expect(verdict.isTrusted, "\(file) for \(host) at \(Timestamp.iso8601(time)): \(verdict.failures.map { "\($0.code): \($0.message)" })")
            // The name is matched, not merely tolerated: the host is one the leaf names.
            #expect(verdict.checkedHost == host)
        }
    }

    @Test("the leaf's issuer given as the only anchor ends the path there, as any trusted certificate does in browsers",
          arguments: RealWorldCorpus.chainFiles)
    func intermediateAnchor(file: String) throws {
        let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(file)").path)
        guard chain.count > 1, chain[1].subject == chain[0].issuer, !chain[1].isSelfSigned else { return }
        let time = try #require(RealWorldCorpus.time(for: [chain[0]], anchors: [chain[1]]))
        let evaluator = Evaluator(policy: TrustPolicy(anchors: try TrustAnchors(certificates: [chain[1]])))
        let host = try #require(RealWorldCorpus.hosts(of: chain[0]).first)
        let verdict = try evaluator.evaluate(chain, host: host, at: time)
        #expect(verdict.isTrusted, "\(file) for \(host) at \(Timestamp.iso8601(time)): \(verdict.failures.map { "\($0.code): \($0.message)" })")
        #expect(verdict.verifiedPath?.certificates == Array(chain.prefix(2)), "\(file)")
    }

    @Test("a real chain is refused for a name its leaf does not carry, and after its leaf expired")
    func refusals() throws {
        for file in RealWorldCorpus.chainFiles.prefix(20) {
            let chain = try Certificate.load(contentsOf: RealWorldCorpus.folder.appendingPathComponent("chains/\(file)").path)
            let anchors = RealWorldCorpus.anchors(for: chain)
            let time = try #require(RealWorldCorpus.time(for: chain, anchors: anchors))
            let evaluator = Evaluator(policy: TrustPolicy(anchors: try TrustAnchors(certificates: anchors)))
            let wrongHost = try evaluator.evaluate(chain, host: "not-this-site.invalid", at: time)
            #expect(wrongHost.failures.map(\.code) == [.hostMismatch], "\(file)")
            let late = try evaluator.evaluate(chain, host: RealWorldCorpus.hosts(of: chain[0])[0], at: chain[0].notAfter.addingTimeInterval(86_400))
            #expect(late.failures.contains { $0.code == .expired }, "\(file)")
        }
    }
}
