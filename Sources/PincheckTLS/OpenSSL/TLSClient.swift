internal import PincheckOpenSSL
import FoundationEssentials
import TrustEvaluator
#if canImport(Glibc)
import Glibc
#endif

/// One TLS handshake with libssl over a socket this type opens and closes. Trust is not decided
/// here: the context verifies nothing (`SSL_VERIFY_NONE`) and hands the served chain to the
/// caller, who runs Pincheck's evaluator on it.
///
/// Everything but name resolution happens on the calling thread, with the socket non-blocking and
/// every wait bounded by one deadline, so a silent peer ends in `.timeout`, never a hang. Name
/// resolution runs on a worker thread and is bounded by the same deadline (``NameResolver``).
enum TLSClient {
    struct Request {
        let host: String
        let port: UInt16
        let serverName: String?
        let alpn: [String]
        let deadline: ContinuousClock.Instant
        var resolver: NameResolver = .system
    }

    static func handshake(_ request: Request) throws(ProbeError) -> ProbeResult {
        let started = ContinuousClock.now
        // Writing to a socket the peer has reset raises SIGPIPE, which would kill the process.
        // Block it on this thread only, for the duration, and discard any that became pending.
        let signals = SignalMask.blockSIGPIPE()
        defer { signals.restore() }

        let connection = try TCPConnection.open(
            host: request.host, port: request.port, deadline: request.deadline,
            resolver: request.resolver)
        defer { connection.close() }

        let tls: TLSClientConnection
        do {
            tls = try TLSClientConnection(socket: connection.fd, serverName: request.serverName, alpn: request.alpn)
        } catch {
            throw ProbeError(error)
        }
        try runHandshake(tls, connection: connection, deadline: request.deadline)
        defer { tls.shutdown() }

        let chain: [Certificate]
        do { chain = try tls.servedChain(maximumBytes: Limits.maximumCertificateBytes).map(Certificate.init(handle:)) } catch {
            throw ProbeError(error)
        }
        guard !chain.isEmpty else {
            throw ProbeError(.noCertificate, "the server completed the handshake without sending a certificate")
        }
        let ocsp = tls.stapledOCSPResponse
        return ProbeResult(
            servedChain: chain,
            protocolVersion: tls.protocolVersion,
            cipher: tls.cipher,
            keyExchangeGroup: tls.keyExchangeGroup,
            alpn: tls.selectedALPN,
            stapledOCSPResponse: ocsp,
            stapledOCSPStatus: ocsp.map { ocspStatus($0, chain: chain) },
            signedCertificateTimestamps: tls.presentedSCTs.map(SignedCertificateTimestamp.init),
            peerAddress: connection.address,
            port: request.port,
            serverName: request.serverName,
            sessionResumed: tls.sessionResumed,
            duration: ContinuousClock.now - started)
    }

    private static func runHandshake(_ tls: TLSClientConnection, connection: TCPConnection, deadline: ContinuousClock.Instant) throws(ProbeError) {
        while true {
            switch tls.step() {
            case .complete: return
            case .wantRead: try connection.wait(for: Int16(POLLIN), until: deadline, during: "the TLS handshake")
            case .wantWrite: try connection.wait(for: Int16(POLLOUT), until: deadline, during: "the TLS handshake")
            case .failed(let failure): throw ProbeError(failure)
            }
        }
    }
}

extension ProbeError {
    /// The probe's error for a failed libssl step.
    init(_ failure: TLSClientConnection.TLSFailure) {
        let code: Code =
            switch failure.kind {
            case .alert: .tlsAlert
            case .notTLS: .notTLS
            case .closed: .connectionClosed
            case .failed: .handshakeFailed
            }
        self.init(code, failure.message)
    }
}

extension TLSClient {
    /// What a stapled OCSP response claims about the served leaf, in words. Nothing is verified
    /// here: the evaluator checks the response against the verified path.
    static func ocspStatus(_ der: [UInt8], chain: [Certificate]) -> String {
        guard let leaf = chain.first else { return "successful, but no leaf was served" }
        // With the issuer served, the answer is found by the leaf's full certificate ID; without
        // it (a leaf issued by the root itself, which servers do not send), by its serial number.
        let issuer = chain.count > 1 ? chain[1] : nil
        switch StapledOCSP.read(der, about: leaf, issuer: issuer) {
        case .unreadable: return "unparseable"
        case .unsuccessful(let status): return status
        case .noBasicResponse: return "successful, but without a basic response"
        case .answers(let answers):
            guard let answer = answers.first else {
                return issuer == nil ? "successful, but no status for the leaf's serial number" : "successful, but no status for the leaf"
            }
            return issuer == nil ? "\(answer.status) (by the leaf's serial number; its issuer was not served)" : answer.status
        }
    }
}

extension SignedCertificateTimestamp {
    /// An SCT as libssl handed it over.
    init(_ presented: TLSClientConnection.PresentedSCT) {
        let source: Source =
            switch presented.source {
            case .tlsExtension: .tlsExtension
            case .certificate: .certificate
            case .ocspResponse: .ocspResponse
            }
        self.init(
            source: source, version: presented.version, logID: presented.logID,
            timestampMilliseconds: presented.timestampMilliseconds, signatureAlgorithm: presented.signatureAlgorithm,
            extensions: presented.extensions, signature: presented.signature)
    }
}

/// Blocks SIGPIPE on the current thread and restores the previous mask afterwards.
struct SignalMask {
    private var previous = sigset_t()

    static func blockSIGPIPE() -> SignalMask {
        var mask = SignalMask()
        var block = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &block, &mask.previous)
        return mask
    }

    func restore() {
        // Consume a SIGPIPE raised while blocked, so it is not delivered when unblocked.
        var previous = self.previous
        var pending = sigset_t()
        sigpending(&pending)
        if sigismember(&pending, SIGPIPE) == 1, sigismember(&previous, SIGPIPE) == 0 {
            var only = sigset_t()
            sigemptyset(&only)
            sigaddset(&only, SIGPIPE)
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&only, nil, &zero)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
}
