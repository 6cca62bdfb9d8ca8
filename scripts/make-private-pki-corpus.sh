#!/usr/bin/env bash
# Makes Certificates/private-pki/: chains made by the tools private PKIs and development machines
# use, each at its documented defaults, for PrivatePKICorpusTests. Run once by hand and committed
# (the tools' versions and random keys change every run; CI never regenerates it):
#   scripts/make-private-pki-corpus.sh      needs root for apt-get and pip (installs what is missing)
# Each fixture folder holds:
#   root.pem          the anchor the user would pass with --ca-file (the tool's CA)
#   chain.pem         what the server sends, leaf first
#   foreign-root.pem  a CA with the same subject as root.pem and another key (must be refused)
# and manifest.tsv gets one line per fixture:
#   NAME <TAB> TOOL VERSION <TAB> HOSTS (comma-separated DNS names and IPs the leaf is for)
#        <TAB> VERIFY-AT (ISO 8601, inside every certificate's validity) <TAB> COMMAND (what was run)
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1; }
if ! need mkcert || ! need certtool || ! need certutil || ! need pki || ! need cfssl || ! need minica || ! need go || [ ! -x /usr/share/easy-rsa/easyrsa ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mkcert easy-rsa gnutls-bin libnss3-tools strongswan-pki golang-cfssl minica golang-go openjdk-17-jre-headless >/dev/null
fi
python3 -c 'import trustme, certipy' 2>/dev/null || pip install -q trustme certipy

OUT=Certificates/private-pki
rm -rf "$OUT"
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MANIFEST="$OUT/manifest.tsv"
printf '# name\ttool\thosts\tverify-at\tcommand\n' > "$MANIFEST"
# A day after now: inside every certificate made here (some tools start validity at "now").
VERIFY_AT=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)

pem() { # any certificate file (PEM or DER) → PEM on stdout
  if grep -q -- '-----BEGIN CERTIFICATE-----' "$1"; then openssl x509 -in "$1"; else openssl x509 -inform DER -in "$1"; fi
}

# fixture NAME "TOOL VERSION" HOSTS COMMAND ROOT LEAF [INTERMEDIATE…]
fixture() {
  local name=$1 tool=$2 hosts=$3 command=$4 root=$5 leaf=$6
  shift 6
  mkdir -p "$OUT/$name"
  pem "$root" > "$OUT/$name/root.pem"
  { pem "$leaf"; for intermediate in "$@"; do pem "$intermediate"; done; } > "$OUT/$name/chain.pem"
  # A stranger's CA with the very same subject (a DER copy of the name, a new key).
  openssl x509 -in "$OUT/$name/root.pem" -noout -subject -nameopt RFC2253 >/dev/null
  local subject
  subject=$(openssl x509 -in "$OUT/$name/root.pem" -noout -subject -nameopt compat | sed 's/^subject=//')
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/foreign.key" -out "$OUT/$name/foreign-root.pem" \
    -days 3650 -subj "$subject" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
  [ "$(openssl x509 -in "$OUT/$name/foreign-root.pem" -noout -subject -nameopt RFC2253)" = \
    "$(openssl x509 -in "$OUT/$name/root.pem" -noout -subject -nameopt RFC2253)" ] || { echo "$name: foreign root subject differs" >&2; exit 1; }
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$tool" "$hosts" "$VERIFY_AT" "$command" >> "$MANIFEST"
  echo "made $name ($tool)"
}

# --- mkcert ------------------------------------------------------------------------------------
d=$WORK/mkcert; mkdir -p "$d"
( cd "$d" && CAROOT=$d mkcert -cert-file leaf.pem -key-file leaf.key example.test '*.example.test' localhost 127.0.0.1 ::1 >/dev/null 2>&1 )
fixture mkcert "mkcert $(dpkg-query -W -f '${Version}' mkcert)" "example.test,www.example.test,localhost,127.0.0.1,::1" \
  "CAROOT=DIR mkcert example.test '*.example.test' localhost 127.0.0.1 ::1" "$d/rootCA.pem" "$d/leaf.pem"

# --- easy-rsa, with and without --subject-alt-name --------------------------------------------
EASYRSA_VERSION="easy-rsa $(dpkg-query -W -f '${Version}' easy-rsa)"
d=$WORK/easyrsa; mkdir -p "$d"
( cd "$d" && /usr/share/easy-rsa/easyrsa --batch init-pki >/dev/null 2>&1 \
  && /usr/share/easy-rsa/easyrsa --batch --req-cn="Easy-RSA CA" build-ca nopass >/dev/null 2>&1 \
  && /usr/share/easy-rsa/easyrsa --batch build-server-full server.example.test nopass >/dev/null 2>&1 \
  && /usr/share/easy-rsa/easyrsa --batch --subject-alt-name="DNS:api.corp.internal,DNS:node7-alt.corp.internal,IP:10.0.0.7" \
       build-server-full node7.corp.internal nopass >/dev/null 2>&1 )
fixture easy-rsa "$EASYRSA_VERSION" "server.example.test" \
  "easyrsa init-pki; easyrsa build-ca nopass; easyrsa build-server-full server.example.test nopass" \
  "$d/pki/ca.crt" "$d/pki/issued/server.example.test.crt"
fixture easy-rsa-san "$EASYRSA_VERSION" "api.corp.internal,node7-alt.corp.internal,10.0.0.7" \
  "easyrsa --subject-alt-name='DNS:api.corp.internal,DNS:node7-alt.corp.internal,IP:10.0.0.7' build-server-full node7.corp.internal nopass" \
  "$d/pki/ca.crt" "$d/pki/issued/node7.corp.internal.crt"

# --- cfssl (its README's CA and server profile) ------------------------------------------------
d=$WORK/cfssl; mkdir -p "$d"
cat > "$d/ca-csr.json" <<'JSON'
{ "CN": "cfssl Example CA", "key": { "algo": "ecdsa", "size": 256 }, "names": [ { "O": "Example" } ] }
JSON
cat > "$d/config.json" <<'JSON'
{ "signing": { "default": { "expiry": "8760h" },
  "profiles": { "server": { "expiry": "8760h", "usages": ["signing", "key encipherment", "server auth"] } } } }
JSON
cat > "$d/server-csr.json" <<'JSON'
{ "CN": "api.example.test", "hosts": ["api.example.test", "127.0.0.1"], "key": { "algo": "ecdsa", "size": 256 } }
JSON
( cd "$d" && cfssl gencert -initca ca-csr.json 2>/dev/null | cfssljson -bare ca \
  && cfssl gencert -ca ca.pem -ca-key ca-key.pem -config config.json -profile server server-csr.json 2>/dev/null | cfssljson -bare server )
fixture cfssl "cfssl $(dpkg-query -W -f '${Version}' golang-cfssl)" "api.example.test,127.0.0.1" \
  "cfssl gencert -initca ca-csr.json | cfssljson -bare ca; cfssl gencert -ca ca.pem -ca-key ca-key.pem -config config.json -profile server server-csr.json | cfssljson -bare server" \
  "$d/ca.pem" "$d/server.pem"

# --- GnuTLS certtool (its manual's CA and server templates) ------------------------------------
d=$WORK/certtool; mkdir -p "$d"
printf 'cn = "GnuTLS Test CA"\nca\ncert_signing_key\nexpiration_days = 3650\n' > "$d/ca.tmpl"
printf 'cn = "www.example.test"\ndns_name = "www.example.test"\ndns_name = "example.test"\nip_address = "192.0.2.10"\ntls_www_server\nsigning_key\nencryption_key\nexpiration_days = 365\n' > "$d/server.tmpl"
certtool --generate-privkey --outfile "$d/ca.key" >/dev/null 2>&1
certtool --generate-self-signed --load-privkey "$d/ca.key" --template "$d/ca.tmpl" --outfile "$d/ca.pem" >/dev/null 2>&1
certtool --generate-privkey --outfile "$d/server.key" >/dev/null 2>&1
certtool --generate-certificate --load-privkey "$d/server.key" --load-ca-certificate "$d/ca.pem" --load-ca-privkey "$d/ca.key" \
  --template "$d/server.tmpl" --outfile "$d/server.pem" >/dev/null 2>&1
fixture certtool "GnuTLS certtool $(dpkg-query -W -f '${Version}' gnutls-bin)" "www.example.test,example.test,192.0.2.10" \
  "certtool --generate-self-signed (ca, cert_signing_key); certtool --generate-certificate (tls_www_server, dns_name, ip_address)" \
  "$d/ca.pem" "$d/server.pem"

# --- NSS certutil ------------------------------------------------------------------------------
d=$WORK/certutil; mkdir -p "$d/db"
certutil -N -d "sql:$d/db" --empty-password
head -c 64 /dev/urandom > "$d/noise"
# -2 asks: is this a CA? (y) path length? (none) critical? (y)
printf 'y\n\ny\n' | certutil -S -d "sql:$d/db" -n ca -s "CN=NSS Test CA,O=Example" -x -m 1 -t "CT,," -k rsa -g 2048 -v 120 \
  -z "$d/noise" --keyUsage certSigning,crlSigning -2 >/dev/null 2>&1
certutil -S -d "sql:$d/db" -n server -s "CN=nss.example.test" -c ca -m 2 -t ",," -k rsa -g 2048 -v 12 -z "$d/noise" \
  --extSAN "dns:nss.example.test,ip:127.0.0.1" --keyUsage digitalSignature,keyEncipherment --extKeyUsage serverAuth >/dev/null 2>&1
certutil -L -d "sql:$d/db" -n ca -a > "$d/ca.pem"
certutil -L -d "sql:$d/db" -n server -a > "$d/server.pem"
fixture certutil "NSS certutil $(dpkg-query -W -f '${Version}' libnss3-tools)" "nss.example.test,127.0.0.1" \
  "certutil -S -x -n ca -t CT,, --keyUsage certSigning,crlSigning -2; certutil -S -n server -c ca --extSAN dns:nss.example.test,ip:127.0.0.1 --extKeyUsage serverAuth" \
  "$d/ca.pem" "$d/server.pem"

# --- Java keytool: two CN=localhost roots, a leaf under the second ----------------------------
d=$WORK/keytool; mkdir -p "$d"
KT="keytool -storepass changeit -keypass changeit -noprompt"
for ca in ca1 ca2; do
  $KT -genkeypair -alias "$ca" -keyalg RSA -keysize 2048 -dname "CN=localhost" -ext bc:c -validity 3650 -keystore "$d/$ca.p12" >/dev/null 2>&1
  $KT -exportcert -rfc -alias "$ca" -keystore "$d/$ca.p12" -file "$d/$ca.pem" >/dev/null 2>&1
done
$KT -genkeypair -alias server -keyalg RSA -keysize 2048 -dname "CN=localhost" -validity 365 -keystore "$d/server.p12" >/dev/null 2>&1
$KT -certreq -alias server -keystore "$d/server.p12" -file "$d/server.csr" >/dev/null 2>&1
$KT -gencert -alias ca2 -keystore "$d/ca2.p12" -infile "$d/server.csr" -outfile "$d/server.pem" -rfc -validity 365 \
  -ext san=dns:localhost,ip:127.0.0.1 -ext eku=serverAuth >/dev/null 2>&1
fixture keytool "keytool $(java -version 2>&1 | head -1 | sed 's/.*version "\(.*\)".*/\1/')" "localhost,127.0.0.1" \
  "keytool -genkeypair -dname CN=localhost -ext bc:c (twice: ca1, ca2); keytool -gencert -alias ca2 -ext san=dns:localhost,ip:127.0.0.1 -ext eku=serverAuth" \
  "$d/ca2.pem" "$d/server.pem"
pem "$d/ca1.pem" > "$OUT/keytool/other-localhost-root.pem"

# --- Python trustme (the test CA of much of the Python ecosystem) -------------------------------
d=$WORK/trustme; mkdir -p "$d"
python3 - "$d" <<'PY'
import sys, trustme
d = sys.argv[1]
for name, ca, hosts in [("rsa", trustme.CA(), ["example.test", "127.0.0.1"]),
                        ("ec", trustme.CA(key_type=trustme.KeyType.ECDSA), ["example.test", "127.0.0.1"])]:
    ca.cert_pem.write_to_path(f"{d}/{name}-ca.pem")
    cert = ca.issue_cert(*hosts)
    cert.cert_chain_pems[0].write_to_path(f"{d}/{name}-leaf.pem")
root = trustme.CA()
child = root.create_child_ca()
root.cert_pem.write_to_path(f"{d}/child-root.pem")
cert = child.issue_cert("example.test", "127.0.0.1")
for index, blob in enumerate(cert.cert_chain_pems):
    blob.write_to_path(f"{d}/child-{index}.pem")
PY
TRUSTME="trustme $(python3 -c 'import trustme; print(trustme.__version__)')"
fixture trustme-rsa "$TRUSTME" "example.test,127.0.0.1" "trustme.CA().issue_cert('example.test', '127.0.0.1')" "$d/rsa-ca.pem" "$d/rsa-leaf.pem"
fixture trustme-ecdsa "$TRUSTME" "example.test,127.0.0.1" "trustme.CA(key_type=KeyType.ECDSA).issue_cert('example.test', '127.0.0.1')" "$d/ec-ca.pem" "$d/ec-leaf.pem"
fixture trustme-child-ca "$TRUSTME" "example.test,127.0.0.1" "trustme.CA().create_child_ca().issue_cert('example.test', '127.0.0.1')" \
  "$d/child-root.pem" "$d/child-0.pem" "$d/child-1.pem"

# --- certipy (JupyterHub's internal SSL) ---------------------------------------------------------
d=$WORK/certipy; mkdir -p "$d"
python3 - "$d" <<'PY'
import sys
from certipy import Certipy
c = Certipy(store_dir=sys.argv[1])
c.create_ca("hub-ca")
record = c.create_signed_pair("hub-internal", "hub-ca", alt_names=["DNS:localhost", "IP:127.0.0.1", "DNS:hub.internal"])
assert record["files"]["cert"]
PY
CERTIPY="certipy $(python3 -c 'import importlib.metadata as m; print(m.version("certipy"))')"
fixture certipy "$CERTIPY" "localhost,127.0.0.1,hub.internal" \
  "Certipy().create_ca('hub-ca'); create_signed_pair('hub-internal', 'hub-ca', alt_names=['DNS:localhost', 'IP:127.0.0.1', 'DNS:hub.internal'])" \
  "$d/hub-ca/hub-ca.crt" "$d/hub-internal/hub-internal.crt"

# --- Go's crypto/tls generate_cert.go (self-signed, O=Acme Co) ----------------------------------
d=$WORK/go; mkdir -p "$d/a" "$d/b"
GOCACHE=$WORK/gocache GOFLAGS=-mod=mod
export GOCACHE
( cd "$d/a" && go run /usr/lib/go/src/crypto/tls/generate_cert.go --host example.test,127.0.0.1 --ca >/dev/null 2>&1 )
( cd "$d/b" && go run /usr/lib/go/src/crypto/tls/generate_cert.go --host example.test,127.0.0.1 --ca >/dev/null 2>&1 )
fixture go-generate-cert "Go $(go version | awk '{print $3}') generate_cert.go" "example.test,127.0.0.1" \
  "go run \$GOROOT/src/crypto/tls/generate_cert.go --host example.test,127.0.0.1 --ca" "$d/a/cert.pem" "$d/a/cert.pem"
pem "$d/b/cert.pem" > "$OUT/go-generate-cert/other-acme-root.pem"

# --- minica (Debian's: paultag/minica, one certificate per name argument) ---------------------
d=$WORK/minica; mkdir -p "$d"
( cd "$d" && minica example.test >/dev/null 2>&1 )
fixture minica "minica $(dpkg-query -W -f '${Version}' minica)" "example.test" \
  "minica example.test" "$d/cacert.crt" "$d/example.test.crt"

# --- strongSwan pki (its documentation's CA and server certificate) -----------------------------
d=$WORK/pki; mkdir -p "$d"
pki --gen --type ed25519 --outform pem > "$d/ca.key" 2>/dev/null
pki --self --ca --lifetime 3650 --in "$d/ca.key" --type ed25519 --dn "C=CH, O=strongSwan, CN=strongSwan Root CA" --outform pem > "$d/ca.pem"
pki --gen --type ecdsa --size 256 --outform pem > "$d/server.key"
pki --req --type priv --in "$d/server.key" --dn "C=CH, O=strongSwan, CN=vpn.example.test" --san vpn.example.test --outform pem > "$d/server.csr"
pki --issue --cacert "$d/ca.pem" --cakey "$d/ca.key" --type pkcs10 --in "$d/server.csr" --serial 01 --lifetime 365 \
  --flag serverAuth --san vpn.example.test --outform pem > "$d/server.pem"
fixture strongswan-pki "strongSwan pki $(dpkg-query -W -f '${Version}' strongswan-pki)" "vpn.example.test" \
  "pki --self --ca --type ed25519; pki --issue --flag serverAuth --san vpn.example.test" "$d/ca.pem" "$d/server.pem"

# --- openssl req -x509 one-liner (the canonical answer to "make a self-signed certificate") ----
d=$WORK/openssl; mkdir -p "$d"
openssl req -x509 -newkey rsa:4096 -keyout "$d/key.pem" -out "$d/cert.pem" -sha256 -days 3650 -nodes \
  -subj "/CN=example.test" -addext "subjectAltName=DNS:example.test,DNS:*.example.test,IP:10.0.0.1" 2>/dev/null
fixture openssl-one-liner "OpenSSL $(openssl version | awk '{print $2}')" "example.test,www.example.test,10.0.0.1" \
  "openssl req -x509 -newkey rsa:4096 -sha256 -days 3650 -nodes -subj /CN=example.test -addext subjectAltName=DNS:example.test,DNS:*.example.test,IP:10.0.0.1" \
  "$d/cert.pem" "$d/cert.pem"

echo "wrote $MANIFEST ($(grep -vc '^#' "$MANIFEST") fixtures)"
