import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOPosix
import NIOSSL
import PincheckTestSupport
import ServerTrust
import ServerTrustFoundation
import TrustEvaluator
import Synchronization
import Testing

/// A tiny HTTP/1.1 server that demands Basic auth for `alice:wonderland` (or answers 401 without
/// `WWW-Authenticate` when `announce` is false, or with a Digest challenge when `digest`, which it
/// never accepts: Linux's URLSession does not answer one). One request per connection.
final class BasicAuthHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let announce: Bool
    let digest: Bool
    let requests: Box<String?>
    init(announce: Bool, digest: Bool = false, requests: Box<String?>) { self.announce = announce; self.digest = digest; self.requests = requests }

    private let buffered = Mutex("")

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        let text = buffered.withLock { $0 += buffer.readString(length: buffer.readableBytes) ?? ""; return $0 }
        guard text.contains("\r\n\r\n") else { return }
        let authorization = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("authorization:") }
            .map { String($0.dropFirst("authorization:".count)).trimmingCharacters(in: .whitespaces) }
        requests.append(authorization)
        let expected = "Basic " + Data("alice:wonderland".utf8).base64EncodedString()
        let response: String
        if authorization == expected {
            response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        } else {
            let scheme = digest ? "Digest realm=\"pincheck\", nonce=\"4e6f6e6365\", qop=\"auth\", algorithm=MD5" : "Basic realm=\"pincheck\""
            let header = announce ? "WWW-Authenticate: \(scheme)\r\n" : ""
            response = "HTTP/1.1 401 Unauthorized\r\n\(header)Content-Length: 6\r\nConnection: close\r\n\r\ndenied"
        }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

struct LocalServer {
    let channel: any Channel
    var port: Int { channel.localAddress!.port! }

    static func basicAuth(group: any EventLoopGroup, announce: Bool = true, digest: Bool = false, requests: Box<String?>) async throws -> LocalServer {
        let channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(BasicAuthHandler(announce: announce, digest: digest, requests: requests))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return LocalServer(channel: channel)
    }

    /// An HTTPS server with the test PKI's leaf: its root is in no system store.
    static func tls(group: any EventLoopGroup, requests: Box<String?>) async throws -> LocalServer {
        let chain = try NIOSSLCertificate.fromPEMFile(PKI.path("rsa-ip.pem")) + NIOSSLCertificate.fromPEMFile(PKI.path("rsa-intermediate.pem"))
        let key = try NIOSSLPrivateKey(file: PKI.path("keys/rsa-ip.key"), format: .pem)
        let context = try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)))
        let channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(BasicAuthHandler(announce: true, requests: requests))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return LocalServer(channel: channel)
    }
}

/// Runs one GET through a URLSession whose delegate routes through `adapter`.
func fetch(_ url: URL, adapter: ChallengeAdapter) async -> (status: Int?, error: (any Error)?, delegate: RoutingURLSessionDelegate) {
    let delegate = RoutingURLSessionDelegate(session: ChallengeSession(router: ChallengeRouter(
        sessionHandler: .adapter(adapter), taskHandler: .adapter(adapter))))
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 10
    let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    defer { session.finishTasksAndInvalidate() }
    let result: (Int?, (any Error)?) = await withCheckedContinuation { continuation in
        session.dataTask(with: url) { _, response, error in
            continuation.resume(returning: ((response as? HTTPURLResponse)?.statusCode, error))
        }.resume()
    }
    return (result.0, result.1, delegate)
}

@Suite("URLSession on Linux, through the bridge", .serialized)
struct URLSessionBridgeTests {
    static func adapter(password: String?, afterFailure: ChallengeAdapter.AfterFailure = .rejectProtectionSpace) -> ChallengeAdapter {
        ChallengeAdapter(trustManager: TrustManager(), credential: password.map { Credential(user: "alice", password: $0, persistence: .forSession) },
                         afterFailure: afterFailure)
    }

    @Test("right credential → 200, via the task-level delegate, one basic challenge")
    func rightCredential() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let requests = Box<String?>()
        let server = try await LocalServer.basicAuth(group: group, requests: requests)
        let outcome = await fetch(URL(string: "http://127.0.0.1:\(server.port)/secret")!, adapter: Self.adapter(password: "wonderland"))
        try await server.channel.close()
        try await group.shutdownGracefully()

        #expect(outcome.status == 200)
        #expect(outcome.delegate.delivered.map(\.level) == [.task])
        let challenge = try #require(outcome.delegate.delivered.first?.challenge)
        #expect(challenge.protectionSpace.authenticationMethod == .httpBasic)
        #expect(challenge.protectionSpace.realm == "pincheck")
        #expect(challenge.previousFailureCount == 0)
        #expect(requests.all.count == 2, "one anonymous request, one with the credential")
    }

    @Test("wrong credential → the failure count rises, the task ends on the 401, no loop",
          arguments: [ChallengeAdapter.AfterFailure.rejectProtectionSpace, .cancel])
    func wrongCredential(afterFailure: ChallengeAdapter.AfterFailure) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let requests = Box<String?>()
        let server = try await LocalServer.basicAuth(group: group, requests: requests)
        let outcome = await fetch(URL(string: "http://127.0.0.1:\(server.port)/secret")!,
                                  adapter: Self.adapter(password: "guess", afterFailure: afterFailure))
        try await server.channel.close()
        try await group.shutdownGracefully()

        let counts = outcome.delegate.delivered.map(\.challenge.previousFailureCount)
        #expect(counts == [0, 1])
        #expect(outcome.delegate.delivered.last?.challenge.failureResponse?.statusCode == 401)
        #expect(requests.all.count == 2, "anonymous, then the wrong password once: no loop")
        #if os(Linux)
        // FoundationNetworking treats rejectProtectionSpace like cancel: the task fails with
        // NSURLErrorCancelled and the 401 is only in the challenge's failureResponse.
        #expect(outcome.status == nil)
        #expect((outcome.error as? URLError)?.code == .cancelled)
        #else
        #expect(outcome.status == (afterFailure == .rejectProtectionSpace ? 401 : nil))
        #endif
    }

    @Test("no credential and default handling: the bridge keeps the Linux task from hanging")
    func defaultHandlingDoesNotHang() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let requests = Box<String?>()
        let server = try await LocalServer.basicAuth(group: group, requests: requests)
        let adapter = ChallengeAdapter(trustManager: TrustManager(), missingCredential: .performDefaultHandling)
        let outcome = await fetch(URL(string: "http://127.0.0.1:\(server.port)/secret")!, adapter: adapter)
        try await server.channel.close()
        try await group.shutdownGracefully()
        #expect(outcome.delegate.delivered.count == 1)
        #expect(requests.all == [nil])
        #if os(Linux)
        #expect((outcome.error as? URLError)?.code == .cancelled)
        #else
        #expect(outcome.status == 401)
        #endif
    }

    @Test("a 401 without WWW-Authenticate reaches no delegate")
    func noAnnouncement() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let requests = Box<String?>()
        let server = try await LocalServer.basicAuth(group: group, announce: false, requests: requests)
        let outcome = await fetch(URL(string: "http://127.0.0.1:\(server.port)/secret")!, adapter: Self.adapter(password: "wonderland"))
        try await server.channel.close()
        try await group.shutdownGracefully()
        #expect(outcome.status == 401)
        #expect(outcome.delegate.delivered.isEmpty)
    }

    @Test("HTTPS with an unknown root: no server-trust challenge reaches the delegate on Linux; libcurl refuses")
    func serverTrustNotDelivered() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let requests = Box<String?>()
        let server = try await LocalServer.tls(group: group, requests: requests)
        let outcome = await fetch(URL(string: "https://127.0.0.1:\(server.port)/secret")!, adapter: Self.adapter(password: "wonderland"))
        try await server.channel.close()
        try await group.shutdownGracefully()
        #if os(Linux)
        #expect(outcome.delegate.delivered.filter { $0.challenge.protectionSpace.authenticationMethod == .serverTrust }.isEmpty)
        #expect(outcome.error != nil, "the system store does not hold the test root")
        #expect(requests.all.isEmpty, "no request got through")
        #endif
    }

    @Test("dispositions, persistences and credentials convert both ways")
    func conversions() throws {
        for disposition in Disposition.allCases {
            #expect(disposition.urlSessionDisposition.rawValue == disposition.rawValue)
            #expect(Disposition(disposition.urlSessionDisposition) == disposition)
        }
        for persistence in Persistence.allCases {
            #expect(persistence.urlPersistence.rawValue == persistence.rawValue)
            #expect(Persistence(persistence.urlPersistence) == persistence)
        }
        let url = try #require(Credential(user: "alice", password: "pw", persistence: .forSession).urlCredential)
        #expect(url.user == "alice" && url.password == "pw" && url.persistence == .forSession)
        #expect(Credential(url)?.password == "pw")
        #expect(Credential(trust: PeerTrust(servedChain: [PKI.leaf])).urlCredential == nil)
        let answer = ChallengeDecision(.useCredential, Credential(trust: PeerTrust(servedChain: [PKI.leaf]))).urlSessionAnswer
        #expect(answer.0 == .performDefaultHandling && answer.1 == nil, "never accept what Foundation cannot carry")
        let space = URLProtectionSpace(host: "h", port: 8443, protocol: "https", realm: "r", authenticationMethod: NSURLAuthenticationMethodHTTPDigest)
        #expect(ProtectionSpace(space) == ProtectionSpace(host: "h", port: 8443, protocol: "https", realm: "r", authenticationMethod: .httpDigest))
        #expect(ProtectionSpace(space).urlProtectionSpace.port == 8443)
        #expect(AuthenticationMethod.httpBasic.rawValue == NSURLAuthenticationMethodHTTPBasic)
        #expect(AuthenticationMethod.httpDigest.rawValue == NSURLAuthenticationMethodHTTPDigest)
        #expect(AuthenticationMethod.ntlm.rawValue == NSURLAuthenticationMethodNTLM)
        #expect(AuthenticationMethod.negotiate.rawValue == NSURLAuthenticationMethodNegotiate)
        #expect(AuthenticationMethod.default.rawValue == NSURLAuthenticationMethodDefault)
        #if !os(Linux)
        // On Linux these two constants are marked unavailable (no Security framework).
        #expect(AuthenticationMethod.serverTrust.rawValue == NSURLAuthenticationMethodServerTrust)
        #expect(AuthenticationMethod.clientCertificate.rawValue == NSURLAuthenticationMethodClientCertificate)
        #endif
    }
}

@Suite("URLSession invalidation reaches the challenge session")
struct URLSessionInvalidationTests {
    @Test("finishTasksAndInvalidate on the URLSession fires the observers once; new challenges are refused")
    func invalidation() async throws {
        let fired = Box<Bool>()
        let challengeSession = ChallengeSession(router: ChallengeRouter())
        challengeSession.onInvalidation { fired.append($0 == nil) }
        let delegate = RoutingURLSessionDelegate(session: challengeSession)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        session.finishTasksAndInvalidate()
        for _ in 0..<200 where fired.all.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(fired.all == [true])
        #expect(throws: ServerTrustError.self) { try challengeSession.handle(PKI.http()) { _ in } }
    }
}

/// The URLSession snippet of the URLSessionChallenges article (ServerTrustFoundation), compiled and run against a local server so it cannot drift.
@Suite("URLSession challenges article: through the router")
struct ReadmeURLSessionExampleTests {
    @Test("the snippet answers Basic auth and gets a 200")
    func snippet() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let requests = Box<String?>()
        let server = try await LocalServer.basicAuth(group: group, requests: requests)
        let manager = TrustManager()
        let secret = "wonderland"

        // --- the article's snippet ---
        let adapter = ChallengeAdapter(trustManager: manager,
            credential: Credential(user: "alice", password: secret, persistence: .forSession))
        let delegate = RoutingURLSessionDelegate(session: ChallengeSession(router: ChallengeRouter(
            sessionHandler: .adapter(adapter), taskHandler: .adapter(adapter))))
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        // --- end of snippet ---

        let status: Int? = await withCheckedContinuation { continuation in
            session.dataTask(with: URL(string: "http://127.0.0.1:\(server.port)/")!) { _, response, _ in
                continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode)
            }.resume()
        }
        session.finishTasksAndInvalidate()
        try await server.channel.close()
        try await group.shutdownGracefully()
        #expect(status == 200)
    }

    @Test("the urlsession-router example: the right password → 200; a wrong one is sent once, then the challenge is cancelled")
    func exampleProgram() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let requests = Box<String?>()
        let server = try await LocalServer.basicAuth(group: group, requests: requests)
        let url = "http://127.0.0.1:\(server.port)/"
        var runs: [ExampleProgram.Result] = []
        for password in ["wonderland", "looking-glass"] {
            // The program is a child process: wait for it off the cooperative pool.
            runs.append(try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(with: Result { try ExampleProgram.run("urlsession-router", [url, "alice", password]) }) }
            })
        }
        try await server.channel.close()
        try await group.shutdownGracefully()
        #expect(runs[0].status == 0 && runs[0].output.contains("HTTP status: 200"), "\(runs[0].output)")
        #expect(runs[1].status == 1 && runs[1].output.contains("request failed: cancelled"), "\(runs[1].output)")
        let wrong = "Basic " + Data("alice:looking-glass".utf8).base64EncodedString()
        #expect(requests.all.filter { $0 == wrong }.count == 1, "the rejected credential is sent once: \(requests.all)")
    }

    @Test("Digest on Linux: URLSession (swift-corelibs-foundation) never hands a Digest challenge to the delegate; the request ends at the 401")
    func digestIsNotDelivered() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let requests = Box<String?>()
        let server = try await LocalServer.basicAuth(group: group, digest: true, requests: requests)
        let run = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try ExampleProgram.run("urlsession-router", ["http://127.0.0.1:\(server.port)/", "alice", "wonderland"]) })
            }
        }
        try await server.channel.close()
        try await group.shutdownGracefully()
        // If this starts failing, Foundation learned Digest: the adapter already answers it (ChallengeAdapterTests).
        #expect(run.output.contains("HTTP status: 401"), "\(run.output)")
        #expect(requests.all.count == 1 && requests.all.first == .some(nil), "one request, no Authorization: \(requests.all)")
    }
}
