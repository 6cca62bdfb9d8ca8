import TrustEvaluatorCore

// The Pincheck JSON configuration as written: what the importers produce and what
// ``Configuration`` turns into a trust manager. Each section reads itself from the parsed JSON
// (strictly: unknown keys and wrong kinds are errors at their path) and encodes itself for
// `pincheck import`.

struct RawConfiguration: Encodable {
    let version: Int
    let allHostsMustBeEvaluated: Bool?
    let anchors: RawAnchors?
    let backupPins: String?
    /// "most-specific" (the default: TrustKit, Android, Alamofire) or "all-matching" (OkHttp).
    let patternMatching: String?
    let hosts: [RawHost]
    /// The CT requirement of hosts that set none, and of hosts no entry names.
    let certificateTransparency: RawTransparency?
    /// Log lists (Google v3, Apple v5) for the CT requirements, when the caller gives none.
    let certificateTransparencyLogLists: [String]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case version, allHostsMustBeEvaluated, anchors, backupPins, patternMatching, hosts
        case certificateTransparency, certificateTransparencyLogLists
    }

    init(
        allHostsMustBeEvaluated: Bool?, patternMatching: String? = nil, anchors: RawAnchors? = nil, hosts: [RawHost],
        certificateTransparency: RawTransparency? = nil
    ) {
        version = 1
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.anchors = anchors
        backupPins = nil
        self.patternMatching = patternMatching
        self.hosts = hosts
        self.certificateTransparency = certificateTransparency
        certificateTransparencyLogLists = nil
    }

    /// Reads the whole document.
    init(json: JSONValue) throws(ConfigurationFieldError) {
        let object = try ConfigurationObject<CodingKeys>(json, at: "")
        guard let version = try object.integer(.version) else {
            throw ConfigurationFieldError(object.path(.version), "required key missing")
        }
        self.version = version
        allHostsMustBeEvaluated = try object.bool(.allHostsMustBeEvaluated)
        anchors = try object.value(.anchors).map { value throws(ConfigurationFieldError) in try RawAnchors(json: value, at: "anchors") }
        backupPins = try object.string(.backupPins)
        patternMatching = try object.string(.patternMatching)
        guard let hosts = try object.array(.hosts) else { throw ConfigurationFieldError("hosts", "required key missing") }
        var read: [RawHost] = []
        read.reserveCapacity(hosts.count)
        for (index, host) in hosts.enumerated() {
            read.append(try RawHost(json: host, at: "hosts[\(index)]"))
        }
        self.hosts = read
        certificateTransparency = try object.value(.certificateTransparency).map { value throws(ConfigurationFieldError) in
            try RawTransparency(json: value, at: "certificateTransparency")
        }
        certificateTransparencyLogLists = try object.strings(.certificateTransparencyLogLists)
    }
}

enum RawAnchors: Encodable {
    case system
    case files([String])

    /// In a host's list of anchor files, the system store (which `--ca-file` replaces).
    static let systemToken = "@system"

    /// `"system"` or a list of PEM files.
    init(json: JSONValue, at path: String) throws(ConfigurationFieldError) {
        switch json {
        case .string("system"): self = .system
        case .array: self = .files(try ConfigurationValues.strings(json, at: path))
        default: throw ConfigurationFieldError(path, "expected \"system\" or a list of PEM files")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .system: try container.encode("system")
        case .files(let files): try container.encode(files)
        }
    }
}

struct RawHost: Encodable {
    let pattern: String
    let includeSubdomains: Bool?
    let mode: String?
    let pins: [String]?
    let pinnedCertificates: [String]?
    let enforce: Bool?
    let expires: String?
    let validatesDomainName: Bool?
    let allowInvalidCertificates: Bool?
    let reportURIs: [String]?
    let revocation: RawRevocation?
    /// Pins the leaf alone must match (Apple's NSPinnedLeafIdentities); empty blocks the host.
    let leafPins: [String]?
    /// Pins a certificate above the leaf must match (Apple's NSPinnedCAIdentities); empty blocks the host.
    let caPins: [String]?
    /// This host's own anchors ("system", or PEM files; an empty list trusts nothing). Absent: the file's.
    let anchors: RawAnchors?
    /// Anchors whose chains skip the pins (Android's overridePins="true").
    let pinOverrideAnchors: RawAnchors?
    /// This host's CT requirement; absent: the file's.
    var certificateTransparency: RawTransparency?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case pattern, includeSubdomains, mode, pins, pinnedCertificates, enforce, expires
        case validatesDomainName, allowInvalidCertificates, reportURIs, revocation, leafPins, caPins, anchors, pinOverrideAnchors
        case certificateTransparency
    }

    init(
        pattern: String, includeSubdomains: Bool? = nil, mode: String? = nil, pins: [String]? = nil,
        enforce: Bool? = nil, expires: String? = nil, reportURIs: [String]? = nil,
        leafPins: [String]? = nil, caPins: [String]? = nil, anchors: RawAnchors? = nil, pinOverrideAnchors: RawAnchors? = nil
    ) {
        self.leafPins = leafPins
        self.caPins = caPins
        self.anchors = anchors
        self.pinOverrideAnchors = pinOverrideAnchors
        self.pattern = pattern
        self.includeSubdomains = includeSubdomains
        self.mode = mode
        self.pins = pins
        self.pinnedCertificates = nil
        self.enforce = enforce
        self.expires = expires
        self.validatesDomainName = nil
        self.allowInvalidCertificates = nil
        self.reportURIs = reportURIs
        self.revocation = nil
        certificateTransparency = nil
    }

    init(json: JSONValue, at path: String) throws(ConfigurationFieldError) {
        let c = try ConfigurationObject<CodingKeys>(json, at: path)
        guard let pattern = try c.string(.pattern) else { throw ConfigurationFieldError(c.path(.pattern), "required key missing") }
        self.pattern = pattern
        includeSubdomains = try c.bool(.includeSubdomains)
        mode = try c.string(.mode)
        pins = try c.strings(.pins)
        pinnedCertificates = try c.strings(.pinnedCertificates)
        enforce = try c.bool(.enforce)
        expires = try c.string(.expires)
        validatesDomainName = try c.bool(.validatesDomainName)
        allowInvalidCertificates = try c.bool(.allowInvalidCertificates)
        reportURIs = try c.strings(.reportURIs)
        revocation = try c.value(.revocation).map { value throws(ConfigurationFieldError) in
            try RawRevocation(json: value, at: c.path(.revocation))
        }
        leafPins = try c.strings(.leafPins)
        caPins = try c.strings(.caPins)
        anchors = try c.value(.anchors).map { value throws(ConfigurationFieldError) in
            try RawAnchors(json: value, at: c.path(.anchors))
        }
        pinOverrideAnchors = try c.value(.pinOverrideAnchors).map { value throws(ConfigurationFieldError) in
            try RawAnchors(json: value, at: c.path(.pinOverrideAnchors))
        }
        certificateTransparency = try c.value(.certificateTransparency).map { value throws(ConfigurationFieldError) in
            try RawTransparency(json: value, at: c.path(.certificateTransparency))
        }
    }
}

/// `"certificateTransparency": { "policy": "chrome", "enforcement": "enforce" }`.
struct RawTransparency: Encodable, Equatable {
    /// "chrome", "apple", or "off" (none, where the file's would apply).
    let policy: String
    let enforcement: String?
    let scope: String?
    let whenUnenforceable: String?

    static let off = "off"

    enum CodingKeys: String, CodingKey, CaseIterable { case policy, enforcement, scope, whenUnenforceable }

    init(policy: String, enforcement: String? = nil, scope: String? = nil, whenUnenforceable: String? = nil) {
        self.policy = policy
        self.enforcement = enforcement
        self.scope = scope
        self.whenUnenforceable = whenUnenforceable
    }

    init(json: JSONValue, at path: String) throws(ConfigurationFieldError) {
        let c = try ConfigurationObject<CodingKeys>(json, at: path)
        guard let policy = try c.string(.policy) else { throw ConfigurationFieldError(c.path(.policy), "required key missing") }
        self.policy = policy
        enforcement = try c.string(.enforcement)
        scope = try c.string(.scope)
        whenUnenforceable = try c.string(.whenUnenforceable)
    }
}

struct RawRevocation: Encodable {
    let crls: [String]?
    let crlScope: String?
    let requireStapledOCSP: Bool?
    /// The CRLs at the certificates' distribution points: "off" (default), "soft" or "hard".
    let distributionPoints: String?

    enum CodingKeys: String, CodingKey, CaseIterable { case crls, crlScope, requireStapledOCSP, distributionPoints }

    init(json: JSONValue, at path: String) throws(ConfigurationFieldError) {
        let c = try ConfigurationObject<CodingKeys>(json, at: path)
        crls = try c.strings(.crls)
        crlScope = try c.string(.crlScope)
        requireStapledOCSP = try c.bool(.requireStapledOCSP)
        distributionPoints = try c.string(.distributionPoints)
    }
}
