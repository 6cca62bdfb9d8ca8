import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

@Suite("PublicKeyPin: spellings, strictness and pin sets")
struct PublicKeyPinTests {
    /// rsa-leaf's pin as the openssl CLI wrote it, and its base64 alone.
    static let reference = Fixtures.referencePins["rsa-leaf"]!
    static let base64 = String(reference.dropFirst("sha256/".count))

    @Test("every accepted spelling of a SHA-256 pin gives the same pin", arguments: [
        "sha256/\(base64)",                 // OkHttp
        "sha256//\(base64)",                // curl --pinnedpubkey
        base64,                             // TrustKit, Android NSC
        "pin-sha256=\"\(base64)\"",         // HPKP header
        "  sha256/\(base64)\n",             // surrounding white space
    ])
    func spellings(text: String) throws {
        let pin = try PublicKeyPin(text)
        #expect(pin.algorithm == .sha256)
        #expect(pin.digest.count == 32)
        #expect(pin.description == Self.reference)
        #expect(pin.base64 == Self.base64)
        #expect(pin == Fixtures.certificate("rsa-leaf").publicKeyPin)
        #expect(pin.matches(Fixtures.certificate("rsa-leaf")))
        #expect(!pin.matches(Fixtures.certificate("rsa-leaf-rotated")))
    }

    /// A digest whose base64 starts with `/` (first byte 0xFC or above: one key in 64).
    static let slashDigest: [UInt8] = [0xFC] + (1..<32).map { UInt8($0 * 5) }

    @Test("a pin whose base64 starts with / parses in every spelling, curl's sha256// included", arguments: [
        "sha256/", "sha256//", "", "  sha256/",
    ])
    func pinStartingWithSlash(prefix: String) throws {
        let base64 = Data(Self.slashDigest).base64EncodedString()
        try #require(base64.hasPrefix("/"))
        let pin = try PublicKeyPin(prefix + base64)
        #expect(pin.digest == Self.slashDigest)
        #expect(pin.description == "sha256/" + base64)
        // The pins Pincheck prints read back as themselves.
        #expect(try PublicKeyPin(pin.description) == pin)
    }

    @Test("a sha1/ pin parses to 20 bytes and keeps its algorithm")
    func sha1Pin() throws {
        let digest = (0..<20).map { UInt8($0 * 7) }
        let text = "sha1/" + Data(digest).base64EncodedString()
        let pin = try PublicKeyPin(text)
        #expect(pin.algorithm == .sha1)
        #expect(pin.digest == digest)
        #expect(pin.description == text)
        #expect(pin != (try PublicKeyPin(algorithm: .sha256, digest: digest + Array(repeating: 0, count: 12))))
    }

    @Test("a certificate's sha1/ pin matches it and no other")
    func sha1PinMatches() throws {
        let leaf = Fixtures.certificate("rsa-leaf")
        let pin = try PublicKeyPin(leaf.publicKeySHA1Pin.description)
        #expect(pin.algorithm == .sha1)
        #expect(pin.matches(leaf))
        #expect(!pin.matches(Fixtures.certificate("rsa-leaf-rotated")))
    }

    /// Base64 of `count` bytes.
    static func encoded(_ count: Int) -> String { Data(repeating: 0x5A, count: count).base64EncodedString() }

    @Test("malformed pins are .malformedPin errors that quote the pin", arguments: [
        "sha256/" + encoded(31),
        "sha256/" + encoded(33),
        encoded(31),
        "sha256/" + encoded(20),                 // a SHA-1-sized digest called sha256
        "sha1/" + encoded(32),                   // a SHA-256-sized digest called sha1
        "sha256/not*valid*base64!",
        "sha256/" + String(base64.dropLast()),   // unpadded / wrong length
        "",
        "sha256/",
        "sha256//",
        "pin-sha256=" + base64,                  // unquoted
        "pin-sha256=\"" + base64,                // unterminated quote
        "md5/" + encoded(16),
    ])
    func malformed(text: String) {
        let error = #expect(throws: PincheckError.self) { try PublicKeyPin(text) }
        #expect(error?.code == .malformedPin, "\(String(describing: error))")
        #expect(error?.message.contains("\"\(text)\"") == true, "\(error?.message ?? "") should quote \(text)")
    }

    @Test("a digest of the wrong length is refused by init(algorithm:digest:)")
    func digestLength() throws {
        #expect(throws: PincheckError.self) { try PublicKeyPin(digest: Array(repeating: 1, count: 31)) }
        #expect(throws: PincheckError.self) { try PublicKeyPin(algorithm: .sha1, digest: Array(repeating: 1, count: 32)) }
        #expect(try PublicKeyPin(digest: Array(repeating: 1, count: 32)).digest.count == 32)
        #expect(PublicKeyPin.Algorithm.sha256.digestLength == 32)
        #expect(PublicKeyPin.Algorithm.sha1.digestLength == 20)
    }

    @Test("description round-trips through the parser", arguments: Fixtures.pinnedNames)
    func roundTrip(name: String) throws {
        let pin = Fixtures.certificate(name).publicKeyPin
        #expect(try PublicKeyPin(pin.description) == pin)
    }

    // MARK: Pin sets

    @Test("an empty public-key pin set cannot be made")
    func emptyPublicKeyPins() {
        let hashes = #expect(throws: PincheckError.self) { try PinnedPublicKeys(pins: []) }
        #expect(hashes?.code == .emptyPinSet)
        let none = #expect(throws: PincheckError.self) { try PinnedPublicKeys() }
        #expect(none?.code == .emptyPinSet)
        let parsed = #expect(throws: PincheckError.self) { try PinnedPublicKeys(parsing: []) }
        #expect(parsed?.code == .emptyPinSet)
    }

    @Test("an empty certificate pin set cannot be made")
    func emptyCertificatePins() {
        let direct = #expect(throws: PincheckError.self) { try PinnedCertificates([]) }
        #expect(direct?.code == .emptyPinSet)
        let files = #expect(throws: PincheckError.self) { try PinnedCertificates(contentsOf: []) }
        #expect(files?.code == .emptyPinSet)
    }

    @Test("an unreadable pinned certificate is an error naming the file, never dropped")
    func unreadablePinnedCertificate() {
        let good = Fixtures.path("rsa-intermediate.pem")
        let missing = Fixtures.path("missing-pin.pem")
        let error = #expect(throws: PincheckError.self) { try PinnedCertificates(contentsOf: [good, missing]) }
        #expect(error?.code == .unreadableFile)
        #expect(error?.source == missing)
        let broken = Fixtures.path("malformed/truncated.pem")
        let malformed = #expect(throws: PincheckError.self) { try PinnedCertificates(contentsOf: [good, broken]) }
        #expect(malformed?.code == .malformedPEM)
        #expect(malformed?.source == broken)
    }

    @Test("parsing a pin list stops at the first malformed pin and names it")
    func parsingList() throws {
        let error = #expect(throws: PincheckError.self) {
            try PinnedPublicKeys(parsing: [Self.reference, "sha256/short"])
        }
        #expect(error?.code == .malformedPin)
        #expect(error?.message.contains("sha256/short") == true)
        let pins = try PinnedPublicKeys(parsing: [Self.reference, "sha256//" + Self.base64, Self.base64])
        #expect(pins.pins == [Fixtures.certificate("rsa-leaf").publicKeyPin])
    }

    @Test("pin sets combine hashes and certificates, without duplicates")
    func pinSetContents() throws {
        let leaf = Fixtures.certificate("rsa-leaf")
        let keys = try PinnedPublicKeys(pins: [leaf.publicKeyPin], certificates: [leaf, Fixtures.rsaIntermediate])
        #expect(keys.pins == [leaf.publicKeyPin, Fixtures.rsaIntermediate.publicKeyPin])
        let certificates = try PinnedCertificates([leaf, leaf, Fixtures.rsaIntermediate])
        #expect(certificates.certificates == [leaf, Fixtures.rsaIntermediate])
        let fromFiles = try PinnedCertificates(contentsOf: [Fixtures.path("chains/rsa-good.pem")])
        #expect(fromFiles.certificates == [leaf, Fixtures.rsaIntermediate])
    }

    @Test("pins sort by their text and compare by algorithm and digest")
    func ordering() throws {
        let a = try PublicKeyPin("sha256/" + Self.encoded(32))
        let b = try PublicKeyPin("sha256/" + Data(repeating: 0x7A, count: 32).base64EncodedString())
        #expect((a < b) == (a.description < b.description))
        #expect(a != b)
        #expect([b, a].sorted() == [a, b].sorted())
    }
}
