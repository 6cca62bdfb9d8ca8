#!/usr/bin/env bash
# Runs a command inside a Debian 13 (trixie) root, whose OpenSSL is 3.5: the second system that
# scripts/test.sh tests on (Debian 12 carries OpenSSL 3.0).
#   scripts/debian13.sh COMMAND [ARG...]   runs COMMAND in this project's folder inside the root
#   scripts/debian13.sh                    builds the root only
# Inside, the project's .build folder is .build-debian13 (bind-mounted over it): the two systems'
# builds never mix, and scripts that use .build work unchanged in both.
# The root is made once with mmdebstrap from Debian's registry (about 40 s, 510 MB) and kept in
# $DEBIAN13_ROOT (default .build/debian13-root); delete that folder to make it again. The Swift
# toolchain (/opt/swift), the package mirror (/opt/swift-packages), this project and ../shared are
# bind-mounted into it, in a private mount namespace that ends with the command. Needs root (or
# sudo without a password): mmdebstrap, unshare and chroot do.
set -euo pipefail
cd "$(dirname "$0")/.."
project=$PWD
root=${DEBIAN13_ROOT:-$project/.build/debian13-root}

if [ "$(id -u)" != 0 ]; then
  if sudo -n true 2>/dev/null; then exec sudo -n --preserve-env=CI,DEBIAN13_ROOT "$0" "$@"; fi
  echo "error: the Debian 13 leg needs root (mmdebstrap, unshare, chroot); SECOND_LEG=0 skips it" >&2
  exit 1
fi

# What building and testing Pincheck needs there: OpenSSL's headers and CLI, pkg-config and the
# Public Suffix List (as scripts/setup.sh installs on the host), and what the Swift toolchain links
# with and loads on Debian 13 (its C library and C++ runtime headers, binutils with gold, libedit,
# ncurses, Python 3.13, Z3, libcurl, libxml2, zlib), git for the package mirror, tzdata.
packages=libssl-dev,openssl,pkg-config,publicsuffix,ca-certificates,libc6-dev,libgcc-14-dev,\
libstdc++-14-dev,binutils,binutils-gold,libncurses6,libedit2,libpython3.13,libz3-4,\
libcurl4-openssl-dev,libxml2,zlib1g-dev,git,tzdata,python3

if [ ! -f "$root/.pincheck-root-ready" ]; then
  if ! command -v mmdebstrap >/dev/null; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null
  fi
  rm -rf "$root"
  mkdir -p "$(dirname "$root")"
  echo "==> making a Debian 13 root in $root"
  mmdebstrap --quiet --variant=minbase --include="$packages" trixie "$root"
  touch "$root/.pincheck-root-ready"
fi
[ $# -gt 0 ] || exit 0

if [ "${PINCHECK_INSIDE_NAMESPACE:-}" != 1 ]; then
  exec env PINCHECK_INSIDE_NAMESPACE=1 unshare --mount --propagation private "$0" "$@"
fi

# In the private namespace: mounts vanish with it, whatever way the command ends.
shared=$(cd "${PINCHECK_SHARED:-../shared}" 2>/dev/null && pwd -P || true)
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mkdir -p "$root/opt/swift" "$root/opt/swift-packages" "$root$project"
mount --bind -o ro /opt/swift "$root/opt/swift"
[ -d /opt/swift-packages ] && mount --bind -o ro /opt/swift-packages "$root/opt/swift-packages"
mount --bind "$project" "$root$project"
mkdir -p "$project/.build-debian13" "$root$project/.build"
mount --bind "$project/.build-debian13" "$root$project/.build"
if [ -n "$shared" ]; then
  mkdir -p "$root$(dirname "$project")/shared"
  mount --bind -o ro "$shared" "$root$(dirname "$project")/shared"
fi
# The host's git settings carry the package mirror's `insteadOf` for github.com.
[ -f /etc/gitconfig ] && cp /etc/gitconfig "$root/etc/gitconfig"
[ -f "$HOME/.gitconfig" ] && mkdir -p "$root/root" && cp "$HOME/.gitconfig" "$root/root/.gitconfig"

exec chroot "$root" /usr/bin/env -i \
  PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" CI="${CI:-}" \
  PINCHECK_PROJECT="$project" PINCHECK_SHARED="$(dirname "$project")/shared" \
  bash -c 'cd "$PINCHECK_PROJECT" && exec "$@"' debian13 "$@"
