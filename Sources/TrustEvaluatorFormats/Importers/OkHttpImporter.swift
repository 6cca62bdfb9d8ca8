import FoundationEssentials
import TrustEvaluatorCore

/// OkHttp `CertificatePinner` pins: `pattern sha256/…` lines.
extension ConfigurationImporter {
    static func okHttp(_ data: Data, source: String) throws(PincheckError) -> RawConfiguration {
        var order: [String] = []
        var pins: [String: [String]] = [:]
        for (number, rawLine) in text(data).split(whereSeparator: \.isNewline).enumerated() {
            let line = String(rawLine).trimmingWhitespaceCharacters()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("//") { continue }
            let parts = line.split(whereSeparator: \.isWhitespace)
            guard parts.count == 2, parts[1].hasPrefix("sha256/") || parts[1].hasPrefix("sha1/") else {
                throw PincheckError(
                    .invalidPolicy, "line \(number + 1): expected \"pattern sha256/BASE64\" (OkHttp CertificatePinner.add)", source: source)
            }
            let pattern = String(parts[0])
            if pins[pattern] == nil { order.append(pattern) }
            pins[pattern, default: []].append(String(parts[1]))
        }
        // An empty CertificatePinner pins nothing: every host gets default validation.
        return RawConfiguration(
            allHostsMustBeEvaluated: false, patternMatching: "all-matching",
            hosts: order.map { RawHost(pattern: $0, mode: "public-key", pins: pins[$0]) })
    }
}
