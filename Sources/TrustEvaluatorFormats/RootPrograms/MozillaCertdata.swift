import FoundationEssentials
import TrustEvaluatorCore

/// Mozilla's root store as NSS ships it (`lib/ckfw/builtins/certdata.txt`): certificate objects,
/// and trust objects that say what each is trusted for and until when.
///
/// A trust object is joined to its certificate by issuer and serial number, never by position.
/// A distrust date may sit on either (Izenpe.com's is on its trust object, while its certificate
/// object says `CK_FALSE`): the date is the certificate's if it has one, else the trust object's.
struct MozillaCertdata {
    /// One root, with what the trust object says of TLS servers.
    typealias Root = RootProgramFacts.MozillaRoot

    let roots: [Root]

    /// One object of the file: its attributes by name, each the raw value (bytes of a
    /// `MULTILINE_OCTAL`, the text of anything else).
    private struct Object {
        let line: Int
        let kind: String
        var attributes: [String: Attribute] = [:]
    }

    private enum Attribute {
        case bytes([UInt8])
        case text(String)
    }

    /// Reads a `certdata.txt`.
    /// - Throws: `PincheckError` (`input.root-program-data`) naming the line that is not what
    ///   certdata.txt holds, a certificate object that does not parse, or a certificate with no trust object.
    init(_ bytes: [UInt8], source: String) throws(PincheckError) {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PincheckError(.malformedRootProgramData, "not UTF-8 text: not a certdata.txt", source: source)
        }
        let roots = try Self.roots(of: try Self.objects(in: text, source: source), source: source)
        guard !roots.isEmpty else { throw PincheckError(.malformedRootProgramData, "no certificate object: not a certdata.txt", source: source) }
        self.roots = roots
    }

    private static func malformed(_ line: Int, _ message: String, source: String) -> PincheckError {
        PincheckError(.malformedRootProgramData, "line \(line): \(message)", source: source)
    }

    /// The file's objects and their attributes, as written.
    private static func objects(in text: String, source: String) throws(PincheckError) -> [Object] {
        func malformed(_ line: Int, _ message: String) -> PincheckError { Self.malformed(line, message, source: source) }
        var objects: [Object] = []
        var octal: (name: String, bytes: [UInt8], line: Int)?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw[...]
            if var open = octal {
                if line == "END" {
                    guard !objects.isEmpty else { throw malformed(open.line, "an attribute before any CKA_CLASS") }
                    objects[objects.count - 1].attributes[open.name] = .bytes(open.bytes)
                    octal = nil
                    continue
                }
                guard let decoded = Self.octalBytes(line) else { throw malformed(number, "not a line of \\ooo octal escapes inside \(open.name)") }
                open.bytes += decoded
                octal = open
                continue
            }
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("BEGINDATA") { continue }
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count >= 2, fields[0].hasPrefix("CKA_") else { throw malformed(number, "expected \"CKA_NAME TYPE VALUE\"") }
            let name = String(fields[0])
            if fields[1] == "MULTILINE_OCTAL" {
                octal = (name, [], number)
                continue
            }
            guard fields.count == 3 else { throw malformed(number, "\(name) has no value") }
            if name == "CKA_CLASS" {
                objects.append(Object(line: number, kind: String(fields[2])))
                continue
            }
            guard !objects.isEmpty else { throw malformed(number, "an attribute before any CKA_CLASS") }
            var value = String(fields[2])
            if fields[1] == "UTF8", value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast())
            }
            objects[objects.count - 1].attributes[name] = .text(value)
        }
        if let open = octal { throw malformed(open.line, "\(open.name) has no END") }
        return objects

    }

    /// The certificate objects with their trust objects' server-authentication trust.
    private static func roots(of objects: [Object], source: String) throws(PincheckError) -> [Root] {
        func malformed(_ line: Int, _ message: String) -> PincheckError { Self.malformed(line, message, source: source) }
        struct Trust { let trusted: Bool; let distrustAfter: Date? }
        var trusts: [[UInt8]: Trust] = [:]
        for object in objects where object.kind == "CKO_NSS_TRUST" {
            guard case .bytes(let issuer) = object.attributes["CKA_ISSUER"], case .bytes(let serial) = object.attributes["CKA_SERIAL_NUMBER"],
                case .text(let server) = object.attributes["CKA_TRUST_SERVER_AUTH"]
            else {
                throw malformed(object.line, "a trust object without CKA_ISSUER, CKA_SERIAL_NUMBER and CKA_TRUST_SERVER_AUTH")
            }
            let date = try distrustDate(object.attributes["CKA_NSS_SERVER_DISTRUST_AFTER"], line: object.line, source: source)
            trusts[issuer + [0] + serial] = Trust(trusted: server == "CKT_NSS_TRUSTED_DELEGATOR", distrustAfter: date)
        }
        var roots: [Root] = []
        for object in objects where object.kind == "CKO_CERTIFICATE" {
            guard case .bytes(let der) = object.attributes["CKA_VALUE"], case .bytes(let issuer) = object.attributes["CKA_ISSUER"],
                case .bytes(let serial) = object.attributes["CKA_SERIAL_NUMBER"]
            else {
                throw malformed(object.line, "a certificate object without CKA_VALUE, CKA_ISSUER and CKA_SERIAL_NUMBER")
            }
            let certificate: Certificate
            do { certificate = try Certificate(derEncoded: der) } catch {
                throw malformed(object.line, "its CKA_VALUE is not a certificate: \(error.message)")
            }
            guard let trust = trusts[issuer + [0] + serial] else {
                throw malformed(object.line, "certificate \(certificate.subject) has no trust object (none with its issuer and serial number)")
            }
            let label: String = if case .text(let text) = object.attributes["CKA_LABEL"] { text } else { certificate.subject }
            let own = try distrustDate(object.attributes["CKA_NSS_SERVER_DISTRUST_AFTER"], line: object.line, source: source)
            roots.append(
                Root(
                    label: label, sha256: certificate.sha256Fingerprint, subjectAndKey: RootPrograms.subjectAndKey(of: certificate),
                    publicKeySHA256: certificate.publicKeyPin.digest,
                    trustedForServers: trust.trusted, distrustAfter: own ?? trust.distrustAfter, notBefore: certificate.notBefore))
        }
        return roots
    }

    /// `\062\064…` as bytes; nil for anything else.
    private static func octalBytes(_ line: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var utf8 = line.utf8[...]
        while !utf8.isEmpty {
            guard utf8.count >= 4, utf8.first == UInt8(ascii: "\\") else { return nil }
            var value = 0
            for digit in utf8.dropFirst().prefix(3) {
                guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { return nil }
                value = value * 8 + Int(digit - UInt8(ascii: "0"))
            }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
            utf8 = utf8.dropFirst(4)
        }
        return bytes
    }

    /// A distrust attribute: `CK_BBOOL CK_FALSE` is no date; octal bytes are a UTCTime
    /// (`YYMMDDHHMMSSZ`) or GeneralizedTime (`YYYYMMDDHHMMSSZ`).
    private static func distrustDate(_ attribute: Attribute?, line: Int, source: String) throws(PincheckError) -> Date? {
        switch attribute {
        case nil, .text: return nil
        case .bytes(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self), let date = timeValue(text) else {
                throw PincheckError(
                    .malformedRootProgramData, "line \(line): CKA_NSS_SERVER_DISTRUST_AFTER is not a UTCTime or GeneralizedTime", source: source)
            }
            return date
        }
    }

    /// `241130235959Z` (UTCTime: years 50–99 are 19xx) or `20241130235959Z`.
    static func timeValue(_ text: String) -> Date? {
        guard text.hasSuffix("Z") else { return nil }
        let digits = Array(text.utf8.dropLast())
        guard digits.count == 12 || digits.count == 14, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        let numbers = digits.map { Int($0 - UInt8(ascii: "0")) }
        func number(_ at: Int, _ count: Int) -> Int { numbers[at..<at + count].reduce(0) { $0 * 10 + $1 } }
        var offset = 0
        let year: Int
        if digits.count == 12 {
            let short = number(0, 2)
            year = short >= 50 ? 1900 + short : 2000 + short
            offset = 2
        } else {
            year = number(0, 4)
            offset = 4
        }
        let (month, day, hour, minute, second) = (
            number(offset, 2), number(offset + 2, 2), number(offset + 4, 2), number(offset + 6, 2), number(offset + 8, 2)
        )
        let dayText = "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
        guard hour < 24, minute < 60, second < 60, let start = Timestamp.parseDay(dayText) else { return nil }
        return start.addingTimeInterval(TimeInterval(hour * 3600 + minute * 60 + second))
    }
}
