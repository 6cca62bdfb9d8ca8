import FoundationEssentials
import PincheckOpenSSL
import TrustEvaluatorCore

/// An Ed25519 public key an app embeds to accept pin-set updates signed by its private key.
public struct PinSetVerificationKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 raw bytes.
    public let rawRepresentation: [UInt8]

    /// - Throws: `PincheckError` when the bytes are not 32.
    public init(rawRepresentation: [UInt8]) throws(PincheckError) {
        guard rawRepresentation.count == Ed25519.publicKeyLength else {
            throw PincheckError(.invalidPolicy, "an Ed25519 public key is 32 bytes, not \(rawRepresentation.count)")
        }
        self.rawRepresentation = rawRepresentation
    }

    /// The key as `pincheck keygen` prints it: base64 of the 32 raw bytes.
    public init(base64 text: String) throws(PincheckError) {
        guard let bytes = Base64.decode(text.trimmingWhitespaceCharacters()) else {
            throw PincheckError(.invalidPolicy, "the update key is not base64 (pincheck keygen prints it)")
        }
        try self.init(rawRepresentation: bytes)
    }

    /// Base64 of the raw key.
    public var description: String { Base64.encode(rawRepresentation) }
}

/// Why a pin-set update was refused. Every refusal leaves the pins in force unchanged.
public struct PinSetUpdateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable code.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The signature does not verify with any embedded key (tampered, or signed by another key).
        case badSignature = "update.bad-signature"
        /// The document is not an update: not JSON, or without `serial`, `expires` or `configuration`.
        case malformed = "update.malformed"
        /// The serial is not greater than the highest accepted so far (a replayed or older update).
        case rollback = "update.rollback"
        /// The update's `expires` has passed.
        case expired = "update.expired"
        /// The signed configuration does not load (its own error is in the message).
        case invalidConfiguration = "update.invalid-configuration"
        /// The signed configuration turns chain or name validation off for a host: an update may
        /// change pins, never what makes a chain valid, so a stolen signing key cannot switch
        /// validation off.
        case weakensValidation = "update.weakens-validation"
        /// The update would leave a host unpinned (or unlisted hosts allowed) that the app's
        /// compiled-in configuration pins (or refuses), and the update does not say so with
        /// `"removesPins": true`, or the app was not built to accept that (``UpdatableTrustManager``'s
        /// `acceptsPinRemoval`).
        case removesPins = "update.removes-pins"
        /// The accepted update could not be stored for the next start.
        case storage = "update.storage"
    }

    public let code: Code
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// A signed pin-set document, checked: what `pincheck sign` signs and an app applies.
///
/// The document is JSON: `{"serial": 7, "expires": "2027-06-30T00:00:00Z", "configuration": {…}}`,
/// where `configuration` is a Pincheck JSON configuration. The signature is a detached Ed25519
/// signature over the document's exact bytes, as 64 raw bytes or their base64.
struct PinSetUpdate {
    let serial: Int
    let expires: Date
    let configuration: Configuration

    /// Whether the signed document says it may remove pins (`"removesPins": true`).
    let removesPins: Bool

    private struct Envelope {
        let serial: Int
        let expires: String
        let configuration: JSONValue
        let removesPins: Bool?

        /// The signed document's fields, read from its one parse (other keys are ignored).
        init?(_ document: JSONValue) {
            guard case .object(let fields) = document, case .number(let serial)? = fields["serial"],
                serial == serial.rounded(), abs(serial) < 1e15,
                case .string(let expires)? = fields["expires"], let configuration = fields["configuration"]
            else { return nil }
            switch fields["removesPins"] {
            case nil, .null?: removesPins = nil
            case .bool(let flag)?: removesPins = flag
            default: return nil
            }
            self.serial = Int(serial)
            self.expires = expires
            self.configuration = configuration
        }
    }

    /// - Parameters:
    ///   - floor: The app's compiled-in configuration: what an update may not unpin unless both
    ///     the document (`removesPins`) and the app (`acceptsPinRemoval`) say so. Nil: not checked
    ///     (`pincheck sign`, which does not know the app).
    /// - Throws: ``PinSetUpdateError`` in the order: signature, form, expiry, configuration, pins.
    static func verify(
        document: [UInt8], signature: [UInt8], keys: [PinSetVerificationKey], at time: Date,
        baseDirectory: String, anchors: TrustAnchors?, floor: TrustManager? = nil,
        acceptsPinRemoval: Bool = false,
        logStore: CertificateTransparency.LogStore? = nil
    ) throws(PinSetUpdateError) -> PinSetUpdate {
        let raw = try signatureBytes(signature)
        // Nothing in the document is read before its signature verifies.
        guard keys.contains(where: { Ed25519.verify(signature: raw, message: document, publicKey: $0.rawRepresentation) }) else {
            throw PinSetUpdateError(
                .badSignature, "the signature does not verify with any of the \(keys.count) embedded key\(keys.count == 1 ? "" : "s")")
        }
        // A repeated key ("serial" twice) could be read two ways; the signer meant one.
        let parsed: JSONValue
        do throws(JSONSyntax.Problem) { parsed = try JSONSyntax.parse(document) } catch {
            throw PinSetUpdateError(.malformed, error.description)
        }
        guard let envelope = Envelope(parsed) else {
            throw PinSetUpdateError(
                .malformed, "not a pin-set update ({\"serial\": N, \"expires\": TIME, \"configuration\": {…}, \"removesPins\": true or false})")
        }
        guard envelope.serial > 0 else { throw PinSetUpdateError(.malformed, "serial must be a positive integer") }
        guard let expires = Timestamp.parse(envelope.expires) ?? Timestamp.parseDay(envelope.expires) else {
            throw PinSetUpdateError(.malformed, "expires \"\(envelope.expires)\" is not an ISO 8601 date or time")
        }
        guard time < expires else {
            throw PinSetUpdateError(.expired, "update \(envelope.serial) expired at \(Timestamp.iso8601(expires))")
        }
        let configuration: Configuration
        do {
            configuration = try Configuration.decode(
                document: envelope.configuration, source: "update \(envelope.serial)",
                baseDirectory: baseDirectory, anchors: anchors, logStore: logStore)
        } catch {
            throw PinSetUpdateError(.invalidConfiguration, error.description)
        }
        try refuseWeakening(configuration)
        let removesPins = envelope.removesPins ?? false
        if let floor {
            let removed = Self.unpinned(by: configuration, below: floor, at: time, until: expires)
            if !removed.isEmpty {
                guard removesPins else {
                    throw PinSetUpdateError(
                        .removesPins,
                        "update \(envelope.serial) \(removed.joined(separator: "; ")); an update may change pins, not remove them, unless it says \"removesPins\": true and the app accepts that"
                    )
                }
                guard acceptsPinRemoval else {
                    throw PinSetUpdateError(
                        .removesPins,
                        "update \(envelope.serial) \(removed.joined(separator: "; ")); it says \"removesPins\": true, but this app was built not to accept updates that remove pins"
                    )
                }
            }
        }
        return PinSetUpdate(serial: envelope.serial, expires: expires, configuration: configuration, removesPins: removesPins)
    }

    /// The detached signature's 64 bytes: given raw, or in base64.
    private static func signatureBytes(_ signature: [UInt8]) throws(PinSetUpdateError) -> [UInt8] {
        if signature.count == Ed25519.signatureLength { return signature }
        guard let decoded = Base64.decode(String(decoding: signature, as: UTF8.self).trimmingWhitespaceCharacters()) else {
            throw PinSetUpdateError(.badSignature, "the signature is neither 64 bytes nor base64")
        }
        return decoded
    }

    /// An update changes pins only: one that turns chain or host name validation off is refused.
    private static func refuseWeakening(_ configuration: Configuration) throws(PinSetUpdateError) {
        for entry in configuration.hosts {
            if case .disabled = entry.policy.validationPolicy.chainValidation {
                throw PinSetUpdateError(
                    .weakensValidation, "\(entry.path) (\(entry.policy.pattern)) turns chain validation off; an update may change pins only")
            }
            if case .disabled = entry.policy.validationPolicy.nameValidation {
                throw PinSetUpdateError(
                    .weakensValidation, "\(entry.path) (\(entry.policy.pattern)) turns host name validation off; an update may change pins only")
            }
        }
    }

    /// What `configuration` leaves open that `floor` closes: a pattern with an enforced pin set
    /// there (in force at `time`) and none here that stays in force until the update expires, and
    /// unlisted hosts allowed where they were refused. An expired or expiring pin set is no pin set.
    static func unpinned(by configuration: Configuration, below floor: TrustManager, at time: Date, until expires: Date) -> [String] {
        var removed: [String] = []
        if floor.allHostsMustBeEvaluated && !configuration.trustManager.allHostsMustBeEvaluated {
            removed.append("lets unlisted hosts through (allHostsMustBeEvaluated: false), which the compiled-in configuration refuses")
        }
        func enforced(_ policy: HostPolicy, until end: Date) -> Bool {
            policy.pinSets.contains { set in
                if case .none = set.pinning { return false }
                return set.enforcement == .enforce && (set.expires.map { $0 >= end } ?? true)
            }
        }
        // Judged by the hosts each pattern covers, not by its spelling: pins moved from
        // www.example.test to *.example.test still pin www.example.test, and an exclusion the
        // update adds below a pinned pattern unpins the hosts it covers. Each pattern of either
        // configuration gives sample names; a name the compiled-in configuration pins must be
        // pinned, until the update expires, by the policy the update applies to it.
        let updated = configuration.trustManager
        var samples: [String] = []
        for pattern in floor.policies.map(\.pattern) + configuration.hosts.map(\.policy.pattern) {
            for name in Self.sampleNames(pattern) where !samples.contains(name) { samples.append(name) }
        }
        var reported = Set<String>()
        for name in samples {
            guard let pinned = (try? floor.policy(for: name)) ?? nil, enforced(pinned, until: time) else { continue }
            if let now = (try? updated.policy(for: name)) ?? nil, enforced(now, until: expires) { continue }
            let pattern = "\(pinned.pattern)"
            if reported.insert(pattern).inserted {
                removed.append(
                    "leaves \(pattern)\(pattern == name ? "" : " (\(name), say)") without the enforced pins the compiled-in configuration gives it")
            }
        }
        return removed
    }

    /// Names a pattern covers, one for each way it matches: the name itself, and one and two
    /// labels below it where it reaches that far.
    static func sampleNames(_ pattern: HostPattern) -> [String] {
        let below = "pincheck-sample." + pattern.base
        switch pattern.kind {
        case .exact: return [pattern.base]
        case .includingSubdomains: return [pattern.base, below, "deeper." + below]
        case .oneLabel: return [below]
        case .anyDepth: return [pattern.base, below, "deeper." + below]
        }
    }
}
