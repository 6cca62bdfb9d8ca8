import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PincheckTestSupport
import TrustEvaluator

typealias PKI = TestPKI

/// Echoes every byte back.
final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.writeAndFlush(data, promise: nil)
    }
    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

/// A TLS echo server on 127.0.0.1 with an ephemeral port, serving `leaf` + `intermediate`.
struct TLSEchoServer {
    let channel: any Channel
    var port: Int { channel.localAddress!.port! }

    static func start(group: any EventLoopGroup, leaf: String, key: String, intermediate: String = "rsa-intermediate") async throws -> TLSEchoServer {
        try await start(group: group, chain: try NIOSSLCertificate.fromPEMFile(PKI.path("\(leaf).pem")), key: key, intermediate: intermediate)
    }

    /// The same, serving the certificates `chain` (leaf first) and then `intermediate`.
    static func start(group: any EventLoopGroup, chain served: [NIOSSLCertificate], key: String,
                      intermediate: String = "rsa-intermediate") async throws -> TLSEchoServer {
        let chain = served + (try NIOSSLCertificate.fromPEMFile(PKI.path("\(intermediate).pem")))
        let privateKey = try NIOSSLPrivateKey(file: PKI.path("keys/\(key).key"), format: .pem)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(EchoHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TLSEchoServer(channel: channel)
    }

    func stop() async throws { try await channel.close() }
}

/// Collects the first reply, or the first error (a failed handshake arrives here).
final class FirstReply: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let promise: EventLoopPromise<String>
    init(promise: EventLoopPromise<String>) { self.promise = promise }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        promise.succeed(buffer.readString(length: buffer.readableBytes) ?? "")
    }
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
    }
}

/// An HTTPS collector of pin failure reports on 127.0.0.1 (the `rsa-ip` leaf): each request's
/// body is handed to `received`, and the answer is `204 No Content`.
struct ReportCollector {
    let channel: any Channel
    let received: AsyncStream<Data>
    var port: Int { channel.localAddress!.port! }

    static func start(group: any EventLoopGroup) async throws -> ReportCollector {
        let chain = try NIOSSLCertificate.fromPEMFile(PKI.path("rsa-ip.pem")) + NIOSSLCertificate.fromPEMFile(PKI.path("rsa-intermediate.pem"))
        let key = try NIOSSLPrivateKey(file: PKI.path("keys/rsa-ip.key"), format: .pem)
        let context = try NIOSSLContext(configuration: TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)))
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(RequestBodyReader(deliver: { continuation.yield($0) }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ReportCollector(channel: channel, received: stream)
    }

    func stop() async throws { try await channel.close() }
}

/// Reads one HTTP/1.1 request with a Content-Length body, delivers the body, answers 204.
private final class RequestBodyReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let deliver: @Sendable (Data) -> Void
    private var bytes: [UInt8] = []

    init(deliver: @escaping @Sendable (Data) -> Void) { self.deliver = deliver }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0...max(0, bytes.count - 4)).first(where: { Array(bytes[$0..<min($0 + 4, bytes.count)]) == separator }) else { return }
        let head = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        guard bytes.count >= end + 4 + length else { return }
        deliver(Data(bytes[(end + 4)..<(end + 4 + length)]))
        let channel = context.channel
        context.writeAndFlush(NIOAny(ByteBuffer(string: "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}
