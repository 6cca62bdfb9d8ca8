#!/usr/bin/env bash
# Revocation fixtures from the existing test PKI (Certificates/ and its keys), with the openssl CLI:
# a must-staple leaf, stapled OCSP responses (good, revoked, unknown, stale, wrong signer) and CRLs.
# Responses are made today with long validity (stale: 1 day), so at the tests' fixed time,
# 2030-06-01, "good" is fresh and "stale" is stale. Run by make-certificates.sh; re-runnable.
set -euo pipefail
cd "$(dirname "$0")/.."
C=Certificates; OUT=$C/revocation; K=$C/keys
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"; mkdir -p "$OUT"

serial() { openssl x509 -in "$1" -noout -serial | cut -d= -f2; }
subject() { openssl x509 -in "$1" -noout -subject -nameopt compat | sed 's/^subject=//'; }

# A server leaf for www.example.test: name, issuer, serial, key file, extra extension lines.
leaf() {
  openssl req -new -newkey rsa:2048 -nodes -keyout "$4" -subj "/O=Pincheck Tests/CN=www.example.test" -out "$TMP/$1.csr" 2>/dev/null
  printf '%s\n' "basicConstraints = CA:FALSE" "keyUsage = critical, digitalSignature, keyEncipherment" \
    "extendedKeyUsage = serverAuth" "subjectKeyIdentifier = hash" "authorityKeyIdentifier = keyid" \
    "subjectAltName = DNS:www.example.test" "${@:5}" > "$TMP/$1.ext"
  openssl x509 -req -in "$TMP/$1.csr" -CA $C/$2.pem -CAkey $K/$2.key -set_serial "$3" \
    -days 36500 -sha256 -extfile "$TMP/$1.ext" -out "$OUT/$1.pem" 2>/dev/null
}

# A leaf that requires stapling (TLS feature extension, status_request), issued by rsa-intermediate.
leaf rsa-must-staple rsa-intermediate 0x5ea1ed "$OUT/rsa-must-staple.key" "tlsfeature = status_request"
cat "$OUT/rsa-must-staple.pem" $C/rsa-intermediate.pem > "$OUT/must-staple-chain.pem"

# The CA database the responder answers from: rsa-leaf and the must-staple leaf are valid, the
# revoked index lists rsa-leaf as revoked (keyCompromise).
exp=991231235959Z
printf 'V\t%s\t\t%s\tunknown\t%s\n' $exp "$(serial $C/rsa-leaf.pem)" "$(subject $C/rsa-leaf.pem)" > "$TMP/good.idx"
printf 'V\t%s\t\t%s\tunknown\t%s\n' $exp "$(serial $OUT/rsa-must-staple.pem)" "$(subject $OUT/rsa-must-staple.pem)" >> "$TMP/good.idx"
printf 'R\t%s\t250101000000Z,keyCompromise\t%s\tunknown\t%s\n' $exp "$(serial $C/rsa-leaf.pem)" "$(subject $C/rsa-leaf.pem)" > "$TMP/revoked.idx"
: > "$TMP/empty.idx"
for index in good revoked empty; do echo "unique_subject = no" > "$TMP/$index.idx.attr"; done

respond() { # name index signer-cert signer-key days leaf
  openssl ocsp -issuer $C/rsa-intermediate.pem -cert "$6" -no_nonce -reqout "$TMP/$1.req" 2>/dev/null
  openssl ocsp -index "$2" -rsigner "$3" -rkey "$4" -CA $C/rsa-intermediate.pem -reqin "$TMP/$1.req" \
    -ndays "$5" -respout "$OUT/$1.der" 2>/dev/null
}
respond ocsp-good "$TMP/good.idx" $C/rsa-intermediate.pem $K/rsa-intermediate.key 36500 $C/rsa-leaf.pem
respond ocsp-revoked "$TMP/revoked.idx" $C/rsa-intermediate.pem $K/rsa-intermediate.key 36500 $C/rsa-leaf.pem
respond ocsp-unknown "$TMP/empty.idx" $C/rsa-intermediate.pem $K/rsa-intermediate.key 36500 $C/rsa-leaf.pem
respond ocsp-stale "$TMP/good.idx" $C/rsa-intermediate.pem $K/rsa-intermediate.key 1 $C/rsa-leaf.pem
respond ocsp-wrong-signer "$TMP/good.idx" $C/attacker-root.pem $K/attacker-root.key 36500 $C/rsa-leaf.pem
respond ocsp-must-staple-good "$TMP/good.idx" $C/rsa-intermediate.pem $K/rsa-intermediate.key 36500 $OUT/rsa-must-staple.pem

# CRLs (valid for a century; with cRLNumber and AKI as RFC 5280 requires): each issuer once listing
# a certificate it issued as revoked, once empty.
crl() { # name issuer-name index
  mkdir -p "$TMP/ca-$1"; cp "$3" "$TMP/ca-$1/index.txt"; echo "unique_subject = no" > "$TMP/ca-$1/index.txt.attr"
  echo 01 > "$TMP/ca-$1/crlnumber"
  cat > "$TMP/ca-$1/ca.cnf" <<CNF
[ ca ]
default_ca = x
[ x ]
database = $TMP/ca-$1/index.txt
crlnumber = $TMP/ca-$1/crlnumber
default_md = sha256
default_crl_days = 36500
crl_extensions = ext
[ ext ]
authorityKeyIdentifier = keyid
CNF
  openssl ca -batch -gencrl -config "$TMP/ca-$1/ca.cnf" -cert "$C/$2.pem" -keyfile "$K/$2.key" -out "$OUT/$1.pem" 2>/dev/null
}
printf 'R\t%s\t250101000000Z,keyCompromise\t%s\tunknown\t%s\n' $exp "$(serial $C/rsa-intermediate.pem)" "$(subject $C/rsa-intermediate.pem)" > "$TMP/root-revoked.idx"
crl crl-intermediate-revokes-leaf rsa-intermediate "$TMP/revoked.idx"
crl crl-intermediate-empty rsa-intermediate "$TMP/empty.idx"
crl crl-root-revokes-intermediate rsa-root "$TMP/root-revoked.idx"
crl crl-root-empty rsa-root "$TMP/empty.idx"

# A leaf issued directly by rsa-root, and a revoked staple for it signed by the root itself: the
# response's issuer is the trust anchor, not a served certificate (issue 12, "every route").
mkdir -p $K/revocation
leaf rsa-direct-leaf rsa-root 0xd12ec7 "$K/revocation/rsa-direct-leaf.key"
printf 'R\t%s\t250101000000Z,keyCompromise\t%s\tunknown\t%s\n' $exp "$(serial $OUT/rsa-direct-leaf.pem)" "$(subject $OUT/rsa-direct-leaf.pem)" > "$TMP/direct.idx"
echo "unique_subject = no" > "$TMP/direct.idx.attr"
openssl ocsp -issuer $C/rsa-root.pem -cert "$OUT/rsa-direct-leaf.pem" -no_nonce -reqout "$TMP/direct.req" 2>/dev/null
openssl ocsp -index "$TMP/direct.idx" -rsigner $C/rsa-root.pem -rkey $K/rsa-root.key -CA $C/rsa-root.pem -reqin "$TMP/direct.req" \
  -ndays 36500 -respout "$OUT/ocsp-direct-revoked.der" 2>/dev/null
echo "Generated revocation fixtures in $OUT"
