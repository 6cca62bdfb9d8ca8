import FoundationEssentials
import TrustEvaluator

/// What a TLS handshake showed: the chain as served and the connection's parameters.
public struct ProbeResult: Sendable {
    /// The certificates the server sent, in the order sent, leaf first. Never empty.
    public let servedChain: [Certificate]
    /// The negotiated protocol, such as `TLSv1.3`.
    public let protocolVersion: String
    /// The negotiated cipher suite (OpenSSL's name).
    public let cipher: String
    /// The negotiated key-exchange group (OpenSSL's name, such as `x25519` or `X25519MLKEM768`),
    /// when there was one.
    public let keyExchangeGroup: String?
    /// The ALPN protocol the server selected, if any.
    public let alpn: String?
    /// The stapled OCSP response (DER), when the server sent one.
    public let stapledOCSPResponse: [UInt8]?
    /// What the stapled response claims: `good`, `revoked`, `unknown` for the leaf, or the response
    /// status (`unauthorized`, `trylater`…). Its signature is not verified by the probe.
    public let stapledOCSPStatus: String?
    /// The Signed Certificate Timestamps the server presented, from the TLS extension, a stapled
    /// OCSP response and the leaf certificate; empty when there were none. An SCT list that does
    /// not parse contributes nothing.
    /// - Warning: Captured, not verified: see ``SignedCertificateTimestamp``.
    public let signedCertificateTimestamps: [SignedCertificateTimestamp]
    /// The numeric address connected to.
    public let peerAddress: String
    /// The TCP port.
    public let port: UInt16
    /// The SNI sent, if any.
    public let serverName: String?
    /// True if the handshake resumed a session. Always false: resumption is off.
    public let sessionResumed: Bool
    /// From the start of the connect to the end of the handshake.
    public let duration: Duration
}

/// Connects to a server, completes a TLS 1.2/1.3 handshake without judging the certificate, and
/// returns what the server sent, so ``Evaluator`` can judge it.
///
/// Each probe uses its own TLS context with session caching and tickets off, so no handshake
/// resumes a session made under another policy. A probe blocks its thread for at
/// most ``timeout``, name resolution included: a host name is looked up on a worker thread, and a
/// lookup still running at the deadline is abandoned (`network.dns-failure`). IP literals are
/// used as they are, without a lookup.
///
/// The probe asks for Signed Certificate Timestamps and captures them
/// (``ProbeResult/signedCertificateTimestamps``) without verifying them; CT never fails a probe.
public struct TLSProbe: Sendable {
    /// The bound on name resolution, connect and handshake together.
    public var timeout: Duration
    /// The ALPN protocols offered.
    public var alpn: [String]
    /// Turns host names into addresses; a test seam (the system resolver by default).
    var resolver: NameResolver = .system

    /// - Parameters:
    ///   - timeout: The bound on name resolution, connect and handshake; 10 seconds by default.
    ///   - alpn: The ALPN protocols offered; `h2` and `http/1.1` by default.
    public init(timeout: Duration = .seconds(10), alpn: [String] = ["h2", "http/1.1"]) {
        self.timeout = timeout
        self.alpn = alpn
    }

    /// Connects and handshakes.
    /// - Parameters:
    ///   - target: Where to connect.
    ///   - serverName: The SNI to send; `nil` sends none. An IP literal is never sent as SNI (RFC 6066);
    ///     a DNS name is sent in its canonical form (an internationalised name as A-labels, as RFC 6066 requires).
    /// - Returns: The served chain and the connection's parameters.
    /// - Throws: ``ProbeError`` when no chain could be obtained (refused, timeout, DNS, alert, not TLS…).
    ///   A CT problem (no SCTs, an SCT list that does not parse) is never a probe error.
    public func probe(_ target: ProbeTarget, serverName: String?) throws(ProbeError) -> ProbeResult {
        let sni = serverName.flatMap { name -> String? in
            if name.isEmpty || HostName.isIPv4(name) || HostName.isIPv6(name) { return nil }
            switch try? HostName.peerName(for: name) {
            case .dns(let canonical): return canonical
            case .ipAddress: return nil
            case nil: return name
            }
        }
        return try TLSClient.handshake(
            .init(
                host: target.host, port: target.port, serverName: sni, alpn: alpn,
                deadline: ContinuousClock.now + timeout, resolver: resolver))
    }
}
