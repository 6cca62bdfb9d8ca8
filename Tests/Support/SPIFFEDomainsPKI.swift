import Foundation

/// Two SPIFFE trust domains, `a.test` and `b.test`, each with its own root CA, and client
/// certificates that test a server judging clients by trust domain. Made once per test run with
/// the openssl command (EC P-256, clientAuth, valid from now for 100 years: judge them at
/// ``TestPKI/time``).
public enum SPIFFEDomainsPKI {
    public struct Client: Sendable {
        public let certificate: String
        public let key: String
    }

    public struct Files: Sendable {
        /// A SPIFFE bundle folder: `a.test.trust-bundle.pem`, `b.test.trust-bundle.pem`.
        public let bundleFolder: String
        public let rootA: String, rootB: String
        /// `spiffe://a.test/ns/prod/sa/api` under A's CA.
        public let clientA: Client
        /// `spiffe://b.test/sa/web` under B's CA.
        public let clientB: Client
        /// `spiffe://a.test/ns/prod/sa/api` — A's identity — under **B's** CA.
        public let bClaimingA: Client
        /// Only `DNS:api.a.test`, under A's CA.
        public let noSPIFFEID: Client
        /// `spiffe://a.test/one` and `spiffe://a.test/two`, under A's CA.
        public let twoSPIFFEIDs: Client
        /// `spiffe://c.test/sa/x`, a domain without a bundle, under A's CA.
        public let unknownDomain: Client
        /// `spiffe://a.test/sa/revoked` under A's CA, serial 0x5001, which ``crlA`` revokes.
        public let revokedA: Client
        /// A's CRL, revoking serial 0x5001.
        public let crlA: String
    }

    public static let identityA = "spiffe://a.test/ns/prod/sa/api"
    public static let identityB = "spiffe://b.test/sa/web"

    public static let files: Files = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pincheck-spiffe-\(UUID().uuidString)").path
        let bundles = folder + "/bundles"
        try! FileManager.default.createDirectory(atPath: bundles, withIntermediateDirectories: true)
        func run(_ arguments: [String]) { precondition(try! OpenSSLCLI.run(arguments) == 0, "openssl \(arguments.joined(separator: " "))") }
        func root(_ name: String) -> (certificate: String, key: String) {
            let key = "\(folder)/\(name)-root.key", certificate = "\(folder)/\(name)-root.pem"
            run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", certificate,
                 "-days", "36500", "-subj", "/O=Pincheck Tests/CN=Trust domain \(name) CA",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
            return (certificate, key)
        }
        let a = root("a.test"), b = root("b.test")
        try! FileManager.default.copyItem(atPath: a.certificate, toPath: bundles + "/a.test.trust-bundle.pem")
        try! FileManager.default.copyItem(atPath: b.certificate, toPath: bundles + "/b.test.trust-bundle.pem")
        var serial = 0x4000
        func client(_ name: String, names: String, issuer: (certificate: String, key: String), serial fixed: Int? = nil) -> Client {
            serial += 1
            let key = "\(folder)/\(name).key", request = "\(folder)/\(name).csr", certificate = "\(folder)/\(name).pem"
            let extensions = "\(folder)/\(name).cnf"
            try! "subjectAltName=\(names)\nextendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=critical,CA:FALSE\n"
                .write(toFile: extensions, atomically: true, encoding: .utf8)
            run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request,
                 "-subj", "/O=Pincheck Tests/CN=\(name)"])
            run(["x509", "-req", "-in", request, "-CA", issuer.certificate, "-CAkey", issuer.key, "-set_serial", "\(fixed ?? serial)",
                 "-days", "36500", "-sha256", "-extfile", extensions, "-out", certificate])
            return Client(certificate: certificate, key: key)
        }
        let revoked = client("revoked-a", names: "URI:spiffe://a.test/sa/revoked", issuer: a, serial: 0x5001)
        // A's CRL: `openssl ca -gencrl` over an index that lists serial 5001 as revoked.
        let index = "\(folder)/index.txt", config = "\(folder)/ca.cnf", crl = "\(folder)/a.test.crl.pem"
        try! "R\t491231000000Z\t260101000000Z\t5001\tunknown\t/O=Pincheck Tests/CN=revoked-a\n".write(toFile: index, atomically: true, encoding: .utf8)
        try! "01\n".write(toFile: "\(folder)/crlnumber", atomically: true, encoding: .utf8)
        try! """
            [ca]
            default_ca = domain
            [domain]
            database = \(index)
            crlnumber = \(folder)/crlnumber
            default_md = sha256
            default_crl_days = 36500
            crl_extensions = crl_ext
            [crl_ext]
            authorityKeyIdentifier = keyid:always
            """.write(toFile: config, atomically: true, encoding: .utf8)
        run(["ca", "-gencrl", "-config", config, "-keyfile", a.key, "-cert", a.certificate, "-out", crl])
        return Files(
            bundleFolder: bundles, rootA: a.certificate, rootB: b.certificate,
            clientA: client("client-a", names: "URI:\(identityA)", issuer: a),
            clientB: client("client-b", names: "URI:\(identityB)", issuer: b),
            bClaimingA: client("b-claiming-a", names: "URI:\(identityA)", issuer: b),
            noSPIFFEID: client("no-spiffe-id", names: "DNS:api.a.test", issuer: a),
            twoSPIFFEIDs: client("two-spiffe-ids", names: "URI:spiffe://a.test/one,URI:spiffe://a.test/two", issuer: a),
            unknownDomain: client("unknown-domain", names: "URI:spiffe://c.test/sa/x", issuer: a),
            revokedA: revoked, crlA: crl)
    }()
}
