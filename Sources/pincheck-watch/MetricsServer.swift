import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// `pincheck watch`'s HTTP endpoint: `GET /metrics` answers the Prometheus text exposition, any
/// other path 404, any other method 405. Bound before the watch starts (a port in use fails the
/// command at once, with exit 2), closed on graceful shutdown.
struct MetricsServer: Service {
    let channel: any Channel

    /// Binds `host:port` (port 0: one the system picks; `address` says which).
    static func bind(host: String, port: Int, metrics: WatchMetrics) throws -> MetricsServer {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MetricsHandler(metrics: metrics))
                }
            }
        return MetricsServer(channel: try bootstrap.bind(host: host, port: port).wait())
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

/// One HTTP/1.1 exchange at a time per connection (NIO's pipelining assistance orders them).
private final class MetricsHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let metrics: WatchMetrics
    private var request: HTTPRequestHead?

    init(metrics: WatchMetrics) { self.metrics = metrics }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break  // a scrape has no body; anything sent is ignored
        case .end:
            guard let head = request else { return }
            request = nil
            let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
            let (status, type, body): (HTTPResponseStatus, String, [UInt8]) =
                if path != "/metrics" { (.notFound, "text/plain; charset=utf-8", Array("not found: pincheck watch serves /metrics\n".utf8)) }
                else if head.method != .GET && head.method != .HEAD { (.methodNotAllowed, "text/plain; charset=utf-8", Array("GET /metrics\n".utf8)) }
                else { (.ok, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition()) }
            var headers = HTTPHeaders([("Content-Type", type), ("Content-Length", "\(body.count)")])
            if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil) }
            let keepAlive = head.isKeepAlive
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { channel.close(promise: nil) }
            }
        }
    }
}
