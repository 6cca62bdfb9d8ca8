import FoundationEssentials

/// What each program's file says of one root or intermediate, as the facts keep it. The files
/// themselves (`certdata.txt`, CCADB records, Chrome's constraints) are parsed into these by
/// TrustEvaluatorFormats; the engine reads only these values and their encoded form.
extension RootProgramFacts {
    /// One root of Mozilla's `certdata.txt`, with what its trust object says of TLS servers.
    package struct MozillaRoot: Hashable, Sendable {
        package let label: String
        package let sha256: [UInt8]
        package let subjectAndKey: [UInt8]
        package let publicKeySHA256: [UInt8]
        /// `CKA_TRUST_SERVER_AUTH` is `CKT_NSS_TRUSTED_DELEGATOR`.
        package let trustedForServers: Bool
        /// `CKA_NSS_SERVER_DISTRUST_AFTER`, from the certificate object or the trust object.
        package let distrustAfter: Date?
        package let notBefore: Date

        package init(
            label: String, sha256: [UInt8], subjectAndKey: [UInt8], publicKeySHA256: [UInt8], trustedForServers: Bool,
            distrustAfter: Date?, notBefore: Date
        ) {
            self.label = label
            self.sha256 = sha256
            self.subjectAndKey = subjectAndKey
            self.publicKeySHA256 = publicKeySHA256
            self.trustedForServers = trustedForServers
            self.distrustAfter = distrustAfter
            self.notBefore = notBefore
        }
    }

    /// One root record of the CCADB: its status in the Chrome and Mozilla programs.
    package struct CCADBRoot: Hashable, Sendable {
        package let name: String
        package let sha256: [UInt8]
        /// "Included", "Removed", "Blocked", "Not Included", … as the CCADB says.
        package let chrome: String
        package let mozilla: String
        package let tlsCapable: Bool
        package let validFrom: Date?

        package init(name: String, sha256: [UInt8], chrome: String, mozilla: String, tlsCapable: Bool, validFrom: Date?) {
            self.name = name
            self.sha256 = sha256
            self.chrome = chrome
            self.mozilla = mozilla
            self.tlsCapable = tlsCapable
            self.validFrom = validFrom
        }
    }

    /// One TLS-capable, unrevoked intermediate of the CCADB: a CA family's member (``CAFamilies``).
    package struct Intermediate: Hashable, Sendable {
        package let name: String
        package let owner: String
        package let sha256: [UInt8]
        package let parent: [UInt8]
        package let validFrom: Date?
        package let validTo: Date?
        /// How many partitioned CRLs it publishes (0: one full CRL, or none disclosed).
        package let crlPartitions: Int

        package init(name: String, owner: String, sha256: [UInt8], parent: [UInt8], validFrom: Date?, validTo: Date?, crlPartitions: Int) {
            self.name = name
            self.owner = owner
            self.sha256 = sha256
            self.parent = parent
            self.validFrom = validFrom
            self.validTo = validTo
            self.crlPartitions = crlPartitions
        }
    }

    /// One anchor of Chrome Root Store's constraints file.
    package struct ChromeAnchor: Hashable, Sendable {
        package let name: String
        package let sha256: [UInt8]
        /// `.some(nil)`: a block applies without a date; `nil`: no block applies (never trusted).
        package let distrustAfter: Date??

        package init(name: String, sha256: [UInt8], distrustAfter: Date??) {
            self.name = name
            self.sha256 = sha256
            self.distrustAfter = distrustAfter
        }
    }
}
