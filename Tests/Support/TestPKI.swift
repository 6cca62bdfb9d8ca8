import FoundationEssentials
import TrustEvaluator

/// The committed test PKI (Certificates/, made by scripts/make-certificates.sh), for every test
/// target: one place knows where it is and when it is judged.
public enum TestPKI {
    /// 2030-06-01T00:00:00Z: every "good" certificate is valid then, the expired one is not.
    public static let time = Date(timeIntervalSince1970: 1_906_502_400)

    /// A file of the test PKI, e.g. `rsa-root.pem`, `keys/rsa-leaf.key`, `chains/rsa-good.pem`.
    public static func path(_ relative: String) -> String { TestCertificates.path(relative) }

    /// One certificate, `Certificates/NAME.pem`.
    public static func certificate(_ name: String) -> Certificate {
        try! Certificate.load(contentsOf: path("\(name).pem"))[0]
    }

    /// A served chain, `Certificates/chains/NAME.pem`.
    public static func chain(_ name: String) -> [Certificate] {
        try! Certificate.load(contentsOf: path("chains/\(name).pem"))
    }
}
