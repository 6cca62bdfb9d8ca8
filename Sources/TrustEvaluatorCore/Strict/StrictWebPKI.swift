/// The strict Web PKI profile: what the CA/Browser Forum baseline requirements (and x509-limbo's
/// `webpki::` cases) demand beyond the RFC 5280 checks OpenSSL makes.
///
/// Each check is one file in this folder; adding one is a file and a line here.
enum StrictWebPKI {
    static func checks(for purpose: ValidationPolicy.Purpose) -> [any PathCheck] {
        let common: [any PathCheck] = [
            PublicKeyAlgorithmCheck(), SignatureAlgorithmCheck(), SerialNumberCheck(), AuthorityKeyIdentifierCheck(),
            ExtensionCriticalityCheck(), NameConstraintsCheck(), EndEntityCheck(),
        ]
        switch purpose {
        case .serverAuthentication:
            return common + [
                SubjectAltNameCheck(), SubjectCommonNameCheck(), ExtendedKeyUsageCheck(), RootExtendedKeyUsageCheck(),
            ]
        case .clientAuthentication:
            return common + [EmailAddressCheck()]
        }
    }
}
