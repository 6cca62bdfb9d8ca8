import Foundation
import Testing
import PincheckFuzzing

/// Every corpus and regression input, through the same code the fuzzers run: a crash found once
/// stays fixed. (`scripts/fuzz.sh` explores; this replays, fast and deterministic.)
@Suite("fuzz corpus replay")
struct CorpusReplayTests {
    static let fuzzRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(_ target: String) -> [URL] {
        var urls: [URL] = []
        for folder in ["Corpus", "Regressions"] {
            let directory = fuzzRoot.appendingPathComponent(folder).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            urls += names.sorted().map { directory.appendingPathComponent($0) }
        }
        return urls
    }

    @Test("each target's corpus replays without a crash or a broken oracle", arguments: FuzzTargets.all.map(\.name))
    func replay(target: String) throws {
        let run = try #require(FuzzTargets.all.first { $0.name == target }?.run)
        let inputs = Self.inputs(target)
        #expect(inputs.count >= 5, "\(target) has a seeded corpus")
        for url in inputs { run(Array(try Data(contentsOf: url))) }
    }

    @Test("hand-made edge cases", arguments: FuzzTargets.all.map(\.name))
    func edgeCases(target: String) throws {
        let run = try #require(FuzzTargets.all.first { $0.name == target }?.run)
        let sequence: [UInt8] = [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]  // a SEQUENCE claiming 4 GiB
        let nested = [UInt8](repeating: 0x30, count: 10_000).enumerated().flatMap { [$0.element, UInt8(truncatingIfNeeded: 10_000 - $0.offset)] }
        for input in [[], [0x30], sequence, nested, Array("-----BEGIN CERTIFICATE-----\n".utf8), [UInt8](repeating: 0, count: 1 << 16)] {
            run(input)
        }
    }
}
