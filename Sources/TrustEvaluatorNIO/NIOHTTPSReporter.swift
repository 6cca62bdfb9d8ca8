import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ServerTrust
import TrustEvaluator

/// POSTs pin validation failure reports (RFC 7469 §3) over SwiftNIO, judging the collector's
/// certificate with Pincheck.
///
/// The collector is validated with `validation` (no pins: a report must never depend on the pins
/// that just failed) — the system anchors by default, or a private CA's, which FoundationNetworking's
/// `URLSession` (and so `HTTPSReporter`) cannot be given on Linux. One connection per report URI,
/// HTTP/1.1, `Connection: close`; a 2xx status is success, anything else an error.
public struct NIOHTTPSReporter: Reporter {
    /// How the collector's chain is judged.
    public let validationPolicy: ValidationPolicy
    /// How the collector's chain is judged, as a `TrustPolicy` without pins.
    @available(*, deprecated, renamed: "validationPolicy")
    public var validation: TrustPolicy { TrustPolicy(pinning: .none, validation: validationPolicy) }
    /// The loops the connections run on.
    public let group: any EventLoopGroup
    /// Per report URI: connect, handshake, request and response together.
    public let timeout: TimeAmount

    /// - Parameters:
    ///   - validation: Anchors and checks for the collector; the system store by default.
    ///   - group: NIO's shared loops by default.
    ///   - timeout: Ten seconds by default.
    public init(
        validation: ValidationPolicy = ValidationPolicy(), group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        timeout: TimeAmount = .seconds(10)
    ) {
        self.validationPolicy = validation
        self.group = group
        self.timeout = timeout
    }

    /// A reporter whose collector validation is given as a `TrustPolicy` whose pinning is not used.
    @available(
        *, deprecated, message: "give the validation as a ValidationPolicy (a TrustPolicy's pins were ignored here): validation: policy.validation"
    )
    @_disfavoredOverload
    public init(
        validation: TrustPolicy = TrustPolicy(), group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        timeout: TimeAmount = .seconds(10)
    ) {
        self.init(validation: validation.validation, group: group, timeout: timeout)
    }

    public func send(_ report: PinFailureReport) async throws {
        for uri in report.reportURIs where uri.scheme == "https" {
            try await post(report.json(), to: uri)
        }
    }

    private func post(_ body: Data, to uri: URL) async throws {
        guard let host = uri.host, !host.isEmpty else {
            throw PincheckError(.invalidHost, "the report URI has no host", source: uri.absoluteString)
        }
        let port = uri.port ?? 443
        let verifier = PincheckNIOVerifier(policy: TrustPolicy(pinning: .none, validation: validationPolicy))
        let context = try NIOSSLContext(configuration: PincheckNIOVerifier.makeClientConfiguration())
        let status = group.next().makePromise(of: Int.self)
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        verifier.makeClientHandler(context: context, host: host, port: port, channel: channel))
                    try channel.pipeline.syncOperations.addHandler(StatusLineReader(status: status))
                }
            }
            .connect(host: host, port: port).get()
        let deadline = channel.eventLoop.scheduleTask(in: timeout) {
            status.fail(PincheckError(.network, "the report endpoint did not answer in time", source: uri.absoluteString))
        }
        defer {
            deadline.cancel()
            channel.close(promise: nil)
        }
        let path = uri.path.isEmpty ? "/" : uri.path + (uri.query.map { "?\($0)" } ?? "")
        let authority = uri.port.map { "\(host):\($0)" } ?? host
        var request = ByteBuffer(
            string: "POST \(path) HTTP/1.1\r\nHost: \(authority)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n")
        request.writeBytes(body)
        try await channel.writeAndFlush(request)
        let code = try await status.futureResult.get()
        guard (200..<300).contains(code) else {
            throw PincheckError(.network, "the report endpoint answered HTTP \(code)", source: uri.absoluteString)
        }
    }
}

/// Reads the status code of an HTTP/1.1 response's status line; errors and early closes fail it.
private final class StatusLineReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let status: EventLoopPromise<Int>
    private var received = ByteBuffer()

    init(status: EventLoopPromise<Int>) { self.status = status }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received.writeBuffer(&buffer)
        let view = received.readableBytesView
        guard let end = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if received.readableBytes > 8_192 { fail(context, "the report endpoint's status line is too long") }
            return
        }
        let line = String(decoding: view[view.startIndex..<end], as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]) else {
            fail(context, "the report endpoint did not answer HTTP/1.1")
            return
        }
        status.succeed(code)
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        status.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        status.fail(ChannelError.eof)
    }

    private func fail(_ context: ChannelHandlerContext, _ message: String) {
        status.fail(PincheckError(.network, message))
        context.close(promise: nil)
    }
}
