import Foundation
import Testing
import TrustEvaluatorCore

/// A small PKI made with the openssl CLI for one test, as OkHttp's tests make theirs with
/// `HeldCertificate.Builder`: keys may be shared between certificates, CA bits and path lengths
/// set per certificate. Every certificate is valid for a century from when it is made.
package final class MadePKI {
    package let folder: URL
    private var serial = 0

    package init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    package struct Held {
        package let certificate: Certificate
        package let certificatePath: String
        package let keyPath: String
    }

    /// A new P-256 key, returned as its file.
    package func key() throws -> String {
        let path = folder.appendingPathComponent("key-\(UUID().uuidString).pem").path
        try #require(try OpenSSLCLI.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path]) == 0)
        return path
    }

    /// A certificate for `commonName`: a CA with at most `maxIntermediates` below it when given
    /// (OkHttp's `certificateAuthority(n)`), otherwise an end entity; signed by `issuer`, or self-signed.
    /// `extensions`: more lines of openssl's extension syntax (`authorityInfoAccess=caIssuers;URI:…`).
    package func make(_ commonName: String, ca maxIntermediates: Int? = nil, dnsNames: [String] = [], key: String? = nil, signedBy issuer: Held? = nil,
                      extensions more: [String] = []) throws -> Held {
        serial += 1
        let keyPath = try key ?? self.key()
        let base = folder.appendingPathComponent("cert-\(serial)").path
        var extensions = [maxIntermediates.map { "basicConstraints=critical,CA:TRUE,pathlen:\($0)" } ?? "basicConstraints=critical,CA:FALSE",
                          maxIntermediates == nil ? "keyUsage=critical,digitalSignature" : "keyUsage=critical,keyCertSign,cRLSign",
                          "subjectKeyIdentifier=hash"]
        if issuer != nil { extensions.append("authorityKeyIdentifier=keyid") }
        if maxIntermediates == nil { extensions.append("extendedKeyUsage=serverAuth") }
        if !dnsNames.isEmpty { extensions.append("subjectAltName=" + dnsNames.map { "DNS:\($0)" }.joined(separator: ",")) }
        extensions += more
        try (["[v3]"] + extensions).joined(separator: "\n").write(toFile: base + ".cnf", atomically: true, encoding: .utf8)
        try #require(try OpenSSLCLI.run(["req", "-new", "-key", keyPath, "-subj", "/CN=\(commonName)", "-out", base + ".csr"]) == 0)
        var arguments = ["x509", "-req", "-in", base + ".csr", "-days", "36500", "-set_serial", "\(serial)",
                         "-extfile", base + ".cnf", "-extensions", "v3", "-out", base + ".pem"]
        if let issuer { arguments += ["-CA", issuer.certificatePath, "-CAkey", issuer.keyPath] } else { arguments += ["-key", keyPath] }
        try #require(try OpenSSLCLI.run(arguments) == 0, "openssl x509 -req failed for \(commonName)")
        return Held(certificate: try Certificate.load(contentsOf: base + ".pem")[0], certificatePath: base + ".pem", keyPath: keyPath)
    }
}
