import Foundation
import Testing
@testable import PincheckCLI
@testable import PincheckTLS
@testable import TrustEvaluator

/// The README's "Reason codes" section lists exactly the codes the code can produce.
@Suite("README reason codes")
struct ReasonCodeListTests {
    static var codesInCode: Set<String> {
        Set(Reason.Code.all.map(\.description) + PincheckError.Code.all.map(\.description) + ProbeError.Code.all.map(\.description)
            + CheckWarning.Code.allCases.map(\.rawValue) + [Pincheck.usageCode, Pincheck.outputWriteFailedCode])
    }

    static var codesInREADME: Set<String> {
        get throws {
            let readme = try String(contentsOf: CLIFixtures.repository.appendingPathComponent("README.md"), encoding: .utf8)
            let section = try #require(readme.components(separatedBy: "\n## Reason codes\n").dropFirst().first?
                .components(separatedBy: "\n## ").first)
            // Every `word.word-word` in backquotes.
            var codes = Set<String>()
            for piece in section.split(separator: "`").enumerated() where piece.offset % 2 == 1 {
                let text = String(piece.element)
                if text.range(of: #"^[a-z]+\.[a-z][a-z-]*$"#, options: .regularExpression) != nil { codes.insert(text) }
            }
            return codes
        }
    }

    @Test("every code the code can produce is in the README, and the README lists no other")
    func sameLists() throws {
        let readme = try Self.codesInREADME
        #expect(Self.codesInCode.subtracting(readme).sorted() == [], "missing from the README")
        #expect(readme.subtracting(Self.codesInCode).sorted() == [], "in the README but not in the code")
    }
}
