import Foundation
import Testing
import TrustEvaluator

@Suite("pincheck with Apple's NSPinnedDomains")
struct ATSCommandTests {
    typealias F = CLIFixtures

    @Test("import ats prints Pincheck JSON, and verify --config Info.plist applies the leaf and CA pins")
    func importAndVerify() throws {
        let leaf = try Certificate.load(contentsOf: F.path("rsa-leaf.pem"))[0].publicKeyPin.base64
        let root = try Certificate.load(contentsOf: F.path("rsa-root.pem"))[0].publicKeyPin.base64
        let other = try Certificate.load(contentsOf: F.path("attacker-root.pem"))[0].publicKeyPin.base64
        func plist(ca: String) -> String {
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>NSAppTransportSecurity</key><dict><key>NSPinnedDomains</key><dict>
            <key>www.example.test</key><dict>
            <key>NSPinnedLeafIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>\(leaf)</string></dict></array>
            <key>NSPinnedCAIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>\(ca)</string></dict></array>
            </dict></dict></dict></dict></plist>
            """
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-ats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("Info.plist").path
        let bad = folder.appendingPathComponent("Other.plist").path
        try plist(ca: root).write(toFile: good, atomically: true, encoding: .utf8)
        try plist(ca: other).write(toFile: bad, atomically: true, encoding: .utf8)

        let imported = F.run(["import", "ats", good])
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.contains("\"caPins\"") && imported.output.contains("\"leafPins\""))

        let chain = F.path("chains/rsa-good.pem")
        let trusted = F.run(["verify", chain, "--host", "www.example.test", "--config", good] + F.anchors + F.at)
        #expect(trusted.status == 0, "\(trusted.output)\(trusted.errors)")
        let refused = F.run(["verify", chain, "--host", "www.example.test", "--config", bad] + F.anchors + F.at)
        #expect(refused.status == 1)
        #expect(refused.output.contains("pin.mismatch"))
    }
}
