import Foundation
@testable import TrustEvaluator

/// The committed test PKI (Certificates/, made by scripts/make-certificates.sh).
enum Fixtures {
    /// 2030-06-01T00:00:00Z: every "good" certificate is valid then, the expired one is not.
    static let time = Date(timeIntervalSince1970: 1_906_502_400)

    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Certificates")

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// One certificate, `Certificates/NAME.pem`.
    static func certificate(_ name: String) -> Certificate {
        try! Certificate.load(contentsOf: path("\(name).pem"))[0]
    }

    /// A served chain, `Certificates/chains/NAME.pem`.
    static func chain(_ name: String) -> [Certificate] {
        try! Certificate.load(contentsOf: path("chains/\(name).pem"))
    }

    static let rsaRoot = certificate("rsa-root")
    static let ecRoot = certificate("ec-root")
    /// Both test roots: the anchors of most tests.
    static let anchors = try! TrustAnchors(certificates: [rsaRoot, ecRoot])

    /// `NAME sha256/…` lines of Certificates/pins.txt, computed by the openssl CLI.
    static func referenceLines(_ file: String) -> [String: String] {
        let text = try! String(contentsOfFile: path(file), encoding: .utf8)
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { result[String(parts[0])] = String(parts[1]) }
        }
        return result
    }
}
