import TrustEvaluator
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// `pincheck watch`'s HTTP endpoint: `GET /metrics` answers the Prometheus text exposition, any
/// other path 404, any other method 405. Bound before the watch starts (a port in use fails the
/// command at once, with exit 2), closed on graceful shutdown.
///
/// It listens where any peer may reach it (`0.0.0.0:9464` in a pod), so every connection has a
/// budget (``Limits``): a client that pipelines requests and never reads the answers, or one that
/// sends a request a byte at a time, costs a bounded amount of memory for a bounded time, and a
/// normal scrape is still answered beside it.
struct MetricsServer: Service {
    /// What one peer can make the server hold. The defaults keep 50,000 pipelined requests from one
    /// client and 300 slow connections under 64 MiB resident (scripts/bench.sh, `BENCH=watch`).
    struct Limits: Sendable {
        /// Connections open at once; a connection past it is closed as soon as it is accepted.
        var maximumConnections = 512
        /// Requests a connection may have received and not yet been answered (pipelined); one more
        /// closes it. Prometheus sends one request at a time.
        var maximumUnansweredRequests = 16
        /// How long a connection may take to deliver a whole request (from its opening, or from the
        /// previous answer), and to take an answer while its send buffer is full. A slow sender
        /// (slowloris), an idle keep-alive connection and a reader that stopped reading are closed
        /// after it.
        var requestTimeout: TimeAmount = .seconds(10)
        /// Outbound bytes queued in the process before the connection counts as not writable: no
        /// answer is started, and nothing more is read, until the peer has taken them.
        var writeBufferHighWater = 64 * 1024
        /// The most bytes read from a connection at a time (the requests in one read are what the
        /// pipelining cap counts).
        var readBytes = 4 * 1024
    }

    let channel: any Channel

    /// Binds `host:port` (port 0: one the system picks; `address` says which).
    static func bind(
        host: String, port: Int, limits: Limits = Limits(),
        respond: @escaping @Sendable (HTTPRequestHead) -> Response
    ) throws -> MetricsServer {
        let open = Locked(0)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: limits.writeBufferHighWater / 2, high: limits.writeBufferHighWater))
            .childChannelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: limits.readBytes))
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelInitializer { channel in
                let admitted = open.withLock { count in
                    guard count < limits.maximumConnections else { return false }
                    count += 1
                    return true
                }
                guard admitted else { return channel.close() }
                channel.closeFuture.whenComplete { _ in open.withLock { $0 -= 1 } }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    // Nothing is read while the answers already written wait for the peer.
                    try pipeline.addHandler(BackPressureHandler())
                    // A malformed request is answered 400 once, then the connection closes.
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    let ordering = try pipeline.handler(type: HTTPServerPipelineHandler.self)
                    try pipeline.addHandler(PipeliningCap(limit: limits.maximumUnansweredRequests), position: .before(ordering))
                    try pipeline.addHandler(MetricsHandler(respond: respond, timeout: limits.requestTimeout))
                }
            }
        return MetricsServer(channel: try bootstrap.bind(host: host, port: port).wait())
    }

    /// One answer: its status, content type and body.
    struct Response: Sendable {
        var status: HTTPResponseStatus
        var contentType: String
        var body: [UInt8]

        static func text(_ status: HTTPResponseStatus, _ text: String) -> Response {
            Response(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
        }
    }

    /// The watch's routes: `/metrics` (GET or HEAD) and nothing else.
    static func routes(metrics: WatchMetrics) -> @Sendable (HTTPRequestHead) -> Response {
        { head in
            let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
            if path != "/metrics" { return .text(.notFound, "not found: pincheck watch serves /metrics\n") }
            if head.method != .GET && head.method != .HEAD { return .text(.methodNotAllowed, "GET /metrics\n") }
            return Response(status: .ok, contentType: "text/plain; version=0.0.4; charset=utf-8", body: metrics.exposition())
        }
    }

    /// Where it listens, as `http://HOST:PORT/metrics`.
    var url: String {
        guard let address = channel.localAddress else { return "(unbound)" }
        let host = address.ipAddress.map { address.protocol == .inet6 ? "[\($0)]" : $0 } ?? "?"
        return "http://\(host):\(address.port ?? 0)/metrics"
    }

    func run() async throws {
        // Serves until the group shuts down (or is cancelled), then stops listening.
        try? await gracefulShutdown()
        try? await channel.close()
    }
}

/// Closes a connection that has more than `limit` requests received and not yet answered. It sits
/// before NIO's pipelining handler, which holds requests while one is being answered: without a
/// cap, one read of pipelined requests is held whole.
private final class PipeliningCap: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let limit: Int
    private var unanswered = 0
    private var closing = false

    init(limit: Int) { self.limit = limit }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        if case .end = unwrapInboundIn(data) {
            unanswered += 1
            if unanswered > limit {
                closing = true
                context.close(promise: nil)
                return
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { unanswered -= 1 }
        context.write(data, promise: promise)
    }
}

/// One HTTP/1.1 exchange at a time per connection (NIO's pipelining assistance orders them). An
/// answer starts only while the connection is writable: a peer that does not read its answers
/// gets no new one, and, NIO's pipelining handler holding the next request meanwhile, nothing more
/// is read from it. The request timeout closes a connection that is not making progress.
private final class MetricsHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let respond: @Sendable (HTTPRequestHead) -> MetricsServer.Response
    private let timeout: TimeAmount
    private var request: HTTPRequestHead?
    /// A whole request waiting for the connection to become writable.
    private var waiting: HTTPRequestHead?
    private var deadline: Scheduled<Void>?

    init(respond: @escaping @Sendable (HTTPRequestHead) -> MetricsServer.Response, timeout: TimeAmount) {
        self.respond = respond
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armDeadline(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        armDeadline(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    /// The peer has `timeout` from now to deliver a whole request (or take the waiting answer).
    private func armDeadline(context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break  // a scrape has no body; anything sent is ignored
        case .end:
            guard let head = request else { return }
            request = nil
            if context.channel.isWritable { answer(head, context: context) } else { waiting = head }
        }
    }

    /// A request NIO's parser refused was answered 400 by NIO's error handler (already flushed);
    /// the connection closes after it. Any other error closes it too.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let head = waiting {
            waiting = nil
            answer(head, context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let response = respond(head)
        var headers = HTTPHeaders([("Content-Type", response.contentType), ("Content-Length", "\(response.body.count)")])
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: response.status, headers: headers))), promise: nil)
        if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil) }
        let keepAlive = head.isKeepAlive
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
        armDeadline(context: context)
    }
}
