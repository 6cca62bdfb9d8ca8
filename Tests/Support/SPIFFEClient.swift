import Foundation

/// A client certificate for `spiffe://pincheck.test/ns/prod/sa/api` under the RSA test
/// intermediate (EKU clientAuth), made once per test run with the openssl command.
public enum SPIFFEClient {
    public static let identity = "spiffe://pincheck.test/ns/prod/sa/api"
    public struct Files: Sendable { public let certificate: String, key: String }

    public static let files: Files = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-mtls-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let key = "\(folder)/client.key", request = "\(folder)/client.csr", certificate = "\(folder)/client.pem"
        let extensions = "\(folder)/extensions.cnf"
        try! "subjectAltName=URI:\(identity)\nextendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=critical,CA:FALSE\n"
            .write(toFile: extensions, atomically: true, encoding: .utf8)
        precondition(try! OpenSSLCLI.run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                          "-keyout", key, "-out", request, "-subj", "/O=Pincheck Tests/CN=api workload"]) == 0)
        precondition(try! OpenSSLCLI.run(["x509", "-req", "-in", request, "-CA", TestPKI.path("rsa-intermediate.pem"),
                                          "-CAkey", TestPKI.path("keys/rsa-intermediate.key"), "-set_serial", "4242", "-days", "36500",
                                          "-sha256", "-extfile", extensions, "-out", certificate]) == 0)
        return Files(certificate: certificate, key: key)
    }()
}
