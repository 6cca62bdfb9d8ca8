import Foundation
import Testing

/// Every Swift snippet of the README, docs/ and the DocC guides is compiled by this target, as
/// written, from the files scripts/snippets.py generates into Generated/ (scripts/test.sh runs
/// `scripts/snippets.py --check`, which fails when they differ from the documents).
@Suite("documentation snippets")
struct SnippetTests {
    @Test("every swift block of the documents is compiled here, or named with its reason")
    func everySnippetAccountedFor() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var documents = [root.appendingPathComponent("README.md")]
        for folder in ["docs", "Sources"] {
            let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                // docs/*.md, and the articles of the DocC catalogues under Sources/.
                if url.pathExtension == "md", folder == "docs" ? url.deletingLastPathComponent().lastPathComponent == "docs"
                    : url.path.contains(".docc/") {
                    documents.append(url)
                }
            }
        }
        var blocks = 0
        for document in documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            blocks += text.components(separatedBy: "\n").filter { $0 == "```swift" }.count
        }
        #expect(blocks > 0)
        #expect(blocks == GeneratedSnippets.compiled + GeneratedSnippets.skipped,
                "the documents have \(blocks) swift blocks; Generated/ accounts for \(GeneratedSnippets.compiled + GeneratedSnippets.skipped): run scripts/snippets.py")
    }
}
