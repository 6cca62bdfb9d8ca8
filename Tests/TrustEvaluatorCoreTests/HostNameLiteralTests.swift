import PincheckTestSupport
import Testing
@testable import TrustEvaluatorCore

/// One answer to "is this an IP literal?" for every road (NIO's SNI, gRPC's `:authority`): the
/// one certificates are matched with, not a test of digits and dots.
@Suite("IP literals, as the roads ask")
struct HostNameLiteralTests {
    @Test("addresses are literals, names are not", arguments: [
        ("127.0.0.1", true), ("::1", true), ("[::1]", true), ("2001:db8::1", true),
        ("www.example.test", false), ("localhost", false), ("1.example.test", false), ("example.test.", false),
    ])
    func literal(host: String, isLiteral: Bool) {
        #expect(HostName.isIPLiteral(host) == isLiteral)
    }
}
