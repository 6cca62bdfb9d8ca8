internal import COpenSSL
import FoundationEssentials

// OpenSSL 4.0 makes `ASN1_STRING` opaque, and with it every alias of it (`ASN1_TIME`,
// `ASN1_INTEGER`, `ASN1_ENUMERATED`, `ASN1_OCTET_STRING`, `ASN1_IA5STRING`, …). Swift imports a
// pointer to one as `UnsafePointer<ASN1_STRING>` up to 3.x and as `OpaquePointer` from 4.0, where
// the type names are gone. Code in this module therefore never names those types: it reads such a
// value through `ASN1Value`, which accepts either form and hands the pointer back to OpenSSL as
// whatever type the headers it is built with declare. `scripts/openssl4-check.sh` type-checks the
// module against OpenSSL 4.0's headers.

/// A pointer to an ASN.1 string, time or integer, in any of the forms the OpenSSL headers give it.
protocol ASN1Pointer { var asn1Raw: UnsafeRawPointer { get } }

extension OpaquePointer: ASN1Pointer { var asn1Raw: UnsafeRawPointer { UnsafeRawPointer(self) } }
extension UnsafePointer: ASN1Pointer { var asn1Raw: UnsafeRawPointer { UnsafeRawPointer(self) } }
extension UnsafeMutablePointer: ASN1Pointer { var asn1Raw: UnsafeRawPointer { UnsafeRawPointer(self) } }
extension UnsafeRawPointer: ASN1Pointer { var asn1Raw: UnsafeRawPointer { self } }
extension UnsafeMutableRawPointer: ASN1Pointer { var asn1Raw: UnsafeRawPointer { UnsafeRawPointer(self) } }

/// One ASN.1 string, time or integer that OpenSSL owns (borrowed: valid while its owner is).
struct ASN1Value {
    let raw: UnsafeRawPointer

    init?(_ pointer: (some ASN1Pointer)?) {
        guard let pointer else { return nil }
        raw = pointer.asn1Raw
    }

    /// The pointer as the OpenSSL function it is passed to declares it (inferred at the call).
    func openSSL<Pointer>() -> Pointer { ASN1Value.cast(raw) }

    /// The content octets (`ASN1_STRING_get0_data`).
    var bytes: [UInt8] {
        guard let data = ASN1_STRING_get0_data(openSSL()) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(openSSL()))))
    }

    /// The content octets as UTF-8 (IA5 and UTF8 strings; invalid sequences replaced).
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// A time's seconds since 1970 (UTCTime or GeneralizedTime); nil when it is not a valid time.
    var seconds: Int64? {
        var parts = tm()
        guard ASN1_TIME_to_tm(openSSL(), &parts) == 1 else { return nil }
        return Int64(timegm(&parts))
    }

    /// An ENUMERATED's value (-1 when OpenSSL cannot read it as a long).
    var enumerated: Int { Int(ASN1_ENUMERATED_get(openSSL())) }

    /// An INTEGER's value (-1 when OpenSSL cannot read it as a long).
    var integer: Int { Int(ASN1_INTEGER_get(openSSL())) }

    /// The ASN.1 string type (`V_ASN1_…`), such as `V_ASN1_NEG_INTEGER`.
    var type: Int32 { ASN1_STRING_type(openSSL()) }

    /// Reinterprets one pointer as another pointer type of the same size: only for the types above.
    static func cast<Pointer>(_ raw: UnsafeRawPointer?) -> Pointer {
        precondition(MemoryLayout<Pointer>.size == MemoryLayout<UnsafeRawPointer?>.size, "not a pointer type: \(Pointer.self)")
        return unsafeBitCast(raw, to: Pointer.self)
    }
}

/// Out-parameters of an ASN.1 pointer type (`ASN1_GENERALIZEDTIME **`, `ASN1_INTEGER **`):
/// `slot(i)` is passed where OpenSSL asks for the address of one, and `value(i)` reads what it set.
final class ASN1OutParameters {
    private let slots: UnsafeMutablePointer<UnsafeRawPointer?>
    private let count: Int

    init(_ count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil, count: count)
    }

    deinit { slots.deallocate() }

    func slot<Pointer>(_ index: Int) -> Pointer {
        precondition(index < count)
        return ASN1Value.cast(UnsafeRawPointer(slots + index))
    }

    func value(_ index: Int) -> ASN1Value? { ASN1Value(slots[index]) }
}
