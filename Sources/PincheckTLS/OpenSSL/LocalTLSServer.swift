internal import COpenSSL
import FoundationEssentials
import TrustEvaluator
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TLS server on 127.0.0.1 (an ephemeral port) that serves a given chain and completes
/// handshakes, for demos and tests of what clients see: `pincheck demo` runs its scenarios
/// through real handshakes against these. It answers no application data. It may staple an OCSP
/// response, and it serves each connection on its own thread, so a client may open a second
/// connection while its first handshake waits (as a NIO client does for the staple).
///
/// `@unchecked Sendable`: the context and socket are set up in `init` and only read afterwards;
/// the accept loop owns everything it creates; `stop()` is serialised by a lock.
public final class LocalTLSServer: @unchecked Sendable {
    /// The port it listens on.
    public let port: UInt16
    private let context: OpaquePointer
    private let listener: Int32
    /// Whether `stop()` ran; set once, under the lock `stop()` holds while it shuts down.
    private let stopped = Locked(false)
    /// Signalled by the accept loop when it ends.
    private let finished = Latch()
    /// The response stapled to every handshake whose client asks (status_request), if any.
    private let staple: StapleBytes?

    /// Starts a server.
    /// - Parameters:
    ///   - chain: The certificates to serve, leaf first, exactly as a server would send them.
    ///   - privateKeyPEM: The leaf's private key (PEM).
    ///   - stapledOCSPResponse: An OCSP response (DER) to staple when the client asks for one; none by default.
    /// - Throws: ``PincheckError`` when the key does not load or match, or the socket cannot listen.
    public convenience init(chain: [Certificate], privateKeyPEM: String, stapledOCSPResponse: [UInt8]? = nil) throws(PincheckError) {
        try self.init(chain: chain, privateKeyPEM: privateKeyPEM, stapledOCSPResponse: stapledOCSPResponse,
                      startingThread: { DetachedThread.start($0) })
    }

    /// - Parameter startingThread: Starts the accept loop on a thread; false when no thread can
    ///   be had (a process limit). The test seam for that failure.
    init(chain: [Certificate], privateKeyPEM: String, stapledOCSPResponse: [UInt8]? = nil,
         startingThread: (@escaping @Sendable () -> Void) -> Bool) throws(PincheckError) {
        guard let leaf = chain.first else { throw PincheckError(.emptyChain, "a server needs a certificate to serve") }
        OpenSSLErrorStack.clear()
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw PincheckError(.openSSL, "SSL_CTX_new failed") }
        func fail(_ message: String) -> PincheckError {
            SSL_CTX_free(context)
            return PincheckError(.openSSL, "\(message): \(OpenSSLErrorStack.drainedText())")
        }
        guard SSL_CTX_use_certificate(context, leaf.handle.ref) == 1 else { throw fail("cannot use the leaf") }
        for certificate in chain.dropFirst() where shim_SSL_CTX_add1_chain_cert(context, certificate.handle.ref) != 1 {
            throw fail("cannot add \(certificate.subject) to the served chain")
        }
        let key: OpaquePointer
        do { key = try PrivateKeyPEM.read(Array(privateKeyPEM.utf8), passphrase: nil, what: "server's private key") } catch {
            SSL_CTX_free(context)
            throw error
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw fail("the private key does not match the leaf")
        }
        let staple = stapledOCSPResponse.flatMap { $0.isEmpty ? nil : StapleBytes($0) }
        if let staple {
            _ = shim_SSL_CTX_set_tlsext_status_cb(context) { ssl, argument in
                guard let ssl, let argument else { return SSL_TLSEXT_ERR_NOACK }
                let bytes = Unmanaged<StapleBytes>.fromOpaque(argument).takeUnretainedValue().bytes
                // OpenSSL takes the copy and frees it with OPENSSL_free.
                guard let copy = CRYPTO_malloc(bytes.count, "LocalTLSServer", 0) else { return SSL_TLSEXT_ERR_ALERT_FATAL }
                bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                _ = shim_SSL_set_tlsext_status_ocsp_resp(ssl, copy.assumingMemoryBound(to: UInt8.self), bytes.count)
                return SSL_TLSEXT_ERR_OK
            }
            // Unretained: the server, and every connection thread, hold the bytes while OpenSSL may call back.
            _ = shim_SSL_CTX_set_tlsext_status_arg(context, Unmanaged.passUnretained(staple).toOpaque())
        }
        self.staple = staple

        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw fail("socket() failed (errno \(errno))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(socketFD, raw, length) == 0 && listen(socketFD, 16) == 0 && getsockname(socketFD, raw, &length) == 0
            }
        }
        guard bound else {
            close(socketFD)
            throw fail("cannot listen on 127.0.0.1 (errno \(errno))")
        }
        self.context = context
        self.listener = socketFD
        self.port = UInt16(bigEndian: address.sin_port)
        guard startingThread({ [self] in acceptLoop() }) else {
            // Every property is set, so `deinit` will run `stop()`: mark the server stopped first,
            // so it neither waits for an accept loop that never ran nor frees the context twice.
            stopped.withLock { $0 = true }
            close(socketFD)
            SSL_CTX_free(context)
            throw PincheckError(.openSSL, "cannot start the server's accept thread")
        }
    }

    deinit { stop() }

    /// Stops accepting and waits for the accept loop to end. Safe to call more than once.
    public func stop() {
        stopped.withLock { stopped in
            guard !stopped else { return }
            stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            finished.wait()
            close(listener)
            SSL_CTX_free(context)
        }
    }

    private func acceptLoop() {
        // The server writes to sockets clients may have closed: SIGPIPE must not kill the process.
        _ = SignalMask.blockSIGPIPE()
        defer { finished.signal() }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            // The SSL holds a reference to the context, so `stop()` may free its own while a
            // connection thread still works; the thread holds the staple's bytes.
            guard let ssl = SSL_new(context) else {
                close(client)
                continue
            }
            let connection = Connection(ssl: ssl, socket: client)
            let staple = staple
            if !DetachedThread.start({ withExtendedLifetime(staple) { connection.serve() } }) {
                connection.serve()
            }
        }
    }
}

/// One accepted connection: handshake, close_notify, close. Owned by the thread that serves it.
private struct Connection: @unchecked Sendable {
    // @unchecked: the SSL and the socket are used by one thread, the one serving the connection.
    let ssl: OpaquePointer
    let socket: Int32

    func serve() {
        _ = SignalMask.blockSIGPIPE()
        SSL_set_fd(ssl, socket)
        if SSL_accept(ssl) == 1 { SSL_shutdown(ssl) }
        SSL_free(ssl)
        ERR_clear_error()
        close(socket)
    }
}

/// The bytes of a stapled response, where OpenSSL's status callback finds them.
private final class StapleBytes: Sendable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}
