#!/usr/bin/env bash
# Makes a Debian package of the command: pincheck_VERSION_ARCH.deb in OUT (default .build/deb),
# with what scripts/install.sh installs under /usr. Its dependencies are read from the binaries
# by dpkg-shlibdeps: the C library, the C++ runtime and OpenSSL 3, no Swift.
#   scripts/package-deb.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = --help ] && { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
out=${1:-.build/deb}
command -v dpkg-deb >/dev/null || { echo "package-deb.sh: needs dpkg-deb (Debian's dpkg)" >&2; exit 1; }
if ! command -v dpkg-shlibdeps >/dev/null; then
  echo "==> installing dpkg-dev (dpkg-shlibdeps)"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends dpkg-dev >/dev/null
fi
version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' Sources/TrustEvaluatorCore/PincheckVersion.swift)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
DESTDIR="$stage" scripts/install.sh /usr

# The dependencies, from the shared libraries the programs load and their symbols, by Debian's
# own tool (dpkg-shlibdeps reads the libraries' shlibs and symbols files: the lowest versions
# that carry what is used, not the versions installed here).
shlibs=$(mktemp -d)
mkdir -p "$shlibs/debian" "$stage/DEBIAN"
printf 'Source: pincheck\n\nPackage: pincheck\nArchitecture: any\n' > "$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O -e"$stage/usr/bin/pincheck" -e"$stage/usr/bin/pincheck-watch" 2>/dev/null \
  | sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlibs"
[ -n "$depends" ] || { echo "package-deb.sh: dpkg-shlibdeps found no dependency" >&2; exit 1; }

install -d "$stage/DEBIAN" "$stage/usr/share/doc/pincheck"
cp README.md "$stage/usr/share/doc/pincheck/"
gzip -9n -c CHANGELOG.md > "$stage/usr/share/doc/pincheck/changelog.gz"
cat > "$stage/DEBIAN/control" <<EOF
Package: pincheck
Version: $version
Architecture: $arch
Maintainer: Pincheck developers <pincheck@invalid>
Depends: $depends
Section: net
Priority: optional
Installed-Size: $(du -sk "$stage/usr" | cut -f1)
Description: TLS trust evaluation and certificate pinning checks
 pincheck verifies certificate chains against trust anchors and pinning
 policies (SPKI pins, per-host configurations, TrustKit, Android and OkHttp
 files), checks and scans live hosts, lints and audits pinning
 configurations; pincheck-watch re-checks them and serves Prometheus metrics.
EOF
mkdir -p "$out"
deb="$out/pincheck_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$stage" "$deb" >/dev/null
echo "==> $deb (Depends: $depends)"
