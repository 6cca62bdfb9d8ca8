import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TrustEvaluator

/// POSTs pin validation failure reports to their report URIs (RFC 7469 §3).
///
/// Its connections use URLSession's default validation against the system anchors: sending a
/// report never depends on the pins that just failed.
public struct HTTPSReporter: Reporter {
    private let session: URLSession

    /// - Parameter timeout: Per request, in seconds.
    public init(timeout: TimeInterval = 10) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    /// The request for one report URI: POST, `application/json`, the report as body.
    public static func request(for report: PinFailureReport, to uri: URL) -> URLRequest {
        var request = URLRequest(url: uri)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = report.json()
        return request
    }

    public func send(_ report: PinFailureReport) async throws {
        for uri in report.reportURIs where uri.scheme == "https" {
            let (_, response) = try await session.data(for: Self.request(for: report, to: uri))
            if let status = (response as? HTTPURLResponse)?.statusCode, !(200..<300).contains(status) {
                throw PincheckError(.network, "the report endpoint answered HTTP \(status)", source: uri.absoluteString)
            }
        }
    }
}
