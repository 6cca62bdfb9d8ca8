#!/usr/bin/env bash
# Signed Certificate Timestamp fixtures from the test PKI (Certificates/ and its keys), with the
# openssl CLI and coreutils, into Certificates/sct/:
#   two test CT logs (an ECDSA P-256 and an RSA-2048 key; log ID = SHA-256 of the public key),
#   serverinfo-tls.pem      an SCT list for rsa-leaf as a TLS extension (openssl s_server -serverinfo),
#                           sent in the ServerHello (TLS 1.2) and in the leaf's CertificateEntry (TLS 1.3),
#   serverinfo-malformed.pem a signed_certificate_timestamp extension whose SCT list does not parse,
#   rsa-embedded-sct.pem    a leaf for www.example.test with an SCT list in the certificate
#                           (1.3.6.1.4.1.11129.2.4.2), issued by rsa-intermediate,
#   log-ids.txt             NAME base64-log-ID, read by the tests,
#   ct-logs.cnf             the two logs for `openssl s_client -ct -ctlogfile`.
# The SCTs are real RFC 6962 v1 SCTs with fixed timestamps (never "now"), signed by the test logs
# over the leaf (x509_entry) or the precertificate TBS (precert_entry), so s_client can validate them:
#   openssl s_server -accept 127.0.0.1:4433 -cert Certificates/sct/rsa-embedded-sct.pem \
#     -key Certificates/sct/rsa-embedded-sct.key -cert_chain Certificates/rsa-intermediate.pem \
#     -serverinfo Certificates/sct/serverinfo-tls.pem -www
#   openssl s_client -connect 127.0.0.1:4433 -ct -ctlogfile Certificates/sct/ct-logs.cnf \
#     -CAfile Certificates/rsa-root.pem </dev/null | grep 'SCT validation status'
# (the TLS-extension SCT is over rsa-leaf, so with rsa-embedded-sct it shows as invalid; serve
# rsa-leaf to see it valid). Pincheck captures SCTs and does not verify them.
# Run by make-certificates.sh; re-runnable. Keys are random, so every run changes the log IDs.
set -euo pipefail
cd "$(dirname "$0")/.."
C=Certificates; OUT=$C/sct; K=$C/keys
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"; mkdir -p "$OUT"

# Fixed SCT times (milliseconds since 1970): the tests compare them exactly.
TLS_SCT_TIME=1709294400123        # 2024-03-01T12:00:00.123Z
EMBEDDED_SCT_TIME=1704067200456   # 2024-01-01T00:00:00.456Z

hex() { od -An -v -tx1 | tr -d ' \n'; }                         # stdin bytes -> hex
unhex() { printf '%b' "$(sed 's/../\\x&/g')"; }                   # stdin hex -> bytes
prefixed() { printf "%0$(($1 * 2))x%s" $((${#2} / 2)) "$2"; }    # N-byte length, then the hex

# Two test logs: NAME KEYSPEC. A log's ID is the SHA-256 of its DER SubjectPublicKeyInfo (RFC 6962 §3.2).
declare -A LOG_ID
: > "$OUT/log-ids.txt"
printf 'enabled_logs = log-ec,log-rsa\n' > "$OUT/ct-logs.cnf"
for log in log-ec log-rsa; do
  case $log in
    log-ec)  openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$OUT/$log.key" ;;
    log-rsa) openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$OUT/$log.key" ;;
  esac
  openssl pkey -in "$OUT/$log.key" -pubout -outform der -out "$TMP/$log.spki"
  LOG_ID[$log]=$(openssl dgst -sha256 -binary "$TMP/$log.spki" | hex)
  echo "$log $(openssl dgst -sha256 -binary "$TMP/$log.spki" | base64 -w0)" >> "$OUT/log-ids.txt"
  printf '\n[%s]\ndescription = Pincheck test log %s\nkey = %s\n' "$log" "$log" "$(base64 -w0 < "$TMP/$log.spki")" >> "$OUT/ct-logs.cnf"
done

# sct LOG TIME ENTRY_TYPE SIGNED_ENTRY_HEX -> one v1 SCT, hex. ENTRY_TYPE 0 = x509_entry, 1 = precert_entry.
# The signature covers version, signature_type (certificate_timestamp), timestamp, entry type,
# the entry and the (empty) extensions (RFC 6962 §3.2).
sct() {
  local log=$1 time=$2 type=$3 entry=$4 sigalg
  printf '0000%016x%04x%s0000' "$time" "$type" "$entry" | unhex > "$TMP/signed.bin"
  openssl dgst -sha256 -sign "$OUT/$log.key" -out "$TMP/signature.bin" "$TMP/signed.bin"
  case $log in log-ec) sigalg=03 ;; log-rsa) sigalg=01 ;; esac   # SignatureAlgorithm: ecdsa(3), rsa(1)
  # version v1(0), log ID, timestamp, no extensions, digitally-signed: sha256(4), algorithm, signature
  printf '00%s%016x0000' "${LOG_ID[$log]}" "$time"
  printf '04%s' "$sigalg"; prefixed 2 "$(hex < "$TMP/signature.bin")"
}

# sct_list SCT_HEX… -> SignedCertificateTimestampList: a 2-byte length, then each SCT with its 2-byte length.
sct_list() {
  local body=""
  for one in "$@"; do body+=$(prefixed 2 "$one"); done
  prefixed 2 "$body"
}

der() { openssl x509 -in "$1" -outform der | hex; }

# serverinfo V2 PEM: context (4 bytes), extension type 18 (signed_certificate_timestamp), length, data.
# Context: ClientHello | TLS 1.2 ServerHello | TLS 1.3 Certificate | ignore on resumption.
serverinfo() { # FILE DATA_HEX
  { echo "-----BEGIN SERVERINFOV2 FOR SIGNED CERTIFICATE TIMESTAMPS-----"
    printf '000011c00012%s' "$(prefixed 2 "$2")" | unhex | base64 -w64
    echo "-----END SERVERINFOV2 FOR SIGNED CERTIFICATE TIMESTAMPS-----"; } > "$1"
}

# The TLS extension: one SCT from log-ec over rsa-leaf as it is (x509_entry: a 3-byte length, then the DER).
tls_sct=$(sct log-ec "$TLS_SCT_TIME" 0 "$(prefixed 3 "$(der $C/rsa-leaf.pem)")")
serverinfo "$OUT/serverinfo-tls.pem" "$(sct_list "$tls_sct")"
# The list claims 0x0040 bytes and holds 3: OpenSSL's SCT list parser refuses it.
serverinfo "$OUT/serverinfo-malformed.pem" "0040000100"

# A leaf with an embedded SCT list. The SCT signs the precertificate: the final TBSCertificate without
# the SCT extension, with the SHA-256 of the issuer's public key (RFC 6962 §3.2). `openssl ca` with a
# fixed serial and dates issues the same TBS twice, once without and once with the extension (last).
openssl req -new -newkey rsa:2048 -nodes -keyout "$OUT/rsa-embedded-sct.key" -subj "/O=Pincheck Tests/CN=www.example.test" \
  -out "$TMP/leaf.csr" 2>/dev/null
extensions="basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = DNS:www.example.test,DNS:example.test"
issue_leaf() { # OUT EXTENSIONS
  local db=$TMP/ca-$RANDOM; mkdir -p "$db"; : > "$db/index.txt"; echo 5C7E5C7E01 > "$db/serial"
  cat > "$db/ca.cnf" <<CNF
[ ca ]
default_ca = x
[ x ]
database = $db/index.txt
new_certs_dir = $db
serial = $db/serial
unique_subject = no
copy_extensions = none
default_md = sha256
policy = any
[ any ]
commonName = supplied
organizationName = optional
CNF
  printf '[ v3 ]\n%s\n' "$2" > "$db/ext.cnf"
  openssl ca -batch -notext -preserveDN -config "$db/ca.cnf" -cert $C/rsa-intermediate.pem -keyfile $K/rsa-intermediate.key \
    -startdate 20240101000000Z -enddate 20991231235959Z -extfile "$db/ext.cnf" -extensions v3 \
    -in "$TMP/leaf.csr" -out "$1" 2>"$db/log" || { cat "$db/log" >&2; exit 1; }
}
issue_leaf "$TMP/precert.pem" "$extensions"
openssl x509 -in "$TMP/precert.pem" -outform der -out "$TMP/precert.der"
# The TBSCertificate is the first element of the Certificate SEQUENCE (offset 4: a 4-byte header).
read -r tbs_header tbs_length < <(openssl asn1parse -inform der -in "$TMP/precert.der" | sed -n '2s/^ *4:d=1 *hl= *\([0-9]*\) *l= *\([0-9]*\).*/\1 \2/p')
tbs=$(tail -c +5 "$TMP/precert.der" | head -c $((tbs_header + tbs_length)) | hex)
issuer_key_hash=$(openssl x509 -in $C/rsa-intermediate.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | hex)
embedded_sct=$(sct log-rsa "$EMBEDDED_SCT_TIME" 1 "$issuer_key_hash$(prefixed 3 "$tbs")")
# The extension's value is an OCTET STRING holding the SCT list (RFC 6962 §3.3).
list=$(sct_list "$embedded_sct")
octets=$(printf '%04x' $((${#list} / 2)))
issue_leaf "$OUT/rsa-embedded-sct.pem" "$extensions
1.3.6.1.4.1.11129.2.4.2 = DER:0482$octets$list"
cat "$OUT/rsa-embedded-sct.pem" $C/rsa-intermediate.pem > "$OUT/embedded-sct-chain.pem"

# The embedded list must read back as one SCT from log-rsa.
openssl x509 -in "$OUT/rsa-embedded-sct.pem" -noout -text | grep -q "CT Precertificate SCTs" \
  || { echo "rsa-embedded-sct.pem: openssl does not see the SCT list" >&2; exit 1; }
echo "Generated SCT fixtures in $OUT"
