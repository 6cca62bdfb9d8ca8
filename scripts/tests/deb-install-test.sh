#!/usr/bin/env bash
# The installed command where users install it: scripts/package-deb.sh's .deb is installed with
# dpkg into a fresh Debian 12 root made by mmdebstrap (minbase, and libssl3: no Swift toolchain,
# no compiler, nothing of this repository's build), and run there:
#   pincheck --version, pincheck demo (exit 0), pincheck verify of a trusted and an untrusted
#   chain (exit 0 and 1), pincheck-watch --help through `pincheck watch`, and the man page and
#   completions in place. A library the programs load that the root lacks fails dpkg -i or the run.
#   scripts/tests/deb-install-test.sh [DEB]   (default: the newest .build/deb/pincheck_*.deb)
# The root is made once and kept in $DEB_TEST_ROOT (default .build/deb-test-root); each run works
# in a copy of it, so nothing installed by one run is there for the next. Needs root (mmdebstrap,
# chroot).
set -euo pipefail
cd "$(dirname "$0")/../.."
deb=${1:-$(ls -t .build/deb/pincheck_*.deb 2>/dev/null | head -1)}
[ -n "$deb" ] && [ -f "$deb" ] || { echo "deb-install-test: no .deb (scripts/package-deb.sh makes one)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "deb-install-test: needs root (mmdebstrap, chroot)" >&2; exit 1; }
base=${DEB_TEST_ROOT:-$PWD/.build/deb-test-root}
if [ ! -f "$base/.pincheck-root-ready" ]; then
  command -v mmdebstrap >/dev/null || {
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null
  }
  rm -rf "$base"
  mkdir -p "$(dirname "$base")"
  echo "==> making a Debian 12 root without Swift in $base"
  mmdebstrap --quiet --variant=minbase --include=libssl3 bookworm "$base"
  touch "$base/.pincheck-root-ready"
fi
# In a mount namespace of its own, so the root's /proc (which a program's arguments and its own
# path are read from) goes away with the test, however it ends.
if [ "${PINCHECK_INSIDE_NAMESPACE:-}" != 1 ]; then
  exec env PINCHECK_INSIDE_NAMESPACE=1 unshare --mount --propagation private "$0" "$deb"
fi
root=$(mktemp -d "$(dirname "$base")/deb-test.XXXXXX")
cleanup() { umount "$root/proc" 2>/dev/null || true; rm -rf "$root"; }
trap cleanup EXIT
cp -a "$base/." "$root/"

fails=0
check() { # description, wanted exit status, text the output must hold ("" for any), command inside the root…
  local what=$1 wanted=$2 text=$3 status=0
  shift 3
  chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@" > "$root/tmp/out" 2>&1 || status=$?
  if [ "$status" = "$wanted" ] && { [ -z "$text" ] || grep -qF -- "$text" "$root/tmp/out"; }; then
    echo "deb-install-test: $what: exit $status"
  else
    echo "deb-install-test: FAILED $what: exit $status (wanted $wanted${text:+, and \"$text\" in the output}):" >&2
    tail -20 "$root/tmp/out" >&2
    fails=$((fails + 1))
  fi
}

[ ! -e "$root/usr/bin/swift" ] && [ ! -e "$root/opt/swift" ] || { echo "deb-install-test: the root has a Swift toolchain" >&2; exit 1; }
cp "$deb" "$root/tmp/pincheck.deb"
check "dpkg -i $(basename "$deb") (its Depends met by a minimal Debian and libssl3)" 0 "" dpkg -i /tmp/pincheck.deb
[ "$fails" = 0 ] || { echo "deb-install-test: the package did not install; nothing else is tried" >&2; exit 1; }
# Without /proc a Swift program cannot read its arguments (they come from /proc/self/cmdline):
# the command says so with exit 2, rather than answer `verify` with its help and exit 0.
check "pincheck verify in a root without /proc" 2 "is /proc mounted" pincheck verify /tmp/pincheck.deb
mount -t proc proc "$root/proc"
mkdir -p "$root/tmp/certs"
cp Certificates/chains/rsa-good.pem Certificates/chains/self-signed.pem Certificates/rsa-root.pem "$root/tmp/certs/"
version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' Sources/TrustEvaluatorCore/PincheckVersion.swift)
check "pincheck --version" 0 "$version" pincheck --version
check "pincheck demo" 0 "13 of 13 scenarios gave the expected verdict" pincheck demo
check "pincheck verify, a trusted chain" 0 "TRUSTED  /tmp/certs/rsa-good.pem" pincheck verify /tmp/certs/rsa-good.pem --host www.example.test --ca-file /tmp/certs/rsa-root.pem --at 2030-06-01T00:00:00Z
check "pincheck verify, a self-signed chain" 1 "chain.self-signed" pincheck verify /tmp/certs/self-signed.pem --host www.example.test --ca-file /tmp/certs/rsa-root.pem --at 2030-06-01T00:00:00Z
check "pincheck watch --help (pincheck-watch beside pincheck)" 0 "USAGE: pincheck watch" pincheck watch --help
check "the man pages and the bash completion are installed" 0 "" sh -c 'test -s /usr/share/man/man1/pincheck.1 && test -s /usr/share/man/man1/pincheck-watch.1 && test -s /usr/share/bash-completion/completions/pincheck'
[ "$fails" = 0 ] || { echo "deb-install-test: $fails failed" >&2; exit 1; }
echo "deb-install-test: the .deb installs and runs in a Debian 12 root without Swift"
