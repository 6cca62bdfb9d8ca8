#!/usr/bin/env bash
# Post-quantum certificates (Certificates/pq/), made with OpenSSL 3.5 inside a Debian 13 root:
# Debian 12's OpenSSL 3.0 knows neither ML-DSA nor SLH-DSA. The root is made with mmdebstrap
# (minbase and openssl: about half a minute) and kept in $PQ_ROOT (default .build/trixie-openssl).
#   an ML-DSA-65 root and an ML-DSA-44 leaf for www.example.test issued by it (chain: leaf, root)
#   a self-signed ML-DSA-87 leaf, and a self-signed SLH-DSA-SHA2-128s leaf, for www.example.test
# Run as root (mmdebstrap and chroot); re-runnable. Dates cover the tests' fixed time, 2030-06-01.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${PQ_ROOT:-.build/trixie-openssl}
if [ ! -x "$root/usr/bin/openssl" ]; then
  command -v mmdebstrap >/dev/null || apt-get install -y mmdebstrap >/dev/null
  rm -rf "$root"
  mmdebstrap --variant=minbase --include=openssl trixie "$root" >/dev/null
fi
work=$root/pq-work; rm -rf "$work"; mkdir -p "$work"
cat > "$work/make.sh" <<'INNER'
set -eu
cd /pq-work
openssl version
leaf_ext() { printf '%s\n' "basicConstraints = critical, CA:FALSE" "keyUsage = critical, digitalSignature" \
  "extendedKeyUsage = serverAuth" "subjectKeyIdentifier = hash" "authorityKeyIdentifier = keyid" "subjectAltName = DNS:www.example.test"; }
openssl genpkey -algorithm ML-DSA-65 -out ml-dsa-65-root.key
openssl req -x509 -new -key ml-dsa-65-root.key -subj "/O=Pincheck Tests/CN=Pincheck Test ML-DSA-65 Root" \
  -not_before 20250101000000Z -not_after 20991231235959Z -out ml-dsa-65-root.pem \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -addext "subjectKeyIdentifier=hash"
openssl genpkey -algorithm ML-DSA-44 -out ml-dsa-44-leaf.key
openssl req -new -key ml-dsa-44-leaf.key -subj "/O=Pincheck Tests/CN=www.example.test" -out leaf.csr
leaf_ext > leaf.ext
openssl x509 -req -in leaf.csr -CA ml-dsa-65-root.pem -CAkey ml-dsa-65-root.key -set_serial 0x9d5a44 \
  -not_before 20250101000000Z -not_after 20991231235959Z -extfile leaf.ext -out ml-dsa-44-leaf.pem
for algorithm in ML-DSA-87 SLH-DSA-SHA2-128s; do
  name=$(echo "$algorithm" | tr 'A-Z' 'a-z')
  openssl genpkey -algorithm "$algorithm" -out "$name-self-signed.key"
  openssl req -x509 -new -key "$name-self-signed.key" -subj "/O=Pincheck Tests/CN=www.example.test" \
    -not_before 20250101000000Z -not_after 20991231235959Z -out "$name-self-signed.pem" \
    -addext "basicConstraints=critical,CA:FALSE" -addext "keyUsage=critical,digitalSignature" \
    -addext "extendedKeyUsage=serverAuth" -addext "subjectAltName=DNS:www.example.test"
done
INNER
chroot "$root" sh /pq-work/make.sh
OUT=Certificates/pq; KO=Certificates/pq/keys
rm -rf "$OUT"; mkdir -p "$OUT" "$KO"
for pem in "$work"/*.pem; do cp "$pem" "$OUT/"; done
for key in "$work"/*.key; do cp "$key" "$KO/"; done
cat "$OUT/ml-dsa-44-leaf.pem" "$OUT/ml-dsa-65-root.pem" > "$OUT/ml-dsa-44-chain.pem"
rm -rf "$work"
echo "Generated post-quantum fixtures in $OUT (OpenSSL $(chroot "$root" openssl version | cut -d' ' -f2))"
