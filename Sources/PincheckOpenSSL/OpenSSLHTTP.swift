internal import COpenSSL
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP GET through OpenSSL's HTTP client (`OSSL_HTTP_open`, `OSSL_HTTP_exchange`): over a
/// connection the caller made (and vetted), or through a proxy. It reports what happened, in
/// OpenSSL's words where OpenSSL has them; which URLs, destinations and redirects are followed
/// is the engine's to decide (TrustEvaluatorCore's `HTTPFetch`). Blocking: run it off any event loop.
package enum OpenSSLHTTP {
    /// Why an exchange gave no body.
    package enum Failure: Error, Sendable, Hashable {
        /// The response was larger than allowed (by its Content-Length or its bytes).
        case tooLarge(limit: Int)
        /// Connecting or transferring took longer than allowed.
        case timedOut(seconds: Int)
        /// The body is not DER (not ASN.1 at all).
        case notDER
        /// No answer: refused, unreachable, not HTTP, an error status; OpenSSL's words.
        case unavailable(String)
    }

    /// What one request gave.
    package enum Exchange: Sendable, Hashable {
        case body([UInt8])
        /// The server answered with a redirect to this location, as it wrote it.
        case redirect(String)
        case failure(Failure)
    }

    /// The proxy a request to `host` goes through after `no_proxy`: `given`, or `http_proxy`
    /// from the environment when `given` is nil; nil for none.
    package static func proxy(for host: String, given: String?) -> String? {
        // OSSL_HTTP_adapt_proxy hands back the pointer it was given (or getenv's): it is copied
        // while the C strings passed in are still alive.
        host.withCString { host in
            guard let given else { return OSSL_HTTP_adapt_proxy(nil, nil, host, 0).map { String(cString: $0) } }
            return given.withCString { text in OSSL_HTTP_adapt_proxy(text, nil, host, 0).map { String(cString: $0) } }
        }
    }

    /// One GET of `path` on `host`.
    /// - Parameters:
    ///   - authority: The `Host` header.
    ///   - proxy: The proxy to go through (``proxy(for:given:)``); nil with `socket`.
    ///   - socket: A connected descriptor to talk over, which this takes over (and closes).
    ///   - seconds: OpenSSL's own timeout, in whole seconds; `deadline` is the caller's.
    package static func get(
        host: String, port: Int, authority: String, path: String, proxy: String?, socket: Int32?,
        maximumBytes: Int, deadline: ContinuousClock.Instant, seconds: Int
    ) -> Exchange {
        OpenSSLErrorStack.clear()
        var socketBIO: OpaquePointer? = nil
        if let socket {
            guard let bio = BIO_new_socket(socket, BIO_CLOSE) else {
                Glibc.close(socket)
                return .failure(.unavailable("no memory for the connection"))
            }
            socketBIO = bio
        }
        defer { if let socketBIO { BIO_free_all(socketBIO) } }
        let remaining = max(1, Int((deadline - ContinuousClock.now).components.seconds) + 1)
        // With a connection of the caller's, it is given as the reading side too: OpenSSL then
        // neither connects it (it is connected) nor frees it (the defer above does).
        guard
            let context = OSSL_HTTP_open(
                host, String(port), proxy, nil, 0, socketBIO, socketBIO, nil, nil, 0, Int32(clamping: min(remaining, seconds)))
        else {
            return .failure(failure(OpenSSLErrorStack.drain(), maximumBytes: maximumBytes, deadline: deadline, seconds: seconds))
        }
        var ok: Int32 = 0
        defer { OSSL_HTTP_close(context, ok) }
        var headers: OpaquePointer? = nil
        defer { shim_sk_CONF_VALUE_pop_free(headers) }
        _ = X509V3_add_value("Host", authority, &headers)
        guard OSSL_HTTP_set1_request(context, path, headers, nil, nil, nil, 1, max(1, maximumBytes), -1, 0) == 1 else {
            return .failure(.unavailable(OpenSSLErrorStack.drain().map(\.description).joined(separator: "; ")))
        }
        var redirection: UnsafeMutablePointer<CChar>? = nil
        let response = OSSL_HTTP_exchange(context, &redirection)
        if let redirection {
            defer { shim_OPENSSL_free(redirection) }
            OpenSSLErrorStack.clear()
            return .redirect(String(cString: redirection))
        }
        guard let response else {
            return .failure(failure(OpenSSLErrorStack.drain(), maximumBytes: maximumBytes, deadline: deadline, seconds: seconds))
        }
        // OSSL_HTTP_exchange hands back a reference of the caller's own (BIO_up_ref): freed here.
        defer { BIO_free_all(response) }
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { BIO_read(response, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { break }
            body += buffer.prefix(Int(count))
            guard body.count <= maximumBytes else { return .failure(.tooLarge(limit: maximumBytes)) }
        }
        OpenSSLErrorStack.clear()
        ok = 1
        return .body(body)
    }

    /// Whether OpenSSL says time ran out: its HTTP client's retry timeout, or a BIO's connect or
    /// transfer timeout. OpenSSL keeps its own clock, in whole seconds, which can run out just
    /// before the caller's deadline; an exchange it cut for time is still a timeout, not "unavailable".
    private static func saysTimedOut(_ entries: [OpenSSLErrorEntry]) -> Bool {
        say(entries, library: ERR_LIB_HTTP, [HTTP_R_RETRY_TIMEOUT])
            || say(entries, library: ERR_LIB_BIO, [BIO_R_TRANSFER_TIMEOUT, BIO_R_CONNECT_TIMEOUT])
    }

    /// Whether one of `entries` is from `library` for one of `reasons`.
    private static func say(_ entries: [OpenSSLErrorEntry], library: Int32, _ reasons: [Int32]) -> Bool {
        entries.contains { ERR_GET_LIB($0.code) == library && reasons.contains(ERR_GET_REASON($0.code)) }
    }

    /// What an exchange that OpenSSL ended with `entries` failed of. Internal for the tests, which
    /// raise OpenSSL's own errors: the race between its clock and `deadline` is not reproducible.
    static func failure(_ entries: [OpenSSLErrorEntry], maximumBytes: Int, deadline: ContinuousClock.Instant, seconds: Int) -> Failure {
        if say(entries, library: ERR_LIB_HTTP, [HTTP_R_MAX_RESP_LEN_EXCEEDED, HTTP_R_ASN1_LEN_EXCEEDS_MAX_RESP_LEN]) {
            return .tooLarge(limit: maximumBytes)
        }
        if say(entries, library: ERR_LIB_HTTP, [HTTP_R_MISSING_ASN1_ENCODING, HTTP_R_ERROR_PARSING_ASN1_LENGTH]) {
            return .notDER
        }
        if ContinuousClock.now >= deadline || saysTimedOut(entries) {
            return .timedOut(seconds: seconds)
        }
        return .unavailable(entries.isEmpty ? "no response" : entries.map(\.description).joined(separator: "; "))
    }
}
