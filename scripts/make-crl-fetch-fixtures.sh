#!/usr/bin/env bash
# Fixtures for CRLs fetched from distribution points (Certificates/crl-fetch/), made with
# `openssl ca` from the test PKI's rsa-intermediate. The distribution points are
# http://crl.pincheck.test/…: the tests serve them from a local HTTP server that the fetcher reaches
# as its proxy, so the certificates need no port. CRL dates bracket the tests' fixed time,
# 2030-06-01. Run by make-certificates.sh; re-runnable.
set -euo pipefail
cd "$(dirname "$0")/.."
C=Certificates; K=$C/keys; OUT=$C/crl-fetch; KO=$K/crl-fetch
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT" "$KO"; mkdir -p "$OUT" "$KO"
BASE=http://crl.pincheck.test

# A server leaf for www.example.test issued by rsa-intermediate: name, serial, extra extension lines.
leaf() {
  openssl req -new -newkey rsa:2048 -nodes -keyout "$KO/$1.key" -subj "/O=Pincheck Tests/CN=www.example.test" -out "$TMP/$1.csr" 2>/dev/null
  local san=("subjectAltName = DNS:www.example.test")
  case "${*:3}" in *subjectAltName*) san=() ;; esac  # a leaf naming its own replaces the default
  printf '%s\n' "basicConstraints = CA:FALSE" "keyUsage = critical, digitalSignature, keyEncipherment" \
    "extendedKeyUsage = serverAuth" "subjectKeyIdentifier = hash" "authorityKeyIdentifier = keyid" \
    "${san[@]}" "${@:3}" > "$TMP/$1.ext"
  openssl x509 -req -in "$TMP/$1.csr" -CA $C/rsa-intermediate.pem -CAkey $K/rsa-intermediate.key -set_serial "$2" \
    -days 36500 -sha256 -extfile "$TMP/$1.ext" -out "$OUT/$1.pem" 2>/dev/null
  cat "$OUT/$1.pem" $C/rsa-intermediate.pem > "$OUT/$1-chain.pem"
}
leaf good 0xc1001 "crlDistributionPoints = URI:$BASE/intermediate.crl"
leaf revoked 0xc1002 "crlDistributionPoints = URI:$BASE/intermediate.crl"
leaf shard-1 0xc1003 "crlDistributionPoints = URI:$BASE/shard-1.crl"
leaf shard-2 0xc1004 "crlDistributionPoints = URI:$BASE/shard-2.crl"
leaf two-points 0xc1005 "crlDistributionPoints = URI:$BASE/unreachable.crl, URI:$BASE/intermediate.crl"
# For a road shown the leaf alone (AsyncHTTPClient): the issuer named at a caIssuers URL, and a
# name for 127.0.0.1, where the tests' TLS servers listen.
leaf aia-good 0xc1006 "crlDistributionPoints = URI:$BASE/intermediate.crl" "authorityInfoAccess = caIssuers;URI:$BASE/rsa-intermediate.cer" \
  "subjectAltName = DNS:www.example.test, IP:127.0.0.1"
leaf aia-revoked 0xc1007 "crlDistributionPoints = URI:$BASE/intermediate.crl" "authorityInfoAccess = caIssuers;URI:$BASE/rsa-intermediate.cer" \
  "subjectAltName = DNS:www.example.test, IP:127.0.0.1"
leaf no-aia 0xc1008 "crlDistributionPoints = URI:$BASE/intermediate.crl" "subjectAltName = DNS:www.example.test, IP:127.0.0.1"
for name in stale slow oversize unreachable wrong-signer other-issuer garbage; do
  leaf "$name" "0xc1$(printf '%03x' $((RANDOM % 4000 + 16)))" "crlDistributionPoints = URI:$BASE/$name.crl"
done

serial() { openssl x509 -in "$1" -noout -serial | cut -d= -f2; }
subject() { openssl x509 -in "$1" -noout -subject -nameopt compat | sed 's/^subject=//'; }
exp=991231235959Z
for name in revoked aia-revoked; do
  printf 'R\t%s\t300101000000Z,keyCompromise\t%s\tunknown\t%s\n' $exp "$(serial $OUT/$name.pem)" "$(subject $OUT/$name.pem)"
done > "$TMP/revoked.idx"
: > "$TMP/empty.idx"

# crl NAME ISSUER-CERT ISSUER-KEY INDEX LASTUPDATE NEXTUPDATE [extension lines]
crl() {
  local dir="$TMP/ca-$1"; mkdir -p "$dir"; cp "$4" "$dir/index.txt"; echo "unique_subject = no" > "$dir/index.txt.attr"
  echo 1000 > "$dir/crlnumber"
  { printf '%s\n' "[ ca ]" "default_ca = x" "[ x ]" "database = $dir/index.txt" "crlnumber = $dir/crlnumber" \
      "default_md = sha256" "crl_extensions = ext" "[ ext ]" "authorityKeyIdentifier = keyid" "${@:7}"; } > "$dir/ca.cnf"
  openssl ca -batch -gencrl -config "$dir/ca.cnf" -cert "$2" -keyfile "$3" \
    -crl_lastupdate "$5" -crl_nextupdate "$6" -out "$TMP/$1.pem" 2>/dev/null
  openssl crl -in "$TMP/$1.pem" -outform DER -out "$OUT/$1.crl"
}
I=$C/rsa-intermediate.pem; IK=$K/rsa-intermediate.key
crl intermediate $I $IK "$TMP/revoked.idx" 20300101000000Z 20310101000000Z
crl stale $I $IK "$TMP/empty.idx" 20300101000000Z 20300301000000Z
# A partitioned CRL: shard 1 of the intermediate's certificates (issuingDistributionPoint).
crl shard-1 $I $IK "$TMP/empty.idx" 20300101000000Z 20310101000000Z \
  "issuingDistributionPoint = critical, @idp" "[ idp ]" "fullname = URI:$BASE/shard-1.crl" "onlyuser = TRUE"
# A CRL with the intermediate's name, signed by another key.
openssl req -new -x509 -key $K/attacker-root.key -subj "$(openssl x509 -in $I -noout -subject -nameopt RFC2253 | sed 's/^subject=//' | awk -F, '{for(i=NF;i>0;i--) printf "/%s", $i}')" \
  -days 36500 -out "$TMP/impostor.pem" 2>/dev/null
crl wrong-signer "$TMP/impostor.pem" $K/attacker-root.key "$TMP/empty.idx" 20300101000000Z 20310101000000Z
# Another CA's CRL.
crl other-issuer $C/rsa-root.pem $K/rsa-root.key "$TMP/empty.idx" 20300101000000Z 20310101000000Z
echo "Generated CRL fetch fixtures in $OUT"
