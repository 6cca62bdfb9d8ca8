import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// CABF 7.1.4.3 asks that a subject CN be a byte-for-byte copy of a subjectAltName. Pincheck never
/// reads the CN, but software that does can be misled by one, so the leaf is refused when its CN
/// is a different spelling of one of its SANs (case, IDN form, an IP address in hex, with leading
/// zeros or not in RFC 5952 form), or names another host in the same domain as a DNS SAN.
///
/// A CN unrelated to every SAN is tolerated: the BetterTLS suites (in x509-limbo) require a
/// verifier to ignore such CNs, which is the full rule's only other effect.
struct SubjectCommonNameCheck: PathCheck {
    func check(_ input: PathCheckInput, into findings: inout PathFindings) {
        guard let leaf = input.path.certificates.first else { return }
        let dnsNames = leaf.dnsNames
        let addresses = leaf.ipAddresses
        for commonName in leaf.facts.subjectCommonNames where !dnsNames.contains(commonName) && !addresses.contains(commonName) {
            if let problem = Self.problem(commonName, dnsNames: dnsNames, addresses: addresses) {
                findings.fail(.profileViolation, "the leaf's subject CN \"\(commonName)\" \(problem)")
            } else if Self.namesUnlistedHost(commonName, dnsNames: dnsNames) {
                // easy-rsa names the entity after the node and lists other names in the SAN: every
                // verifier ignores the CN once a SAN is present (RFC 6125 §6.4.4); only the
                // Baseline Requirements (7.1.4.3) ask for the copy.
                input.baselineRequirement(
                    .profileViolation,
                    "the leaf's subject CN \"\(commonName)\" names a host of the subjectAltName's domain that the subjectAltName does not list",
                    into: &findings)
            }
        }
    }

    /// Why a CN that is not an exact SAN copy is refused, or nil when it is unrelated to the SANs.
    static func problem(_ commonName: String, dnsNames: [String], addresses: [String]) -> String? {
        if let value = addressBytes(commonName), addresses.contains(where: { addressBytes($0) == value }) {
            return "spells an IP address of the subjectAltName differently (RFC 5952 / dotted-decimal form required)"
        }
        let lowered = commonName.lowercased()
        if dnsNames.contains(where: { $0.lowercased() == lowered }) {
            return "differs from a subjectAltName DNS name in letter case"
        }
        return nil
    }

    /// Whether the CN names another host in the domain of a DNS SAN.
    static func namesUnlistedHost(_ commonName: String, dnsNames: [String]) -> Bool {
        guard let parent = Self.parent(commonName.lowercased()) else { return false }
        return dnsNames.contains(where: { Self.parent($0.lowercased()) == parent })
    }

    private static func parent(_ name: String) -> Substring? {
        guard let dot = name.firstIndex(of: "."), name.index(after: dot) < name.endIndex else { return nil }
        return name[name.index(after: dot)...]
    }

    /// The address an IP literal denotes, accepting the lax spellings (`inet_aton`) a CN-reading client might.
    static func addressBytes(_ text: String) -> [UInt8]? {
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        guard text.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isASCIIHexDigit || $0 == "." || $0 == "x" || $0 == "X") }) else {
            return nil
        }
        var v4 = in_addr()
        if inet_aton(text, &v4) != 0 { return withUnsafeBytes(of: &v4) { Array($0) } }
        return nil
    }
}
