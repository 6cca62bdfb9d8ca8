import Foundation
import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore
@testable import TrustEvaluatorFormats

/// Pincheck's own UTC date text, checked against Foundation's ISO8601DateFormatter as the oracle.
@Suite("timestamps without Foundation formatters")
struct TimestampTests {
    /// Dates across leap days, century rules, the epoch and the end of the four-digit range (from
    /// 1600 on: Foundation's Gregorian calendar turns Julian before 1582, Pincheck's does not).
    static let samples: [Date] = {
        var seconds: [Int64] = [0, -1, 1, 951_782_400, 951_868_799, 4_107_542_399, 1_906_502_400, 253_402_300_799,
                                -11_676_096_000, -2_208_988_800, 1_709_164_800, 4_102_444_800]
        var generator = SplitMix(seed: 7)
        for _ in 0..<2_000 { seconds.append(Int64.random(in: -11_676_096_000...253_402_300_799, using: &generator)) }
        return seconds.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }()

    @Test("formatting matches ISO8601DateFormatter, and parsing reads it back")
    func roundTrip() {
        let formatter = ISO8601DateFormatter()
        for date in Self.samples {
            let text = Timestamp.iso8601(date)
            #expect(text == formatter.string(from: date))
            #expect(Timestamp.parse(text) == date)
            #expect(Timestamp.day(date) == String(text.prefix(10)))
        }
    }

    @Test("offsets, fractions and days are read as ISO8601DateFormatter reads them")
    func parsing() {
        let formatter = ISO8601DateFormatter()
        for text in ["2030-06-01T12:00:00Z", "2030-06-01T14:00:00+02:00", "2030-05-31T23:30:00-12:30", "2000-02-29T00:00:00Z"] {
            #expect(Timestamp.parse(text) == formatter.date(from: text), "\(text)")
        }
        #expect(Timestamp.parse("2030-06-01") == formatter.date(from: "2030-06-01T00:00:00Z"))
        #expect(Timestamp.parseDay("2030-06-01") == formatter.date(from: "2030-06-01T00:00:00Z"))
        #expect(Timestamp.parse("2030-06-01T12:00:00.250Z")?.timeIntervalSince1970 == 1_906_545_600.25)
    }

    @Test("impossible or malformed text is nil", arguments: [
        "", "2030", "2030-6-1", "2030-13-01", "2030-02-29", "1900-02-29", "2030-04-31", "0000-01-01",
        "2030-06-01T24:00:00Z", "2030-06-01T12:60:00Z", "2030-06-01T12:00:60Z", "2030-06-01T12:00:00",
        "2030-06-01T12:00Z", "2030-06-01T12:00:00.Z", "2030-06-01T12:00:00+0200", "2030-06-01 12:00:00Z",
        "2030-06-01T12:00:00Zjunk", " 2030-06-01", "２０３０-06-01",
    ])
    func rejects(text: String) {
        #expect(Timestamp.parse(text) == nil)
    }

    @Test("the first and last representable seconds round-trip")
    func range() {
        for text in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            #expect(Timestamp.parse(text).map(Timestamp.iso8601) == text)
        }
    }

    @Test("a day-only parse refuses times")
    func dayOnly() {
        #expect(Timestamp.parseDay("2030-06-01T00:00:00Z") == nil)
        #expect(Timestamp.parseDay("2024-02-29") != nil)
        #expect(Timestamp.parseDay("2023-02-29") == nil)
    }
}

/// The helpers that keep the engine off Foundation, against Foundation itself.
@Suite("Foundation-free helpers")
struct FoundationFreeHelperTests {
    @Test("IDN labels are NFC-normalised exactly as precomposedStringWithCanonicalMapping does")
    func normalisation() {
        let names = ["E\u{301}xample.test", "bu\u{308}cher.example", "ÅNGSTRÖM.test", "\u{212B}.test", "e\u{301}\u{323}.test",
                     "한국.example", "\u{1100}\u{1161}\u{11A8}.test", "ǅ.test", "ｆｕｌｌ．ｗｉｄｔｈ", "münchen.de"]
        for name in names {
            let foundation = name.lowercased().precomposedStringWithCanonicalMapping
            let expected = foundation.split(omittingEmptySubsequences: false, whereSeparator: { [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"].contains($0) })
                .map { Punycode.aLabel(String($0)) ?? String($0) }.joined(separator: ".")
            #expect(HostName.aLabels(name) == expected, "\(name)")
        }
    }

    @Test("paths are joined and split as NSString does for the cases the engine meets")
    func paths() {
        for (directory, name) in [("certs", "a.pem"), ("certs/", "a.pem"), ("/etc/pins", "b.der"), ("", "c.pem"), ("dir", "/abs/d.pem")] {
            let expected = name.hasPrefix("/") ? name : (directory as NSString).appendingPathComponent(name)
            #expect(FilePath.join(directory, name) == expected)
        }
        for path in ["a/b/c.json", "c.json", "/c.json", "./x.json"] {
            #expect(FilePath.directory(of: path) == (path as NSString).deletingLastPathComponent, "\(path)")
        }
        for name in ["a.pem", "a.b.CRT", "noext", ".hidden", "dir.d/file", "x."] {
            #expect(FilePath.pathExtension(name) == (name as NSString).pathExtension, "\(name)")
        }
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
    }
}
