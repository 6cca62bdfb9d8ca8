import Foundation
import PincheckOpenSSL
import TrustEvaluatorCore

/// A Certificate Transparency log made here: an ECDSA P-256 key that signs SCTs.
public struct TestCTLog: Sendable {
    public let name: String
    public let operatorName: String
    let privateKeyPEM: [UInt8]
    public let spkiDER: [UInt8]
    public var logID: [UInt8] { Digest.sha256(spkiDER) }

    /// A new log with a fresh key.
    public init(name: String, operatorName: String) throws {
        let key = try CertificateTransparencyTestLog.makeKey()
        self.name = name
        self.operatorName = operatorName
        self.privateKeyPEM = key.privateKeyPEM
        self.spkiDER = key.spkiDER
    }

    /// An SCT this log signs at `time` for `entry`, as it arrives from `source`.
    package func sct(for entry: SignedCertificateTimestamp.Entry, at time: Date,
                    source: SignedCertificateTimestamp.Source) throws -> SignedCertificateTimestamp {
        let milliseconds = UInt64(time.timeIntervalSince1970 * 1000)
        let message = SignedCertificateTimestamp.signedData(timestampMilliseconds: milliseconds, entry: entry, extensions: [])
        let signature = try CertificateTransparencyTestLog.sign(message, privateKeyPEM: privateKeyPEM)
        return SignedCertificateTimestamp(source: source, version: 0, logID: logID, timestampMilliseconds: milliseconds,
                                          signatureAlgorithm: "ecdsa-with-SHA256", signature: signature)
    }
}

/// Certificates with SCTs from test logs, and a log list that knows those logs.
public enum TestCT {
    /// A Google v3 log list of `logs`, each `state` since `since`, dated `timestamp`, read as a user's would be.
    public static func logList(_ logs: [TestCTLog], state: String = "usable", since: Date, timestamp: Date) throws -> CertificateTransparency.LogList {
        let json = try logListJSON(logs, state: state, since: since, timestamp: timestamp)
        return try CertificateTransparency.LogList(json: Array(json), source: "test log list")
    }

    /// The JSON of `logList(_:state:since:timestamp:)`, as a file a user names would hold.
    public static func logListJSON(_ logs: [TestCTLog], state: String = "usable", since: Date, timestamp: Date) throws -> Data {
        let byOperator = Dictionary(grouping: logs, by: \.operatorName)
        let operators: [[String: Any]] = byOperator.keys.sorted().map { name in
            ["name": name, "email": ["ct@\(name.lowercased()).test"],
             "logs": byOperator[name]!.map { log in
                 ["description": log.name, "log_id": Data(log.logID).base64EncodedString(), "key": Data(log.spkiDER).base64EncodedString(),
                  "url": "https://\(log.name.lowercased()).test/", "mmd": 86400,
                  "state": [state: ["timestamp": ISO8601DateFormatter().string(from: since)]]] as [String: Any]
             }]
        }
        let root: [String: Any] = ["log_list_timestamp": ISO8601DateFormatter().string(from: timestamp), "version": "1.0", "operators": operators]
        return try JSONSerialization.data(withJSONObject: root)
    }

    /// `leaf` re-issued by `issuer` (whose key is `issuerKeyPEM`) with embedded SCTs from `logs`,
    /// timestamped `time`: the SCTs sign the precertificate, the leaf without its SCT list.
    public static func embedding(_ logs: [TestCTLog], in leaf: Certificate, issuer: Certificate, issuerKeyPEM: [UInt8], at time: Date) throws -> Certificate {
        let precertificate = try Certificate(derEncoded: try CertificateTransparencyTestLog.reissue(leaf.handle, sctList: nil, issuerKeyPEM: issuerKeyPEM))
        guard let tbs = precertificate.handle.precertificateTBS else { throw CocoaError(.coderInvalidValue) }
        let entry = SignedCertificateTimestamp.Entry.precertificate(issuerKeyHash: Digest.sha256(issuer.subjectPublicKeyInfoDER), tbsCertificate: tbs)
        let scts = try logs.map { try $0.sct(for: entry, at: time, source: .certificate) }
        return try Certificate(derEncoded: try CertificateTransparencyTestLog.reissue(precertificate.handle, sctList: SignedCertificateTimestamp.encodeList(scts), issuerKeyPEM: issuerKeyPEM))
    }
}

/// The scenario the CT suites share: three test logs of two operators (Alpha twice, Beta), the
/// test PKI's intermediate, and its leaf re-issued a day before the test time with their SCTs.
package enum CTScenario {
    package static let logs: [TestCTLog] = [("Alpha 2030", "Alpha"), ("Alpha 2030b", "Alpha"), ("Beta 2030", "Beta")].map { try! TestCTLog(name: $0.0, operatorName: $0.1) }
    package static let intermediate = TestPKI.certificate("rsa-intermediate")
    package static let intermediateKey = Array(try! Data(contentsOf: URL(fileURLWithPath: TestPKI.path("keys/rsa-intermediate.key"))))
    package static let issued = TestPKI.time.addingTimeInterval(-86_400)
    /// When the logs became usable: a year before ``issued``.
    package static let since = issued.addingTimeInterval(-86_400 * 365)
    /// The leaf with all three SCTs and its intermediate, as served.
    package static let logged = { [try! leaf(with: logs), intermediate] }()

    /// rsa-leaf with an SCT of each of `logs` embedded, issued by ``intermediate`` at ``issued``.
    package static func leaf(with logs: [TestCTLog]) throws -> Certificate {
        try TestCT.embedding(logs, in: TestPKI.certificate("rsa-leaf"), issuer: intermediate, issuerKeyPEM: intermediateKey, at: issued)
    }

    /// `logs` as a usable log list since a year before ``issued``.
    package static func known(_ logs: [TestCTLog] = Self.logs) throws -> CertificateTransparency.Logs {
        CertificateTransparency.Logs([try TestCT.logList(logs, since: since, timestamp: TestPKI.time)])
    }
}
