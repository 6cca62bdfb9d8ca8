import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import TrustEvaluator

/// Paths into the repository's test PKI.
enum PKI {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Certificates")
    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    static func certificate(_ name: String) throws -> Certificate {
        try Certificate.load(contentsOf: path("\(name).pem"))[0]
    }
    /// The fixed verification time of the test PKI (2030-06-01T00:00:00Z).
    static let time = Date(timeIntervalSince1970: 1_906_502_400)
}

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
        let chain = try NIOSSLCertificate.fromPEMFile(PKI.path("\(leaf).pem"))
            + NIOSSLCertificate.fromPEMFile(PKI.path("\(intermediate).pem"))
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
