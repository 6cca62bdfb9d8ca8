internal import PincheckOpenSSL
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
    private let tls: TLSServerContext
    private let listener: Int32
    /// Whether `stop()` ran; set once, under the lock `stop()` holds while it shuts down.
    private let stopped = Locked(false)
    /// Signalled by the accept loop when it ends.
    private let finished = Latch()

    /// Starts a server.
    /// - Parameters:
    ///   - chain: The certificates to serve, leaf first, exactly as a server would send them.
    ///   - privateKeyPEM: The leaf's private key (PEM).
    ///   - stapledOCSPResponse: An OCSP response (DER) to staple when the client asks for one; none by default.
    /// - Throws: ``PincheckError`` when the key does not load or match, or the socket cannot listen.
    public convenience init(chain: [Certificate], privateKeyPEM: String, stapledOCSPResponse: [UInt8]? = nil) throws(PincheckError) {
        try self.init(
            chain: chain, privateKeyPEM: privateKeyPEM, stapledOCSPResponse: stapledOCSPResponse,
            startingThread: { DetachedThread.start($0) })
    }

    /// - Parameter startingThread: Starts the accept loop on a thread; false when no thread can
    ///   be had (a process limit). The test seam for that failure.
    init(
        chain: [Certificate], privateKeyPEM: String, stapledOCSPResponse: [UInt8]? = nil,
        startingThread: (@escaping @Sendable () -> Void) -> Bool
    ) throws(PincheckError) {
        guard !chain.isEmpty else { throw PincheckError(.emptyChain, "a server needs a certificate to serve") }
        let tls: TLSServerContext
        do {
            tls = try TLSServerContext(chain: chain.map(\.handle), privateKeyPEM: Array(privateKeyPEM.utf8), stapledOCSPResponse: stapledOCSPResponse)
        } catch {
            throw PincheckError(error)
        }
        func fail(_ message: String) -> PincheckError { PincheckError(.openSSL, message) }

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
        self.tls = tls
        self.listener = socketFD
        self.port = UInt16(bigEndian: address.sin_port)
        guard startingThread({ [self] in acceptLoop() }) else {
            // Every property is set, so `deinit` will run `stop()`: mark the server stopped first,
            // so it neither waits for an accept loop that never ran nor frees the context twice.
            stopped.withLock { $0 = true }
            close(socketFD)
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
            // A client that stops mid-handshake holds its thread this long. Long enough for a
            // verifier that fetches CRLs on a loaded machine (a sanitizer run beside the suite
            // made 5 s too short), short enough that an idle client does not keep it for good.
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connection = Connection(tls: tls, socket: client)
            if !DetachedThread.start({ connection.serve() }) {
                connection.serve()
            }
        }
    }
}

/// One accepted connection: handshake, close_notify, close. Owned by the thread that serves it;
/// it holds the TLS context, so `stop()` may let go of the server's while a connection still works.
private struct Connection: Sendable {
    let tls: TLSServerContext
    let socket: Int32

    func serve() {
        _ = SignalMask.blockSIGPIPE()
        tls.serve(socket: socket)
        close(socket)
    }
}
