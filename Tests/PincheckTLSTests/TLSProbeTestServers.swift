import PincheckTestSupport

/// The shared loopback test servers, under the names these tests use.
typealias TLSProbeTestServer = TestTLSServer
typealias TLSProbeRawServer = TestRawServer
