#!/usr/bin/env bash
# Type-checks the C module (Sources/PincheckOpenSSL) against the newest OpenSSL headers Debian's
# registry has (experimental carries OpenSSL 4.0, whose ASN1_STRING is opaque), so that code which
# reads a structure that release hides fails here, before a user's build does.
#   scripts/openssl4-check.sh                newest libssl-dev of sid and experimental
#   OPENSSL_HEADERS=DIR scripts/openssl4-check.sh   headers already unpacked in DIR (DIR/usr/include)
# The headers are unpacked once into .build/openssl-headers-VERSION. Nothing is linked or run.
set -euo pipefail
cd "$(dirname "$0")/.."

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
headers=${OPENSSL_HEADERS:-}
if [ -z "$headers" ]; then
  newest="" newest_file=""
  for suite in sid experimental; do
    entry=$(curl -fsS --max-time 60 "$mirror/dists/$suite/main/binary-amd64/Packages.xz" | xz -dc |
      awk '/^Package: /{p=($2=="libssl-dev")} p&&/^Version: /{v=$2} p&&/^Filename: /{print v, $2; p=0}' | head -1)
    [ -n "$entry" ] || continue
    version=${entry%% *} file=${entry#* }
    if [ -z "$newest" ] || dpkg --compare-versions "$version" gt "$newest"; then newest=$version newest_file=$file; fi
  done
  [ -n "$newest" ] || { echo "openssl4-check.sh: no libssl-dev found at $mirror (sid, experimental)" >&2; exit 1; }
  headers=.build/openssl-headers-$newest
  if [ ! -f "$headers/usr/include/openssl/opensslv.h" ]; then
    deb=$(mktemp)
    curl -fsS --max-time 120 -o "$deb" "$mirror/$newest_file"
    rm -rf "$headers" && mkdir -p "$headers"
    dpkg-deb -x "$deb" "$headers"
    rm -f "$deb"
  fi
fi
version=$(sed -n 's/^# *define OPENSSL_FULL_VERSION_STR "\(.*\)"/\1/p' "$headers/usr/include/openssl/opensslv.h")
echo "openssl4-check.sh: Sources/PincheckOpenSSL against the headers of OpenSSL ${version:-?} ($headers)"
# -I comes before the system's include folders: OpenSSL's headers are taken from $headers.
swiftc -typecheck -warnings-as-errors -module-name PincheckOpenSSL -package-name pincheck \
  -I Sources/COpenSSL \
  -Xcc -I"$headers/usr/include" -Xcc -I"$headers/usr/include/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)" \
  Sources/PincheckOpenSSL/*.swift
echo "openssl4-check.sh: type-checks against OpenSSL ${version:-?}"
