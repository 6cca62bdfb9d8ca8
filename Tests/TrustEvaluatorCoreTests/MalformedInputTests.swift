import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("Malformed input: errors name the code, the file and the position")
struct MalformedInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let file: String
        let code: PincheckError.Code
        /// Words the message must contain (the position inside the input, where there is one).
        let mentions: [String]
        var testDescription: String { file }
    }

    /// The line of the `n`th BEGIN line of a fixture, read from the file (it moves when the PKI is regenerated).
    private static func beginLine(_ n: Int, of file: String) -> Int {
        let text = try! String(contentsOfFile: Fixtures.path(file), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.indices.filter { lines[$0].hasPrefix("-----BEGIN ") }[n - 1] + 1
    }

    static let cases: [Case] = [
        Case(file: "malformed/empty.pem", code: .emptyInput, mentions: ["empty"]),
        Case(file: "malformed/garbage.pem", code: .malformedPEM, mentions: ["line 1", "base64"]),
        Case(file: "malformed/bad-der-in-pem.pem", code: .malformedDER, mentions: ["PEM block #1", "line 1"]),
        Case(file: "malformed/truncated.der", code: .malformedDER, mentions: ["DER"]),
        Case(file: "malformed/truncated.pem", code: .malformedPEM, mentions: ["line 1", "END"]),
        Case(file: "malformed/private-key.pem", code: .unexpectedPEMBlock, mentions: ["PEM block #1", "line 1", "PRIVATE KEY"]),
        Case(file: "malformed/not-pem.txt", code: .malformedPEM, mentions: ["PEM", "DER"]),
        Case(file: "malformed/second-cert-broken.pem", code: .malformedDER,
             mentions: ["PEM block #2", "line \(beginLine(2, of: "malformed/second-cert-broken.pem"))"]),
    ]

    @Test("each malformed fixture throws the right code, its path and the position", arguments: cases)
    func malformedFile(_ testCase: Case) {
        let path = Fixtures.path(testCase.file)
        let error = #expect(throws: PincheckError.self) { try Certificate.load(contentsOf: path) }
        #expect(error?.code == testCase.code, "\(String(describing: error))")
        #expect(error?.source == path)
        for word in testCase.mentions {
            #expect(error?.message.contains(word) == true, "\"\(error?.message ?? "")\" should mention \"\(word)\"")
        }
        // The description a user sees starts with the file.
        #expect(error?.description.hasPrefix(path + ": ") == true)
    }

    @Test("the second block is the broken one: the first block alone parses")
    func secondCertificateBrokenIsAboutTheSecondBlock() throws {
        let text = try String(contentsOfFile: Fixtures.path("malformed/second-cert-broken.pem"), encoding: .utf8)
        let firstBlockEnd = try #require(text.range(of: "-----END CERTIFICATE-----\n"))
        let first = try Certificate.parseBundle(Array(text[..<firstBlockEnd.upperBound].utf8))
        #expect(first == [Fixtures.certificate("rsa-leaf")])
    }

    @Test("a missing file is .unreadableFile naming the file")
    func missingFile() {
        let path = Fixtures.path("does-not-exist.pem")
        let error = #expect(throws: PincheckError.self) { try Certificate.load(contentsOf: path) }
        #expect(error?.code == .unreadableFile)
        #expect(error?.source == path)
        #expect(error?.message.contains("does not exist") == true)
    }

    @Test("a directory where a file is expected is .unreadableFile")
    func directoryIsUnreadable() {
        let path = Fixtures.path("chains")
        let error = #expect(throws: PincheckError.self) { try Certificate.load(contentsOf: path) }
        #expect(error?.code == .unreadableFile)
        #expect(error?.source == path)
    }

    @Test("DER followed by trailing bytes is rejected, saying how many")
    func derWithTrailingBytes() {
        let der = Fixtures.certificate("rsa-leaf").derBytes
        for trailing in [[0x00], [0x30, 0x00], Array(repeating: UInt8(0xFF), count: 17)] as [[UInt8]] {
            let error = #expect(throws: PincheckError.self) { try Certificate(derEncoded: der + trailing, source: "input.der") }
            #expect(error?.code == .malformedDER)
            #expect(error?.source == "input.der")
            #expect(error?.message.contains("\(trailing.count) bytes after") == true, "\(String(describing: error))")
            // The same through the bundle parser (DER is recognised by its leading SEQUENCE).
            let viaBundle = #expect(throws: PincheckError.self) { try Certificate.parseBundle(der + trailing) }
            #expect(viaBundle?.code == .malformedDER)
        }
    }

    @Test("DER certificates one after another load as a bundle, in order; a bad one among them is an error naming it")
    func derSequence() throws {
        let names = ["rsa-leaf", "rsa-intermediate", "rsa-root"]
        let der = names.flatMap { Fixtures.certificate($0).derBytes }
        #expect(try Certificate.parseBundle(der).map(\.subject) == names.map { Fixtures.certificate($0).subject })
        let cut = Array(der.dropLast(10))
        let error = #expect(throws: PincheckError.self) { try Certificate.parseBundle(cut, source: "raw.der") }
        #expect(error?.code == .malformedDER)
        #expect(error?.message.contains("DER certificate #3") == true, "\(String(describing: error))")
    }

    @Test("DER cut short anywhere is rejected", arguments: [1, 4, 100, 939])
    func truncatedDER(length: Int) {
        let der = Array(Fixtures.certificate("rsa-leaf").derBytes.prefix(length))
        let error = #expect(throws: PincheckError.self) { try Certificate(derEncoded: der) }
        #expect(error?.code == .malformedDER)
    }

    @Test("an empty byte array is .emptyInput, for DER and for bundles")
    func emptyBytes() {
        let der = #expect(throws: PincheckError.self) { try Certificate(derEncoded: [], source: "nothing") }
        #expect(der?.code == .emptyInput)
        #expect(der?.source == "nothing")
        let bundle = #expect(throws: PincheckError.self) { try Certificate.parseBundle([]) }
        #expect(bundle?.code == .emptyInput)
        let blank = #expect(throws: PincheckError.self) { try Certificate.parseBundle(Array(" \n\t\r\n".utf8)) }
        #expect(blank?.code == .emptyInput)
    }

    @Test("PEM structure errors are .malformedPEM with the line", arguments: [
        ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END X509 CRL-----\n", "line 3"),
        ("-----BEGIN CERTIFICATE-----\nAAAA\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "line 3"),
        ("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", "#1"),
        ("comment\n-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n", "line 2"),
    ])
    func pemStructure(text: String, position: String) {
        let error = #expect(throws: PincheckError.self) { try Certificate.parseBundle(Array(text.utf8), source: "x.pem") }
        #expect(error?.code == .malformedPEM, "\(String(describing: error))")
        #expect(error?.message.contains(position) == true, "\(String(describing: error))")
    }

    @Test("a PEM block of another kind is .unexpectedPEMBlock naming its label")
    func otherPEMBlock() {
        let text = "-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n"
        let error = #expect(throws: PincheckError.self) { try Certificate.parseBundle(Array(text.utf8)) }
        #expect(error?.code == .unexpectedPEMBlock)
        #expect(error?.message.contains("X509 CRL") == true)
    }

    @Test("a legacy encrypted key after the certificate is refused as a private key, not as bad base64")
    func encryptedKeyWithHeaders() throws {
        // What `openssl genrsa -aes256` writes: RFC 1421 header lines inside the block, so its body
        // is not base64. The block is refused for what it is; a certificate block with the same
        // header lines is still a base64 error (cryptography.io.with_headers.pem in pyca's vectors).
        let headers = "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,975C518B7D2CCD1164A3354D1F89C5A6\n\nAAAA\n"
        let certificate = Fixtures.certificate("rsa-leaf").pemEncoded
        let bundle = certificate + "-----BEGIN RSA PRIVATE KEY-----\n" + headers + "-----END RSA PRIVATE KEY-----\n"
        let key = #expect(throws: PincheckError.self) { try Certificate.parseBundle(Array(bundle.utf8), source: "server.pem") }
        #expect(key?.code == .unexpectedPEMBlock, "\(String(describing: key))")
        #expect(key?.message.contains("PEM block #2") == true && key?.message.contains("private key does not belong") == true, "\(String(describing: key))")

        let withHeaders = "-----BEGIN CERTIFICATE-----\n" + headers + "-----END CERTIFICATE-----\n"
        let base64 = #expect(throws: PincheckError.self) { try Certificate.parseBundle(Array(withHeaders.utf8), source: "x.pem") }
        #expect(base64?.code == .malformedPEM)
        #expect(base64?.message.contains("CERTIFICATE block starting on line 1 is not valid base64") == true, "\(String(describing: base64))")
    }

    @Test("a UTF-8 byte order mark before the first BEGIN line keeps the leaf, as OpenSSL 3 reads it")
    func byteOrderMark() throws {
        // Without the mark skipped, the first BEGIN line is text and the leaf is silently dropped.
        let text = "\u{FEFF}" + Fixtures.certificate("rsa-leaf").pemEncoded + Fixtures.rsaIntermediate.pemEncoded
        #expect(try Certificate.parseBundle(Array(text.utf8)) == [Fixtures.certificate("rsa-leaf"), Fixtures.rsaIntermediate])
        let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try Certificate.parseBundle(Array(crlf.utf8)) == [Fixtures.certificate("rsa-leaf"), Fixtures.rsaIntermediate])
    }

    @Test("an END line outside any block is an error: its block's BEGIN line was damaged", arguments: [
        "----BEGIN CERTIFICATE-----",            // four dashes
        "\u{2013}---BEGIN CERTIFICATE-----",      // an en dash from a word processor's smart punctuation
        "# -----BEGIN CERTIFICATE-----",         // commented out by hand
    ])
    func orphanEndLine(damagedBegin: String) {
        let leaf = Fixtures.certificate("rsa-leaf").pemEncoded
        let text = leaf.replacingOccurrences(of: "-----BEGIN CERTIFICATE-----", with: damagedBegin) + Fixtures.rsaIntermediate.pemEncoded
        let error = #expect(throws: PincheckError.self) { try Certificate.parseBundle(Array(text.utf8), source: "chain.pem") }
        #expect(error?.code == .malformedPEM, "\(String(describing: error))")
        let endLine = leaf.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(error?.message.contains("line \(endLine): END line with no BEGIN line") == true, "\(String(describing: error))")
    }

    @Test("UTF-16 text is refused saying so, with either byte order")
    func utf16() {
        let units = Array(Fixtures.certificate("rsa-leaf").pemEncoded.utf16)
        let little: [UInt8] = [0xFF, 0xFE] + units.flatMap { (unit: UInt16) -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let big: [UInt8] = [0xFE, 0xFF] + units.flatMap { (unit: UInt16) -> [UInt8] in [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        for bytes in [little, big] {
            let error = #expect(throws: PincheckError.self) { try Certificate.parseBundle(bytes, source: "leaf.pem") }
            #expect(error?.code == .malformedPEM)
            #expect(error?.message.contains("UTF-16") == true, "\(String(describing: error))")
        }
    }

    @Test("error codes have stable text")
    func codeText() {
        #expect(PincheckError.Code.malformedDER.description == "input.malformed-der")
        #expect(PincheckError.Code.malformedPEM.description == "input.malformed-pem")
        #expect(PincheckError.Code.emptyInput.description == "input.empty")
        #expect(PincheckError.Code.unexpectedPEMBlock.description == "input.not-a-certificate")
        #expect(PincheckError.Code.unreadableFile.description == "input.unreadable-file")
    }
}

/// The byte-level PEM reader against the rules read the obvious way (lines as Swift strings).
@Suite("PEM reader: byte level equals the plain reading")
struct PEMDifferentialTests {
    /// The reference: split on `Character.isNewline`, trim `Character.isWhitespace`, as strings.
    static func reference(_ text: String) -> Result<[PEM.Block], PincheckError> {
        var result: [PEM.Block] = []
        var open: (label: String, line: Int, body: String)? = nil
        var lineNumber = 0
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            let line = rawLine.trimmingWhitespace()
            if let current = open {
                if line.hasPrefix("-----END ") {
                    let label = String(line.dropFirst("-----END ".count).dropLast("-----".count))
                    guard line.hasSuffix("-----"), label == current.label else { return .failure(PincheckError(.malformedPEM, "end")) }
                    result.append(PEM.Block(label: current.label, contents: Base64.decode(current.body), line: current.line))
                    open = nil
                } else if line.hasPrefix("-----BEGIN ") {
                    return .failure(PincheckError(.malformedPEM, "nested"))
                } else {
                    open?.body += line
                }
            } else if line.hasPrefix("-----BEGIN ") {
                guard line.hasSuffix("-----"), line.count > "-----BEGIN -----".count else { return .failure(PincheckError(.malformedPEM, "begin")) }
                open = (String(line.dropFirst("-----BEGIN ".count).dropLast("-----".count)), lineNumber, "")
            } else if line.hasPrefix("-----END ") {
                return .failure(PincheckError(.malformedPEM, "orphan end"))
            }
        }
        if open != nil { return .failure(PincheckError(.malformedPEM, "truncated")) }
        return .success(result)
    }

    @Test("mutated certificate files read the same both ways")
    func differential() throws {
        let originals = ["rsa-leaf", "ec-root", "rsa-intermediate"].map { Fixtures.certificate($0).pemEncoded }
        let pieces = ["\n", "\r\n", "\r", " ", "\t", "\u{A0}", "\u{2028}", "\u{85}", "\u{3000}", "-", "=", "A", "é", "\u{0B}", "-----END CERTIFICATE-----", "-----BEGIN X-----"]
        var generator = SplitMix(seed: 7468)
        for round in 0..<3_000 {
            var text = originals[round % originals.count] + (round % 3 == 0 ? originals[(round + 1) % originals.count] : "")
            var scalars = Array(text.unicodeScalars)
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let piece = pieces.randomElement(using: &generator)!
                let position = Int.random(in: 0...scalars.count, using: &generator)
                if Bool.random(using: &generator) || scalars.isEmpty {
                    scalars.insert(contentsOf: piece.unicodeScalars, at: position)
                } else {
                    scalars.remove(at: min(position, scalars.count - 1))
                }
            }
            text = String(String.UnicodeScalarView(scalars))
            let fast = Result { () throws(PincheckError) in try PEM.blocks(in: text, source: nil) }
            switch (fast, Self.reference(text)) {
            case (.success(let a), .success(let b)):
                #expect(a.map(\.label) == b.map(\.label), "\(text.debugDescription)")
                #expect(a.map(\.contents) == b.map(\.contents), "\(text.debugDescription)")
                #expect(a.map(\.line) == b.map(\.line), "\(text.debugDescription)")
            case (.failure, .failure):
                break
            default:
                Issue.record("the readers disagree on \(text.debugDescription)")
            }
        }
    }
}
