/// An input Pincheck cannot evaluate: unreadable or malformed certificates, pins, hosts or policies.
///
/// Thrown only when evaluation is impossible. An untrusted chain is never an error: it is a
/// ``Verdict`` with reasons.
public struct PincheckError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable code. New codes may be added; match on the ones you handle.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable, Hashable, CaseIterable {
            case malformedDER = "input.malformed-der"
            case malformedPEM = "input.malformed-pem"
            case emptyInput = "input.empty"
            case unexpectedPEMBlock = "input.not-a-certificate"
            case unreadableFile = "input.unreadable-file"
            case malformedPin = "pin.malformed"
            case emptyPinSet = "pin.empty-set"
            case invalidHost = "host.invalid"
            case invalidPolicy = "policy.invalid"
            case emptyChain = "chain.empty"
            case openSSL = "openssl.failure"
            case tooLarge = "input.too-large"
            case network = "network.failure"
            case malformedRootProgramData = "input.root-program-data"
            case staleRootProgramData = "input.root-program-data-older"
            case addressUnavailable = "input.address-unavailable"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// Every code there is (the Reason codes article's list is checked against it).
        static var all: [Code] { Base.allCases.map(Code.init) }

        /// The code's stable text, such as `input.malformed-der`.
        public var description: String { base.rawValue }

        /// Bytes that should be one DER certificate are not.
        public static let malformedDER = Code(.malformedDER)
        /// Text that should be PEM is not: bad base64, a missing END line, no PEM block at all.
        public static let malformedPEM = Code(.malformedPEM)
        /// A file or buffer with nothing in it.
        public static let emptyInput = Code(.emptyInput)
        /// PEM that holds something other than a certificate, such as a private key.
        public static let unexpectedPEMBlock = Code(.unexpectedPEMBlock)
        /// A file that could not be read.
        public static let unreadableFile = Code(.unreadableFile)
        /// A pin string that is not `sha256/<base64 of 32 bytes>` (or one of the accepted spellings).
        public static let malformedPin = Code(.malformedPin)
        /// A pinning mode given no pins: Pincheck fails closed instead of pinning nothing.
        public static let emptyPinSet = Code(.emptyPinSet)
        /// A host name or IP literal that cannot be checked against a certificate.
        public static let invalidHost = Code(.invalidHost)
        /// A policy whose settings contradict each other.
        public static let invalidPolicy = Code(.invalidPolicy)
        /// An evaluation asked for with no served certificate.
        public static let emptyChain = Code(.emptyChain)
        /// Input past one of Pincheck's resource limits (``Limits``): refused before any parsing work.
        public static let tooLarge = Code(.tooLarge)
        /// OpenSSL failed for a reason unrelated to the input (out of memory, for example).
        public static let openSSL = Code(.openSSL)
        /// A network exchange failed or timed out: a report endpoint that answered an error or
        /// not at all, a connection that closed. Not the input's fault, and not OpenSSL's.
        public static let network = Code(.network)
        /// A root-program data file (Mozilla's `certdata.txt`, CCADB records, Chrome Root Store
        /// constraints) that is none of these or is malformed: ``RootPrograms``.
        public static let malformedRootProgramData = Code(.malformedRootProgramData)
        /// A root-program data file older than the data it would replace: refused, so a stale
        /// copy cannot undo a distrust (`RootPrograms(files:over:allowingOlder:)`, TrustEvaluatorFormats).
        public static let staleRootProgramData = Code(.staleRootProgramData)
        /// An address to listen on that cannot be had: taken by another process, or not one of
        /// this machine's (`pincheck watch --listen`).
        public static let addressUnavailable = Code(.addressUnavailable)
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong and where (which certificate, which line), in words.
    public let message: String
    /// The file or input the failure is about, when there is one.
    public let source: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: What went wrong, naming the position inside the input.
    ///   - source: The file path or input name, if any.
    public init(_ code: Code, _ message: String, source: String? = nil) {
        self.code = code
        self.message = message
        self.source = source
    }

    public var description: String {
        if let source { return "\(source): \(message)" }
        return message
    }
}

/// Pincheck's resource limits: hostile input is refused quickly, with a typed error or reason,
/// instead of costing unbounded time or memory.
public enum Limits {
    /// The largest DER certificate accepted (real certificates, even with long SAN lists, stay far below).
    public static let maximumCertificateBytes = 256 * 1024
    /// The most certificates one PEM bundle may hold (anchor bundles included; Debian's has about 150).
    public static let maximumBundleCertificates = 4_096
    /// The most certificates a served chain may hold; longer chains are rejected (`chain.too-long`)
    /// without being verified. TLS servers send 2 to 4.
    public static let maximumServedChainLength = 32
}
