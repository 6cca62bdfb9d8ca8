import Foundation
import TrustEvaluatorCore
import TrustEvaluatorFormats

/// A small PKI embedded in the tests for scenarios `Certificates/` does not cover: a partial
/// wildcard name, and a non-CA certificate *without* keyUsage used as an issuer (the classic
/// basicConstraints attack; `rsa-nonca-intermediate` has a keyUsage without keyCertSign, which
/// OpenSSL rejects for a different reason).
///
/// It is self-contained (its own root), so regenerating `Certificates/` with new random keys does
/// not break it, and valid 2020-01-01 to 2100-01-01, so it never silently expires. Made with the
/// OpenSSL 3.0 CLI by this script (run in an empty directory, then paste the PEM files below):
///
/// ```sh

/// #!/usr/bin/env bash
/// # Extra PKI for the engine tests (independent of Certificates/, so regenerating that does not break it).
/// set -euo pipefail
/// mkdir -p newcerts; : > index.txt
/// cat > ca.cnf <<CNF
/// [ ca ]
/// default_ca = x
/// [ x ]
/// database = index.txt
/// new_certs_dir = newcerts
/// rand_serial = yes
/// unique_subject = no
/// copy_extensions = none
/// default_md = sha256
/// policy = p
/// [ p ]
/// commonName = supplied
/// organizationName = optional
/// CNF
/// leafext='basicConstraints=CA:FALSE
/// keyUsage=critical,digitalSignature
/// extendedKeyUsage=serverAuth
/// subjectKeyIdentifier=hash
/// authorityKeyIdentifier=keyid'
/// issue() { # name issuer cn exts
///   openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1.key
///   openssl req -new -key $1.key -subj "/O=Pincheck Tests/CN=$3" -out $1.csr
///   printf '[ v3 ]\n%s\n' "$4" > $1.ext
///   if [[ $2 == self ]]; then s=(-selfsign -keyfile $1.key); else s=(-cert $2.pem -keyfile $2.key); fi
///   openssl ca -batch -notext -preserveDN -config ca.cnf "${s[@]}" -startdate 20200101000000Z -enddate 21000101000000Z \
///     -extfile $1.ext -extensions v3 -in $1.csr -out $1.pem 2>/dev/null
/// }
/// issue extra-root self "Pincheck Extra Root CA" 'basicConstraints=critical,CA:TRUE
/// keyUsage=critical,keyCertSign,cRLSign
/// subjectKeyIdentifier=hash
/// authorityKeyIdentifier=keyid'
/// issue extra-leaf extra-root www.example.test "$leafext
/// subjectAltName=DNS:www.example.test"
/// issue extra-partial-wildcard extra-root exact.example.test "$leafext
/// subjectAltName=DNS:exact.example.test,DNS:w*.example.test"
/// issue extra-nonca-no-keyusage extra-root attacker.example.test 'basicConstraints=CA:FALSE
/// extendedKeyUsage=serverAuth
/// subjectKeyIdentifier=hash
/// authorityKeyIdentifier=keyid
/// subjectAltName=DNS:attacker.example.test'
/// issue extra-nonca-victim extra-nonca-no-keyusage www.example.test "$leafext
/// subjectAltName=DNS:www.example.test"
/// ```
package enum EmbeddedPKI {
    /// Self-signed P-256 CA, `CN=Pincheck Extra Root CA`.
    package static let root = certificate("""
        -----BEGIN CERTIFICATE-----
        MIIBuTCCAWCgAwIBAgIUCY+4TpYsFq6dxg1v5CqbuHHyKgUwCgYIKoZIzj0EAwIw
        OjEXMBUGA1UECgwOUGluY2hlY2sgVGVzdHMxHzAdBgNVBAMMFlBpbmNoZWNrIEV4
        dHJhIFJvb3QgQ0EwIBcNMjAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBaMDox
        FzAVBgNVBAoMDlBpbmNoZWNrIFRlc3RzMR8wHQYDVQQDDBZQaW5jaGVjayBFeHRy
        YSBSb290IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE1lQ59ITpUcmVwgyG
        i8CUe583iQKGNCqLaYP2EB8VqEfJRKnBdqgDAYERUaqVdL9WLVkYmrbYtSiV6YUx
        E5dxraNCMEAwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwHQYDVR0O
        BBYEFBjx3FHL04hj5OhVH6uEsv0FY+WzMAoGCCqGSM49BAMCA0cAMEQCIH2RdN0k
        dGniXD7chuvqrq7k4q0NsvbKKHfrwFXCMF/eAiBuWtNsbwvgItcYviS2pPij1NwW
        Bm1TSa1Tbi2qm3PmUw==
        -----END CERTIFICATE-----
        """)

    /// A normal leaf for `www.example.test` issued by ``root``: the positive control that proves the embedded signatures verify.
    package static let leaf = certificate("""
        -----BEGIN CERTIFICATE-----
        MIICBDCCAamgAwIBAgIUEw7TruUh83CPHj36gKeUExuhULAwCgYIKoZIzj0EAwIw
        OjEXMBUGA1UECgwOUGluY2hlY2sgVGVzdHMxHzAdBgNVBAMMFlBpbmNoZWNrIEV4
        dHJhIFJvb3QgQ0EwIBcNMjAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBaMDQx
        FzAVBgNVBAoMDlBpbmNoZWNrIFRlc3RzMRkwFwYDVQQDDBB3d3cuZXhhbXBsZS50
        ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/c0FrMEAu1uiaz7l2/oFm8YW
        GkcrfnejNhwXxeRPAKmJerwacuDWUVXoDnkH6uzIVQ502kyYojs068FHz1BpMKOB
        kDCBjTAJBgNVHRMEAjAAMA4GA1UdDwEB/wQEAwIHgDATBgNVHSUEDDAKBggrBgEF
        BQcDATAdBgNVHQ4EFgQUzcFOOHayJdRVVwBOqIThz4npy3YwHwYDVR0jBBgwFoAU
        GPHcUcvTiGPk6FUfq4Sy/QVj5bMwGwYDVR0RBBQwEoIQd3d3LmV4YW1wbGUudGVz
        dDAKBggqhkjOPQQDAgNJADBGAiEA4bQtgpTuQa0GK3/ZcflciIr3BUViRdq+oSyX
        EShluMcCIQCQ0Tt//Ys5RRHJe+pEam+EYi9vVF3h5tBXijNvra+0qA==
        -----END CERTIFICATE-----
        """)

    /// A leaf issued by ``root`` with SANs `exact.example.test` and the partial wildcard `w*.example.test` (OpenSSL's CLI accepts `wxyz.example.test` for it by default).
    package static let partialWildcardLeaf = certificate("""
        -----BEGIN CERTIFICATE-----
        MIICFzCCAb6gAwIBAgIUNoneuYSwDkYxZrhsQsVH+MRpABowCgYIKoZIzj0EAwIw
        OjEXMBUGA1UECgwOUGluY2hlY2sgVGVzdHMxHzAdBgNVBAMMFlBpbmNoZWNrIEV4
        dHJhIFJvb3QgQ0EwIBcNMjAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBaMDYx
        FzAVBgNVBAoMDlBpbmNoZWNrIFRlc3RzMRswGQYDVQQDDBJleGFjdC5leGFtcGxl
        LnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQsAAEdWMw7DQk7OxjkPO5z
        44ly6osNietDuOjzI/D1D1HAF9l8Fcj++2IFYXByPtjqhJQGRuqLq8hbX4rIOOJF
        o4GjMIGgMAkGA1UdEwQCMAAwDgYDVR0PAQH/BAQDAgeAMBMGA1UdJQQMMAoGCCsG
        AQUFBwMBMB0GA1UdDgQWBBS8W2K4kwMakcgt+QYVcjOhrkbZSzAfBgNVHSMEGDAW
        gBQY8dxRy9OIY+ToVR+rhLL9BWPlszAuBgNVHREEJzAlghJleGFjdC5leGFtcGxl
        LnRlc3SCD3cqLmV4YW1wbGUudGVzdDAKBggqhkjOPQQDAgNHADBEAiAKPTFz4aUn
        /FWkBqdg/AhFCSKEsxuJq+eHryKoZS/9BAIgURu2n0xdYKUgmj5snEw3UEe9K9Xx
        Q8baef0Bmg2o3tQ=
        -----END CERTIFICATE-----
        """)

    /// An ordinary end-entity certificate (`CA:FALSE`, serverAuth, SAN `attacker.example.test`) issued by ``root`` *without* a keyUsage extension: what an attacker can buy. Nothing in it forbids signing by key usage; only basicConstraints says it is not a CA.
    package static let nonCAWithoutKeyUsage = certificate("""
        -----BEGIN CERTIFICATE-----
        MIIB/TCCAaOgAwIBAgIUOdXZhoRtgZ8mNwKgC0mRD6rrw90wCgYIKoZIzj0EAwIw
        OjEXMBUGA1UECgwOUGluY2hlY2sgVGVzdHMxHzAdBgNVBAMMFlBpbmNoZWNrIEV4
        dHJhIFJvb3QgQ0EwIBcNMjAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBaMDkx
        FzAVBgNVBAoMDlBpbmNoZWNrIFRlc3RzMR4wHAYDVQQDDBVhdHRhY2tlci5leGFt
        cGxlLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARBBS2rCIRWoWlLklGX
        kRhCiIcCINF1iWJjXtLAjTPBOIvWgHyJRy+8FuKY+qRR3srwArt8FCCnZUGdSQ85
        E6GNo4GFMIGCMAkGA1UdEwQCMAAwEwYDVR0lBAwwCgYIKwYBBQUHAwEwHQYDVR0O
        BBYEFOcjZ76Un1s1K/Drt2Rt5m5oEtnBMB8GA1UdIwQYMBaAFBjx3FHL04hj5OhV
        H6uEsv0FY+WzMCAGA1UdEQQZMBeCFWF0dGFja2VyLmV4YW1wbGUudGVzdDAKBggq
        hkjOPQQDAgNIADBFAiEAobqamEnoUdIO7Z1BMjiJoIREjHF0NsaDBZLA+/zAn1wC
        IDnBdAkINOoq1XZ7N2Oy/ptYCM8tw8WjumozHQV9ENm9
        -----END CERTIFICATE-----
        """)

    /// A leaf for `www.example.test` signed with the key of ``nonCAWithoutKeyUsage`` (the 2002 basicConstraints attack).
    package static let issuedByNonCA = certificate("""
        -----BEGIN CERTIFICATE-----
        MIICATCCAaigAwIBAgIUO4dt1jiNDHSu5MkL/7dHAKEc3MQwCgYIKoZIzj0EAwIw
        OTEXMBUGA1UECgwOUGluY2hlY2sgVGVzdHMxHjAcBgNVBAMMFWF0dGFja2VyLmV4
        YW1wbGUudGVzdDAgFw0yMDAxMDEwMDAwMDBaGA8yMTAwMDEwMTAwMDAwMFowNDEX
        MBUGA1UECgwOUGluY2hlY2sgVGVzdHMxGTAXBgNVBAMMEHd3dy5leGFtcGxlLnRl
        c3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQuwOfPb/Lms7xSiSgu0VNIhtwi
        paCNRiaWcGtYPMaqvWrr0ajLJo6OiK+VGEJqtNQ9LFjQ/4VqIgYBJMtNl6NVo4GQ
        MIGNMAkGA1UdEwQCMAAwDgYDVR0PAQH/BAQDAgeAMBMGA1UdJQQMMAoGCCsGAQUF
        BwMBMB0GA1UdDgQWBBTWTTXJZuAymMqRy8n5IwiI+HV/XTAfBgNVHSMEGDAWgBTn
        I2e+lJ9bNSvw67dkbeZuaBLZwTAbBgNVHREEFDASghB3d3cuZXhhbXBsZS50ZXN0
        MAoGCCqGSM49BAMCA0cAMEQCIFB/VVfp7lJjp1RQlMsv4843EtJWXoOFkfQbxxuv
        rX9qAiB5HI4cM9KqQG3ufQzi/W/WmS5iVdxKPsqGPcu94AqWOA==
        -----END CERTIFICATE-----
        """)

    /// ``root`` alone: the anchors of every embedded scenario.
    package static let anchors = try! TrustAnchors(certificates: [root])

    private static func certificate(_ pem: String) -> Certificate {
        try! Certificate(pemEncoded: pem, source: "EmbeddedPKI")
    }
}
