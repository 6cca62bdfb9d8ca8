#!/usr/bin/env bash
# make-certificates.sh — regenerate the Pincheck test PKI in Certificates/.
#
# Uses only the `openssl` CLI. All validity dates are explicit (never relative
# to "today"); tests verify at the fixed time 2030-06-01T00:00:00Z
# (Unix 1906502400). Re-runnable: wipes Certificates/ except README.md.
# Keys and serial numbers are random, so every run yields new pins.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT_DIR/Certificates"
KEYS="$OUT/keys"
CHAINS="$OUT/chains"
BAD="$OUT/malformed"

CA_START=20200101000000Z;   CA_END=21000101000000Z     # roots + intermediates
LEAF_START=20240101000000Z; LEAF_END=20991231235959Z   # leaves
ORG="Pincheck Tests"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# ---------------------------------------------------------------- setup ----
mkdir -p "$OUT"
# private-pki/ is made by the tools themselves (scripts/make-private-pki-corpus.sh), and pq/ by
# OpenSSL 3.5 in a Debian 13 root (scripts/make-pq-fixtures.sh), once: both kept.
find "$OUT" -mindepth 1 -maxdepth 1 ! -name README.md ! -name private-pki ! -name pq -exec rm -rf {} +
mkdir -p "$KEYS" "$CHAINS" "$BAD" "$TMP/newcerts"
: > "$TMP/index.txt"

# Minimal `openssl ca` configuration: random serials, any DN, no copied exts.
cat > "$TMP/ca.cnf" <<CNF
[ ca ]
default_ca = pincheck
[ pincheck ]
database        = $TMP/index.txt
new_certs_dir   = $TMP/newcerts
rand_serial     = yes
unique_subject  = no
email_in_dn     = no
copy_extensions = none
default_md      = sha256
policy          = policy_any
[ policy_any ]
commonName       = supplied
organizationName = optional
CNF

declare -A MD   # signing digest per issuer (default sha256)

# genkey NAME SPEC — SPEC is rsa:BITS, ec:CURVE, ed25519 or ed448.
genkey() {
  local gen=(openssl genpkey -quiet -out "$KEYS/$1.key")   # PKCS#8 PEM, unencrypted
  case "$2" in
    rsa:*)   "${gen[@]}" -algorithm RSA -pkeyopt "rsa_keygen_bits:${2#rsa:}" ;;
    ec:*)    "${gen[@]}" -algorithm EC -pkeyopt "ec_paramgen_curve:${2#ec:}" \
                         -pkeyopt ec_param_enc:named_curve ;;
    ed25519) "${gen[@]}" -algorithm ED25519 ;;
    ed448)   "${gen[@]}" -algorithm ED448 ;;
    *)       echo "unknown key spec $2" >&2; exit 1 ;;
  esac
}

# issue NAME ISSUER CN START END EXTENSIONS — ISSUER "self" = self-signed.
# EXTENSIONS is the body of an x509v3 extension section.
issue() {
  local name=$1 issuer=$2 cn=$3 start=$4 end=$5 exts=$6
  local md=${MD[$issuer]:-sha256}
  printf '[ v3 ]\n%s\n' "$exts" > "$TMP/$name.ext"
  openssl req -new -key "$KEYS/$name.key" -subj "/O=$ORG/CN=$cn" -out "$TMP/$name.csr"
  local signer=(-cert "$OUT/$issuer.pem" -keyfile "$KEYS/$issuer.key")
  if [[ $issuer == self ]]; then
    signer=(-selfsign -keyfile "$KEYS/$name.key"); md=${MD[$name]:-sha256}
  fi
  openssl ca -batch -notext -preserveDN -config "$TMP/ca.cnf" "${signer[@]}" -md "$md" \
    -startdate "$start" -enddate "$end" -extfile "$TMP/$name.ext" -extensions v3 \
    -in "$TMP/$name.csr" -out "$OUT/$name.pem" 2>"$TMP/$name.log" \
    || { cat "$TMP/$name.log" >&2; exit 1; }
}

# make_ca NAME ISSUER KEYSPEC CN [BASIC_CONSTRAINTS_SUFFIX e.g. ",pathlen:0"] [EXTRA_EXT_LINES]
make_ca() {
  genkey "$1" "$3"
  issue "$1" "$2" "$4" "$CA_START" "$CA_END" "basicConstraints = critical,CA:TRUE${5:-}
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
${6:-}"
}

# make_leaf NAME ISSUER KEYSPEC SAN — CN is the first DNS name in SAN.
# Optional environment overrides: START, END, EKU, NOSAN=1 (omit SAN; then CN
# is taken from CN=...).
make_leaf() {
  local name=$1 issuer=$2 spec=$3 san=$4 ku=digitalSignature
  [[ $spec == rsa:* ]] && ku="digitalSignature,keyEncipherment"
  local cn=${CN:-$(tr ',' '\n' <<<"$san" | sed -n 's/^ *DNS://p' | head -n1)}
  local san_line="subjectAltName = $san"
  [[ -n ${NOSAN:-} ]] && san_line=""
  genkey "$name" "$spec"
  issue "$name" "$issuer" "$cn" "${START:-$LEAF_START}" "${END:-$LEAF_END}" \
"basicConstraints = CA:FALSE
keyUsage = critical,$ku
extendedKeyUsage = ${EKU:-serverAuth}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
$san_line"
}

WWW="DNS:www.example.test"

# ------------------------------------------------------- RSA hierarchy ----
make_ca rsa-root         self     rsa:4096 "Pincheck Test RSA Root CA"
make_ca rsa-intermediate rsa-root rsa:2048 "Pincheck Test RSA Intermediate CA" ",pathlen:0"

make_leaf rsa-leaf         rsa-intermediate rsa:2048 "$WWW,DNS:example.test"
make_leaf rsa-leaf-rotated rsa-intermediate rsa:2048 "$WWW,DNS:example.test"
START=20200101000000Z END=20210101000000Z make_leaf rsa-expired rsa-intermediate rsa:2048 "$WWW"
START=20900101000000Z END=20910101000000Z make_leaf rsa-not-yet-valid rsa-intermediate rsa:2048 "$WWW"
make_leaf rsa-wrong-host   rsa-intermediate rsa:2048 "DNS:other.example.test"
make_leaf rsa-wildcard     rsa-intermediate rsa:2048 "DNS:*.example.test"
make_leaf rsa-ip           rsa-intermediate rsa:2048 "IP:127.0.0.1,IP:::1,DNS:localhost"
CN=www.example.test NOSAN=1 make_leaf rsa-cn-only rsa-intermediate rsa:2048 ""
EKU=clientAuth make_leaf rsa-client-only rsa-intermediate rsa:2048 "$WWW"
make_leaf rsa-4096-leaf    rsa-intermediate rsa:4096 "$WWW"
make_leaf rsa-3072-leaf    rsa-intermediate rsa:3072 "$WWW"

# pathLen violation: a CA below rsa-intermediate (pathlen:0).
make_ca   rsa-sub-intermediate rsa-intermediate rsa:2048 "Pincheck Test RSA Sub-Intermediate CA"
make_leaf rsa-pathlen-leaf     rsa-sub-intermediate rsa:2048 "$WWW"

# An end-entity certificate (CA:FALSE, no keyCertSign, no SAN) used as an issuer.
CN="Pincheck Test Not-A-CA" NOSAN=1 make_leaf rsa-nonca-intermediate rsa-root rsa:2048 ""
make_leaf rsa-nonca-leaf rsa-nonca-intermediate rsa:2048 "$WWW"

# Valid 4-deep chain: root -> deep-1 -> deep-2 -> leaf.
make_ca   rsa-deep-intermediate-1 rsa-root rsa:2048 "Pincheck Test RSA Deep Intermediate CA 1"
make_ca   rsa-deep-intermediate-2 rsa-deep-intermediate-1 rsa:2048 "Pincheck Test RSA Deep Intermediate CA 2"
make_leaf rsa-deep-leaf rsa-deep-intermediate-2 rsa:2048 "$WWW"

# Name constraints: only allowed.test (and subdomains) may be issued.
make_ca rsa-nc-intermediate rsa-root rsa:2048 "Pincheck Test RSA Name-Constrained CA" "" \
  "nameConstraints = critical,permitted;DNS:allowed.test"
make_leaf rsa-nc-leaf           rsa-nc-intermediate rsa:2048 "DNS:www.allowed.test"
make_leaf rsa-nc-violating-leaf rsa-nc-intermediate rsa:2048 "$WWW"

# ----------------------------------------------------- ECDSA hierarchy ----
MD[ec-root]=sha384
make_ca ec-root         self    ec:P-384 "Pincheck Test ECDSA Root CA"
make_ca ec-intermediate ec-root ec:P-256 "Pincheck Test ECDSA Intermediate CA" ",pathlen:0"
make_leaf ec-leaf      ec-intermediate ec:P-256 "$WWW,DNS:example.test"
make_leaf ec-p384-leaf ec-intermediate ec:P-384 "$WWW"
make_leaf ec-p521-leaf ec-intermediate ec:P-521 "$WWW"
make_leaf ed25519-leaf ec-intermediate ed25519  "$WWW"
make_leaf ed448-leaf   ec-intermediate ed448    "$WWW"

# -------------------------------------------------- untrusted / attacker ----
make_ca   attacker-root self rsa:2048 "Pincheck Test Attacker Root"
make_leaf attacker-leaf attacker-root rsa:2048 "$WWW"
make_leaf self-signed   self          rsa:2048 "$WWW"

# ------------------------------------------------------- served chains ----
chain() { local out=$1; shift; for c in "$@"; do cat "$OUT/$c.pem"; done > "$CHAINS/$out.pem"; }
chain rsa-good          rsa-leaf rsa-intermediate
chain rsa-rotated       rsa-leaf-rotated rsa-intermediate
for s in expired not-yet-valid wrong-host wildcard ip cn-only client-only; do
  chain "rsa-$s" "rsa-$s" rsa-intermediate
done
chain rsa-leaf-only     rsa-leaf
chain rsa-pathlen       rsa-pathlen-leaf rsa-sub-intermediate rsa-intermediate
chain rsa-nonca         rsa-nonca-leaf rsa-nonca-intermediate
chain rsa-deep          rsa-deep-leaf rsa-deep-intermediate-2 rsa-deep-intermediate-1
chain rsa-nc-good       rsa-nc-leaf rsa-nc-intermediate
chain rsa-nc-violating  rsa-nc-violating-leaf rsa-nc-intermediate
chain ec-good           ec-leaf ec-intermediate
for s in ec-p384 ec-p521 ed25519 ed448; do chain "$s" "$s-leaf" ec-intermediate; done
chain self-signed       self-signed
chain attacker          attacker-leaf attacker-root
chain attacker-with-pinned-ca attacker-leaf rsa-intermediate rsa-root
chain unpinned-ca-with-pinned-appended rsa-leaf rsa-intermediate ec-intermediate
chain with-junk         rsa-leaf attacker-root rsa-intermediate
openssl x509 -in "$OUT/rsa-leaf.pem" -outform der -out "$CHAINS/rsa-good.der"
# PKCS #7 bundles, which Java's CertificateFactory (so an Android @raw resource) reads: DER out of
# chain order, PEM (label PKCS7) in order, and two unrelated roots.
openssl crl2pkcs7 -nocrl -certfile "$OUT/rsa-deep-intermediate-1.pem" -certfile "$OUT/rsa-deep-leaf.pem" \
  -certfile "$OUT/rsa-deep-intermediate-2.pem" -outform DER -out "$CHAINS/rsa-deep-unordered.p7b"
openssl crl2pkcs7 -nocrl -certfile "$CHAINS/rsa-good.pem" -out "$CHAINS/rsa-good-p7.pem"
openssl crl2pkcs7 -nocrl -certfile "$OUT/rsa-root.pem" -certfile "$OUT/ec-root.pem" -outform DER -out "$OUT/roots.p7b"

# ---------------------------------------------------- malformed inputs ----
: > "$BAD/empty.pem"
printf -- '-----BEGIN CERTIFICATE-----\n%s\n%s\n-----END CERTIFICATE-----\n' \
  'MIIB!!this*is*not~base64@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@' \
  '%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%' > "$BAD/garbage.pem"
{ echo '-----BEGIN CERTIFICATE-----'; openssl rand 512 | openssl base64
  echo '-----END CERTIFICATE-----'; } > "$BAD/bad-der-in-pem.pem"
der_size=$(wc -c < "$CHAINS/rsa-good.der")
head -c $((der_size - 100)) "$CHAINS/rsa-good.der" > "$BAD/truncated.der"
head -n -4 "$OUT/rsa-leaf.pem" > "$BAD/truncated.pem"        # END line + 3 base64 lines gone
cp "$KEYS/rsa-leaf.key" "$BAD/private-key.pem"
cat > "$BAD/not-pem.txt" <<'TXT'
This is not a certificate. It is a plain English sentence that a careless
caller might hand to a certificate parser by mistake.
TXT
{ cat "$OUT/rsa-leaf.pem"; echo '-----BEGIN CERTIFICATE-----'
  sed -n '2,4p' "$OUT/rsa-intermediate.pem"                  # first 3 lines only: truncated DER
  echo '-----END CERTIFICATE-----'; } > "$BAD/second-cert-broken.pem"

# ----------------------------------------------- pins and fingerprints ----
: > "$OUT/pins.txt"; : > "$OUT/fingerprints.txt"
for f in "$OUT"/*.pem; do
  n=$(basename "$f" .pem)
  pin=$(openssl x509 -in "$f" -pubkey -noout | openssl pkey -pubin -outform der \
        | openssl dgst -sha256 -binary | base64)
  fp=$(openssl x509 -in "$f" -outform der | openssl dgst -sha256 | sed 's/^.*= //')
  echo "$n sha256/$pin" >> "$OUT/pins.txt"
  echo "$n $fp"         >> "$OUT/fingerprints.txt"
done

echo "Generated test PKI in $OUT"

# The demo embeds some of these certificates; keep its copy in step.
"$(dirname "$0")/embed-demo-certificates.sh"
# Revocation fixtures (must-staple leaf, OCSP responses) are made from the new keys.
"$(dirname "$0")/make-revocation-fixtures.sh"
"$(dirname "$0")/make-crl-fetch-fixtures.sh"
# Signed Certificate Timestamp fixtures (test CT logs, serverinfo files, a leaf with embedded SCTs).
"$(dirname "$0")/make-sct-fixtures.sh"
