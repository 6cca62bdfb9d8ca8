import Foundation
import Testing
@testable import PincheckCLI
@testable import PincheckTLS
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// The "Reason codes" article (TrustEvaluator's DocC catalogue) lists exactly the codes the code can produce.
@Suite("Reason codes article")
struct ReasonCodeListTests {
    static var codesInCode: Set<String> {
        let engine: [String] = Reason.Code.all.map(\.description)
        let errors: [String] = PincheckError.Code.all.map(\.description) + ProbeError.Code.all.map(\.description)
        return Set(engine + errors + [Pincheck.usageCode, Pincheck.outputWriteFailedCode])
    }

    static var codesInArticle: Set<String> {
        get throws {
            let section = try String(contentsOf: CLIFixtures.repository.appendingPathComponent("Sources/TrustEvaluatorCore/TrustEvaluatorCore.docc/ReasonCodes.md"), encoding: .utf8)
            // Every `word.word-word` in backquotes.
            var codes = Set<String>()
            for piece in section.split(separator: "`").enumerated() where piece.offset % 2 == 1 {
                let text = String(piece.element)
                if text.range(of: #"^[a-z]+\.[a-z][a-z-]*$"#, options: .regularExpression) != nil { codes.insert(text) }
            }
            return codes
        }
    }

    @Test("every code the code can produce is in the article, and the article lists no other")
    func sameLists() throws {
        let article = try Self.codesInArticle
        #expect(Self.codesInCode.subtracting(article).sorted() == [], "missing from the article")
        #expect(article.subtracting(Self.codesInCode).sorted() == [], "in the article but not in the code")
    }
}
