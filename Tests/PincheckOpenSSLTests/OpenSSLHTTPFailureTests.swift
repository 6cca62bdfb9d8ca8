import Testing
@testable import PincheckOpenSSL

/// How the fetcher names a failure from the errors OpenSSL left, with OpenSSL's own error codes.
/// The trickle test (`IssuerLookupTests`) meets a timeout through a real server, but whether
/// OpenSSL's clock (whole seconds) or the fetcher's deadline runs out first depends on the
/// machine's load; here each of OpenSSL's timeouts is met before the deadline, every time.
@Suite("OpenSSL HTTP exchange: failure kinds")
struct OpenSSLHTTPFailureTests {
    /// An entry as OpenSSL packs it (`ERR_PACK` in err.h: library in bits 23–30, reason below).
    /// The codes are OpenSSL's published ones (err.h, bioerr.h, httperr.h); each test also
    /// checks OpenSSL's own text for the code, so a wrong number fails here, not in the field.
    static func entry(library: UInt, reason: UInt) -> OpenSSLErrorEntry {
        _ = libcryptoStarted
        return OpenSSLErrorEntry(code: (library << 23) | reason, detail: nil)
    }

    /// A real entry comes from a call into libcrypto, whose first call initialises it and loads
    /// its error strings; these are made by hand, so one such call is made first (run alone, the
    /// suite would otherwise read "lib(32)::reason(105)").
    static let libcryptoStarted: Void = { _ = try? X509Handle(der: [0x30, 0x00], position: "a first call into libcrypto") }()

    static let bio: UInt = 32, http: UInt = 61
    static let farDeadline = ContinuousClock.now + .seconds(3_600)

    @Test("OpenSSL's own timeouts are timeouts, though the deadline has not passed",
          arguments: [(bio, 105, "transfer timeout"), (bio, 147, "connect timeout"), (http, 129, "retry timeout")] as [(UInt, UInt, String)])
    func openSSLTimeouts(library: UInt, reason: UInt, text: String) {
        let timeout = Self.entry(library: library, reason: reason)
        #expect(timeout.description.hasSuffix(text), "\(timeout)")
        // The timeout may come with what the HTTP client adds on top of it ("error receiving").
        let receiving = Self.entry(library: Self.http, reason: 103)
        #expect(receiving.description.hasSuffix("error receiving"), "\(receiving)")
        let entries = [timeout, receiving]
        #expect(OpenSSLHTTP.failure(entries, maximumBytes: 1_000, deadline: Self.farDeadline, seconds: 7) == .timedOut(seconds: 7))
    }

    @Test("Another error before the deadline is 'unavailable', in OpenSSL's words")
    func otherErrors() {
        let refused = Self.entry(library: Self.bio, reason: 103)
        #expect(refused.description.hasSuffix("connect error"), "\(refused)")
        guard case .unavailable(let words) = OpenSSLHTTP.failure([refused], maximumBytes: 1_000, deadline: Self.farDeadline, seconds: 7) else {
            Issue.record("a connect error before the deadline must be 'unavailable'")
            return
        }
        #expect(words.contains("connect error"), "\(words)")
        #expect(OpenSSLHTTP.failure([], maximumBytes: 1_000, deadline: Self.farDeadline, seconds: 7) == .unavailable("no response"))
    }

    @Test("Past the deadline every failure is a timeout; size and encoding errors keep their kinds")
    func deadlineAndKinds() {
        let passed = ContinuousClock.now - .seconds(1)
        let refused = Self.entry(library: Self.bio, reason: 103)
        #expect(OpenSSLHTTP.failure([refused], maximumBytes: 1_000, deadline: passed, seconds: 7) == .timedOut(seconds: 7))
        let tooLong = Self.entry(library: Self.http, reason: 117)
        #expect(tooLong.description.hasSuffix("max resp len exceeded"), "\(tooLong)")
        #expect(OpenSSLHTTP.failure([tooLong], maximumBytes: 1_000, deadline: passed, seconds: 7) == .tooLarge(limit: 1_000))
        let notDER = Self.entry(library: Self.http, reason: 110)
        #expect(notDER.description.hasSuffix("missing asn1 encoding"), "\(notDER)")
        #expect(OpenSSLHTTP.failure([notDER], maximumBytes: 1_000, deadline: Self.farDeadline, seconds: 7) == .notDER)
    }
}
