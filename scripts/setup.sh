#!/usr/bin/env bash
# Installs what building Pincheck needs on a fresh Debian machine: OpenSSL 3 headers (libssl-dev),
# pkg-config, the openssl CLI, the Public Suffix List (publicsuffix), and python3 and curl for
# the scripts (documentation snippets, the test-data fetch). Sourced by test.sh and demo.sh; safe to run again.
set -euo pipefail

missing=()
dpkg -s libssl-dev >/dev/null 2>&1 || missing+=(libssl-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
[ -f /usr/share/publicsuffix/public_suffix_list.dat ] || missing+=(publicsuffix)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
if ((${#missing[@]})); then
  echo "==> installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The toolchain the manifest asks for (its swift-tools-version line), checked before a build
# fails on it with a less direct message.
needed_swift=$(sed -n '1s|^// swift-tools-version: *\([0-9.]*\).*|\1|p' Package.swift 2>/dev/null)
if ! command -v swift >/dev/null 2>&1; then
  echo "error: no Swift toolchain on PATH (Swift ${needed_swift:-6.1} or newer is needed: https://swift.org/install)" >&2
  exit 1
fi
have_swift=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9.]*\).*/\1/p' | head -1)
if [ -n "$needed_swift" ] && [ -n "$have_swift" ] && \
   [ "$(printf '%s\n%s\n' "$needed_swift" "$have_swift" | sort -V | head -1)" != "$needed_swift" ]; then
  echo "error: Swift $have_swift found; Package.swift needs Swift $needed_swift or newer (swift-tools-version)" >&2
  exit 1
fi
openssl_version=$(pkg-config --modversion openssl)
case "$openssl_version" in
  0.*|1.*|2.*) echo "error: OpenSSL $openssl_version found; Pincheck needs 3.0 or newer" >&2; exit 1 ;;
esac
