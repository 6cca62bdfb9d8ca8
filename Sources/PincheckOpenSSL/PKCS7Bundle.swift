internal import COpenSSL

/// PKCS #7 certificate bundles (`.p7b`, `.p7c`: a SignedData that carries certificates and no
/// content). Java's `CertificateFactory.generateCertificates` reads them, DER or PEM, so an
/// Android `@raw` resource may be one, and Windows exports a certificate with its chain as one.
package enum PKCS7Bundle {
    /// `06 09 2A 86 48 86 F7 0D 01 07 02`: the object identifier pkcs7-signedData, as a ContentInfo
    /// starts with it.
    private static let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]

    /// True when `der` starts as a ContentInfo of type signedData (read from the bytes, not parsed).
    package static func isSignedData(_ der: [UInt8]) -> Bool {
        guard der.count > 2, der[0] == 0x30, der[1] != 0x80 else { return false }
        let header = der[1] < 0x80 ? 2 : 2 + Int(der[1] & 0x7F)
        guard header + signedDataOID.count <= der.count else { return false }
        return der[header..<(header + signedDataOID.count)].elementsEqual(signedDataOID)
    }

    /// The bundle's certificates, leaf first when they form one chain (the encoding keeps no
    /// order: a SET OF may be sorted), otherwise as encoded.
    /// - Parameters:
    ///   - maximumCount: The most certificates a bundle may hold.
    ///   - maximumChainLength: The longest bundle put in chain order (``chainOrder(_:maximumChainLength:)``).
    /// - Throws: ``OpenSSLFailure``: not a SignedData, bytes after it, no certificate, too many.
    package static func certificates(_ der: [UInt8], position: String, maximumCount: Int, maximumChainLength: Int) throws(OpenSSLFailure)
        -> [X509Handle]
    {
        // Counted before anything is decoded: a bundle over the limit is refused at once, not
        // after OpenSSL has parsed ten thousand certificates.
        if let count = certificateCount(der), count > maximumCount {
            throw OpenSSLFailure(.tooLarge, "\(position) holds \(count) certificates; a bundle may hold at most \(maximumCount)")
        }
        OpenSSLErrorStack.clear()
        defer { OpenSSLErrorStack.clear() }
        let (parsed, consumed) = DERDecoding.decode(der) { d2i_PKCS7(nil, $0, $1) }
        guard let parsed else {
            throw OpenSSLFailure(.malformedDER, "\(position) is not a PKCS #7 bundle: \(OpenSSLErrorStack.drainedText())")
        }
        defer { PKCS7_free(parsed) }
        guard consumed == der.count else {
            throw OpenSSLFailure(.malformedDER, "\(position) has \(der.count - consumed) bytes after the end of the PKCS #7 bundle")
        }
        // PKCS7_type_is_signed is a macro: the content type's NID, read here.
        guard OBJ_obj2nid(parsed.pointee.type) == NID_pkcs7_signed, let signed = parsed.pointee.d.sign,
            let stack = signed.pointee.cert, shim_sk_X509_num(stack) > 0
        else {
            throw OpenSSLFailure(.emptyInput, "\(position) is a PKCS #7 bundle with no certificate in it")
        }
        let count = Int(shim_sk_X509_num(stack))
        guard count <= maximumCount else {
            throw OpenSSLFailure(.tooLarge, "\(position) holds \(count) certificates; a bundle may hold at most \(maximumCount)")
        }
        var certificates: [X509Handle] = []
        for index in 0..<count {
            // A new reference each: the bundle's own goes with PKCS7_free.
            guard let x509 = shim_sk_X509_value(stack, Int32(index)), let handle = X509Handle(borrowing: x509) else {
                throw OpenSSLFailure(.malformedDER, "certificate #\(index + 1) of \(position) cannot be re-encoded")
            }
            certificates.append(handle)
        }
        return chainOrder(certificates, maximumChainLength: maximumChainLength)
    }

    /// A degenerate SignedData (certificates only, no signer, as `openssl crl2pkcs7 -nocrl`
    /// writes) holding `certificates` (DER) in order: what the tests and the benchmark load.
    package static func encode(certificates: [[UInt8]]) -> [UInt8] {
        func length(_ count: Int) -> [UInt8] {
            if count < 0x80 { return [UInt8(count)] }
            var bytes: [UInt8] = []
            var rest = count
            while rest > 0 { bytes.insert(UInt8(rest & 0xFF), at: 0); rest >>= 8 }
            return [0x80 | UInt8(bytes.count)] + bytes
        }
        func element(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] { [tag] + length(contents.count) + contents }
        let data = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01] as [UInt8]
        let signed = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02] as [UInt8]
        let body = element(
            0x30,
            element(0x02, [1]) + element(0x31, []) + element(0x30, element(0x06, data))
                + element(0xA0, Array(certificates.joined())) + element(0x31, []))
        return element(0x30, element(0x06, signed) + element(0xA0, body))
    }

    /// How many certificates a PKCS #7 SignedData's `certificates` field holds, read from the DER
    /// framing alone (ContentInfo → [0] → SignedData → version, digestAlgorithms, contentInfo,
    /// [0] certificates); nil when the bytes are not framed that way (the decoder then says why).
    static func certificateCount(_ der: [UInt8]) -> Int? {
        /// The tag, and the range of the contents, of the element at `index` within `end`.
        func element(at index: Int, end: Int) -> (tag: UInt8, contents: Range<Int>)? {
            guard index + 2 <= end else { return nil }
            let tag = der[index]
            var length = Int(der[index + 1])
            var start = index + 2
            if length & 0x80 != 0 {
                let octets = length & 0x7F
                guard (1...4).contains(octets), start + octets <= end else { return nil }
                length = 0
                for offset in 0..<octets { length = length << 8 | Int(der[start + offset]) }
                start += octets
            }
            guard start + length <= end else { return nil }
            return (tag, start..<(start + length))
        }
        guard let contentInfo = element(at: 0, end: der.count), contentInfo.tag == 0x30,
            let type = element(at: contentInfo.contents.lowerBound, end: contentInfo.contents.upperBound), type.tag == 0x06,
            let explicit = element(at: type.contents.upperBound, end: contentInfo.contents.upperBound), explicit.tag == 0xA0,
            let signedData = element(at: explicit.contents.lowerBound, end: explicit.contents.upperBound), signedData.tag == 0x30
        else { return nil }
        var index = signedData.contents.lowerBound
        let end = signedData.contents.upperBound
        for expected: UInt8 in [0x02, 0x31, 0x30] {
            guard let field = element(at: index, end: end), field.tag == expected else { return nil }
            index = field.contents.upperBound
        }
        guard let certificates = element(at: index, end: end), certificates.tag == 0xA0 else { return nil }
        var count = 0
        var position = certificates.contents.lowerBound
        while position < certificates.contents.upperBound {
            guard let certificate = element(at: position, end: certificates.contents.upperBound) else { return nil }
            count += 1
            position = certificate.contents.upperBound
        }
        return count
    }

    /// Leaf first, each next certificate the issuer of the one before (`X509_check_issued`: name
    /// and key identifiers), when exactly one certificate issues none of the others and the
    /// links reach every certificate; otherwise unchanged. Nothing is verified here. A bundle
    /// longer than a server may serve is a set of anchors, whose order does not matter: it is not
    /// compared pair by pair (4,096 certificates would be 16 million comparisons).
    static func chainOrder(_ certificates: [X509Handle], maximumChainLength: Int) -> [X509Handle] {
        guard (2...max(2, maximumChainLength)).contains(certificates.count) else { return certificates }
        func issued(by issuer: X509Handle, _ subject: X509Handle) -> Bool {
            issuer !== subject && issuer.der != subject.der && issuer.mayHaveIssued(subject)
        }
        let leaves = certificates.filter { candidate in !certificates.contains { issued(by: candidate, $0) } }
        guard leaves.count == 1 else { return certificates }
        var ordered = leaves
        var rest = certificates.filter { $0 !== leaves[0] && $0.der != leaves[0].der }
        while let last = ordered.last, let next = rest.firstIndex(where: { issued(by: $0, last) }) {
            ordered.append(rest.remove(at: next))
        }
        return rest.isEmpty ? ordered : certificates
    }
}
