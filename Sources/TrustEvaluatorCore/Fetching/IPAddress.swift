import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address, read from its text or from a socket address.
package struct IPAddress: Sendable, Hashable {
    /// 4 or 16 bytes, network order.
    package let bytes: [UInt8]

    package var isV6: Bool { bytes.count == 16 }

    package init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    package init(bytes: [UInt8]) { self.bytes = bytes }

    /// Why a fetch must never reach this address; nil when it may. Link-local addresses (where
    /// the cloud providers' metadata services answer), the metadata addresses outside that range,
    /// unspecified, multicast and reserved addresses are refused always; loopback unless allowed.
    /// IPv4 carried in IPv6 (mapped, NAT64) is judged as the IPv4 address it carries.
    package func forbidden(allowingLoopback: Bool) -> String? {
        forbidden(allowingLoopback: allowingLoopback, allowingPrivate: true)
    }

    /// The same, and private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) refused
    /// unless `allowingPrivate`.
    package func forbidden(allowingLoopback: Bool, allowingPrivate: Bool) -> String? {
        if isV6 {
            let b = bytes
            if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
                return IPAddress(bytes: Array(b[12...])).forbidden(allowingLoopback: allowingLoopback, allowingPrivate: allowingPrivate)
            }
            if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
                return IPAddress(bytes: Array(b[12...])).forbidden(allowingLoopback: allowingLoopback, allowingPrivate: allowingPrivate)
            }
            if !allowingPrivate && (b[0] & 0xFE) == 0xFC { return "a private (unique local) address" }
            if b.allSatisfy({ $0 == 0 }) { return "the unspecified address" }
            if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return allowingLoopback ? nil : "a loopback address" }
            if b[0] == 0xFE && (b[1] & 0xC0) == 0x80 { return "a link-local address" }
            if b[0] == 0xFF { return "a multicast address" }
            // AWS's instance metadata service over IPv6.
            if b == [0xFD, 0x00, 0x0E, 0xC2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54] { return "a cloud metadata address" }
            return nil
        }
        let b = bytes
        switch b[0] {
        case 0: return "the unspecified network (0.0.0.0/8)"
        case 127: return allowingLoopback ? nil : "a loopback address"
        case 169 where b[1] == 254: return "a link-local address (cloud metadata services answer there)"
        case 224...239: return "a multicast address"
        case 240...255: return "a reserved or broadcast address"
        default: break
        }
        // Alibaba Cloud's metadata service, outside the link-local range.
        if b == [100, 100, 100, 200] { return "a cloud metadata address" }
        if !allowingPrivate {
            if b[0] == 10 || (b[0] == 172 && (b[1] & 0xF0) == 16) || (b[0] == 192 && b[1] == 168) { return "a private address" }
            if b[0] == 100 && (b[1] & 0xC0) == 64 { return "a shared (carrier-grade NAT) address" }
        }
        return nil
    }

    /// An IPv4 address in any spelling the resolver and proxies accept for one: `2130706433`,
    /// `0x7f000001`, `0177.0.0.1`, `127.1` (inet_aton's forms); nil for anything else.
    package init?(legacyIPv4 text: String) {
        guard !text.isEmpty,
            text.utf8.allSatisfy({
                $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "x") || $0 == UInt8(ascii: "X")
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0)
            })
        else { return nil }
        var v4 = in_addr()
        guard inet_aton(text, &v4) != 0 else { return nil }
        bytes = withUnsafeBytes(of: &v4) { Array($0) }
    }

    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isV6 ? AF_INET6 : AF_INET
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
