import PincheckTestSupport

/// The shared loopback test servers, under the names these tests use.
typealias CheckTLSServer = TestTLSServer
typealias CheckRawServer = TestRawServer
