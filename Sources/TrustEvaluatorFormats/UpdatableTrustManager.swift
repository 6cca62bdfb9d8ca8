import FoundationEssentials
import PincheckOpenSSL
import TrustEvaluatorCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A trust manager whose pins an app can update without a release: it starts from the
/// configuration compiled into the app and accepts a signed pin-set update (`PinSetUpdate`
/// documents, made by `pincheck sign`) only when
/// - its Ed25519 signature verifies with one of the keys the app embeds,
/// - its serial is greater than that of every update accepted before (no rollback, no replay),
/// - it has not expired.
///
/// An accepted update takes effect atomically: an evaluation reads the manager in force with
/// one atomic load, so evaluations in flight finish on the manager they started with and none
/// sees half an update; there is no lock on that path. The update is stored (0600, written
/// atomically) in `storageDirectory` and applied again at the next start, after the same checks.
/// When the update in force expires, evaluations fall back to the compiled-in configuration —
/// never to "unpinned". Nothing is fetched here: the app fetches the bytes however it likes.
public final class UpdatableTrustManager: TrustManagerSource {
    /// What evaluations use until an update is accepted, and after it expires.
    public let compiledIn: TrustManager

    private final class InForce: Sendable {
        let manager: TrustManager
        let serial: Int
        let expires: Date?
        init(manager: TrustManager, serial: Int, expires: Date?) {
            self.manager = manager
            self.serial = serial
            self.expires = expires
        }
    }

    private let keys: [PinSetVerificationKey]
    /// Whether an update marked `"removesPins": true` may unpin what the compiled-in configuration pins.
    private let acceptsPinRemoval: Bool
    private let storageDirectory: String?
    private let baseDirectory: String
    private let anchors: TrustAnchors?
    /// The CT log lists an update's `certificateTransparency` requirements read; nil: the update's own lists.
    private let logStore: CertificateTransparency.LogStore?
    private let events: (@Sendable (Event) -> Void)?
    /// The update in force, read with one atomic load.
    private let inForce: Atomic<Unmanaged<InForce>>
    /// Every manager ever put in force, in order, kept alive with this object so a reader's atomic
    /// load can never see a released one (updates are rare; each keeps one configuration's
    /// memory). Its lock serialises updates, and its last serial is the highest ever accepted:
    /// the rollback floor.
    private let published = Locked<[InForce]>([])

    /// What the manager did, for logs (ServerTrust's `TrustLogging` writes them to a swift-log `Logger`).
    public enum Event: Sendable {
        /// An update was accepted and is in force.
        case accepted(serial: Int, expires: Date)
        /// An update was refused; the pins in force did not change.
        case refused(PinSetUpdateError)
        /// The stored update was not applied at start (its error says why).
        case storedUpdateIgnored(PinSetUpdateError)
    }

    /// - Parameters:
    ///   - compiledIn: The configuration compiled into the app.
    ///   - keys: The public keys whose signatures are accepted (at least one).
    ///   - storageDirectory: Where the accepted update is kept for the next start (one file,
    ///     ``storedName``); nil keeps it in memory only.
    ///   - baseDirectory: Where relative file names in an update's configuration resolve.
    ///   - anchors: What an update's "system" means (as `Configuration.load(contentsOf:anchors:)`).
    ///   - time: The time a stored update is judged at.
    ///   - events: Told of every acceptance and refusal.
    ///   - acceptsPinRemoval: Whether an update may leave a host that `compiledIn` pins unpinned
    ///     (or let unlisted hosts through where `compiledIn` refuses them). False by default: such
    ///     an update is refused (`update.removes-pins`), so a stolen signing key cannot unpin the
    ///     app. When true, the update must still say so itself, with `"removesPins": true`.
    public convenience init(
        compiledIn: TrustManager, keys: [PinSetVerificationKey], storageDirectory: String? = nil,
        baseDirectory: String = ".", anchors: TrustAnchors? = nil, at time: Date = Date(),
        acceptsPinRemoval: Bool = false, events: (@Sendable (Event) -> Void)? = nil
    ) {
        self.init(
            compiledIn: compiledIn, keys: keys, storageDirectory: storageDirectory, baseDirectory: baseDirectory, anchors: anchors,
            certificateTransparencyLogStore: nil, at: time, acceptsPinRemoval: acceptsPinRemoval, events: events)
    }

    /// A manager whose updates' Certificate Transparency requirements read their logs from
    /// `certificateTransparencyLogStore` (as the compiled-in configuration's can): a log-list
    /// update and a pin-set update are applied independently, each atomically.
    /// - Parameters:
    ///   - compiledIn: The configuration compiled into the app.
    ///   - keys: The public keys whose signatures are accepted (at least one).
    ///   - storageDirectory: Where the accepted update is kept for the next start; nil: in memory only.
    ///   - baseDirectory: Where relative file names in an update's configuration resolve.
    ///   - anchors: What an update's "system" means.
    ///   - certificateTransparencyLogStore: The lists an update's CT requirements read; nil: the
    ///     update's own `certificateTransparencyLogLists`.
    ///   - time: The time a stored update is judged at.
    ///   - acceptsPinRemoval: Whether an update may leave a host that `compiledIn` pins unpinned.
    ///   - events: Told of every acceptance and refusal.
    public init(
        compiledIn: TrustManager, keys: [PinSetVerificationKey], storageDirectory: String? = nil,
        baseDirectory: String = ".", anchors: TrustAnchors? = nil,
        certificateTransparencyLogStore: CertificateTransparency.LogStore?, at time: Date = Date(),
        acceptsPinRemoval: Bool = false, events: (@Sendable (Event) -> Void)? = nil
    ) {
        self.logStore = certificateTransparencyLogStore
        self.compiledIn = compiledIn
        self.keys = keys
        self.acceptsPinRemoval = acceptsPinRemoval
        self.storageDirectory = storageDirectory
        self.baseDirectory = baseDirectory
        self.anchors = anchors
        self.events = events
        let initial = InForce(manager: compiledIn, serial: 0, expires: nil)
        published.withLock { $0.append(initial) }
        inForce = Atomic(Unmanaged.passUnretained(initial))
        restore(at: time)
    }

    /// The serial of the update in force (0: the compiled-in configuration).
    public var serial: Int { current.serial }
    /// When the update in force expires (nil: the compiled-in configuration, which does not).
    public var expires: Date? { current.expires }

    private var current: InForce { inForce.load(ordering: .acquiring).takeUnretainedValue() }

    /// The trust manager in force at `time`: the accepted update's, or the compiled-in one once it expired.
    public func trustManager(at time: Date) -> TrustManager {
        let state = current
        if let expires = state.expires, time >= expires { return compiledIn }
        return state.manager
    }

    /// Judges a served chain with the manager in force at `time` (see `TrustManager/evaluate(_:host:port:at:stapledOCSPResponse:)`).
    public func evaluate(
        _ servedChain: [Certificate], host: String, port: Int = 443, at time: Date,
        stapledOCSPResponse: [UInt8]? = nil
    ) throws(PincheckError) -> Verdict {
        try trustManager(at: time).evaluate(servedChain, host: host, port: port, at: time, stapledOCSPResponse: stapledOCSPResponse)
    }

    /// Judges a served chain given as DER with the manager in force at `time`.
    public func evaluate(
        derEncoded chain: [[UInt8]], host: String, port: Int = 443, at time: Date,
        stapledOCSPResponse: [UInt8]? = nil
    ) throws(PincheckError) -> Verdict {
        try trustManager(at: time).evaluate(derEncoded: chain, host: host, port: port, at: time, stapledOCSPResponse: stapledOCSPResponse)
    }

    /// Checks a signed update and, when it passes, puts it in force and stores it.
    /// - Parameters:
    ///   - document: The update's exact bytes, as signed.
    ///   - signature: The detached Ed25519 signature: 64 bytes, or their base64.
    ///   - time: The time expiry is judged at.
    /// - Returns: The serial now in force.
    /// - Throws: ``PinSetUpdateError``; the pins in force are unchanged.
    @discardableResult
    public func apply(document: [UInt8], signature: [UInt8], at time: Date = Date()) throws(PinSetUpdateError) -> Int {
        do {
            return try apply(document: document, signature: signature, at: time, store: true)
        } catch {
            events?(.refused(error))
            throw error
        }
    }

    private func apply(document: [UInt8], signature: [UInt8], at time: Date, store: Bool) throws(PinSetUpdateError) -> Int {
        let update = try PinSetUpdate.verify(
            document: document, signature: signature, keys: keys, at: time,
            baseDirectory: baseDirectory, anchors: anchors, floor: compiledIn,
            acceptsPinRemoval: acceptsPinRemoval, logStore: logStore)
        // One update at a time: the rollback check, the store and the swap happen together; with
        // storage, under a lock on the folder too, against what is stored there (another process
        // sharing the folder may have stored a newer update since this one started).
        let outcome = published.withLock { (published: inout [InForce]) -> Result<Int, PinSetUpdateError> in
            let highest = published.last?.serial ?? 0
            guard update.serial > highest else {
                return .failure(PinSetUpdateError(.rollback, "update \(update.serial) is not newer than update \(highest), already accepted"))
            }
            if store, let storageDirectory {
                let lock = FilePath.join(storageDirectory, Self.storedName + ".lock")
                let descriptor = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
                guard descriptor >= 0 else {
                    return .failure(PinSetUpdateError(.storage, "cannot open the storage lock \(lock): \(String(cString: strerror(errno)))"))
                }
                defer { close(descriptor) }
                while flock(descriptor, LOCK_EX) != 0 {
                    guard errno == EINTR else {
                        return .failure(PinSetUpdateError(.storage, "cannot lock \(lock): \(String(cString: strerror(errno)))"))
                    }
                }
                defer { _ = flock(descriptor, LOCK_UN) }
                if let stored = storedUpdate(at: nil), stored.serial >= update.serial {
                    return .failure(
                        PinSetUpdateError(
                            .rollback,
                            "update \(update.serial) is not newer than update \(stored.serial), stored by another process sharing \(storageDirectory)"
                        ))
                }
                // One file, one rename: the signature's base64 on the first line, then the document's bytes.
                let stored = Array((Self.signatureBase64(signature) + "\n").utf8) + document
                if let problem = PrivateFile.write(stored, to: FilePath.join(storageDirectory, Self.storedName))?.description {
                    return .failure(PinSetUpdateError(.storage, problem))
                }
            }
            let state = InForce(manager: update.configuration.trustManager, serial: update.serial, expires: update.expires)
            published.append(state)
            inForce.store(Unmanaged.passUnretained(state), ordering: .releasing)
            return .success(update.serial)
        }
        let serial = try outcome.get()
        events?(.accepted(serial: serial, expires: update.expires))
        return serial
    }

    /// The file in `storageDirectory` that holds the accepted update.
    public static let storedName = "pinset-update"

    private static func signatureBase64(_ signature: [UInt8]) -> String {
        signature.count == Ed25519.signatureLength
            ? Base64.encode(signature)
            : String(decoding: signature, as: UTF8.self).trimmingWhitespaceCharacters()
    }

    /// The update stored in `storageDirectory`, its signature verified; judged at `time`, or with
    /// expiry not judged when `time` is nil (an expired update still sets the rollback floor).
    /// Nil when none is stored or it does not verify.
    private func storedUpdate(at time: Date?) -> PinSetUpdate? {
        guard let storageDirectory,
            let stored = try? InputFile.read(
                FilePath.join(storageDirectory, Self.storedName), limit: InputFile.configurationLimit, what: "stored update"),
            let newline = stored.firstIndex(of: 0x0A)
        else { return nil }
        return try? PinSetUpdate.verify(
            document: Array(stored[(newline + 1)...]), signature: Array(stored[..<newline]), keys: keys,
            at: time ?? Date(timeIntervalSince1970: 0), baseDirectory: baseDirectory, anchors: anchors,
            floor: compiledIn, acceptsPinRemoval: acceptsPinRemoval, logStore: logStore)
    }

    /// Applies the stored update, if there is one and it still passes every check.
    private func restore(at time: Date) {
        // A process killed while storing an update leaves its temporary file behind (the rename
        // never happened, so the stored update is whole): remove such leftovers at start.
        if let storageDirectory, let names = try? FileManager.default.contentsOfDirectory(atPath: storageDirectory) {
            for name in names where name.hasPrefix(Self.storedName + ".tmp-") {
                _ = try? FileManager.default.removeItem(atPath: FilePath.join(storageDirectory, name))
            }
        }
        guard let storageDirectory else { return }
        let path = FilePath.join(storageDirectory, Self.storedName)
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        let stored: [UInt8]
        do { stored = try InputFile.read(path, limit: InputFile.configurationLimit, what: "stored update") } catch {
            // There but unreadable (permissions, a folder in its place, too large): said, not dropped in silence.
            events?(.storedUpdateIgnored(PinSetUpdateError(.storage, error.description)))
            return
        }
        do throws(PinSetUpdateError) {
            guard let newline = stored.firstIndex(of: 0x0A) else { throw PinSetUpdateError(.malformed, "the stored update has no signature line") }
            _ = try apply(document: Array(stored[(newline + 1)...]), signature: Array(stored[..<newline]), at: time, store: false)
        } catch {
            events?(.storedUpdateIgnored(error))
        }
    }
}
