#!/usr/bin/env bash
# Builds pincheck and pincheck-watch for release, with the Swift standard library and Foundation
# linked in (--static-swift-stdlib: the installed programs need only the system's C library and
# OpenSSL 3, no Swift toolchain), and installs them under PREFIX:
#   PREFIX/bin/pincheck, PREFIX/bin/pincheck-watch    (pincheck watch runs the one beside it)
#   PREFIX/share/bash-completion/completions/pincheck
#   PREFIX/share/zsh/vendor-completions/_pincheck
#   PREFIX/share/fish/vendor_completions.d/pincheck.fish  (argument-parser's completion scripts)
#   PREFIX/share/man/man1/pincheck.1 …                  (argument-parser's manual, docs/man/)
#   scripts/install.sh [PREFIX]     default /usr/local; DESTDIR is put before every path (packaging)
# Builds in .build (release); `swift build` needs the toolchain only here, not where it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = --help ] && { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
prefix=${1:-/usr/local}
case "$prefix" in /*) ;; *) echo "install.sh: PREFIX must be an absolute path, not $prefix" >&2; exit 2 ;; esac
root="${DESTDIR:-}$prefix"
source scripts/setup.sh

echo "==> release build of pincheck and pincheck-watch (--static-swift-stdlib)"
for product in pincheck pincheck-watch; do
  swift build -c release --static-swift-stdlib --product "$product"
done
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)

install -d "$root/bin" "$root/share/bash-completion/completions" "$root/share/zsh/vendor-completions" \
  "$root/share/fish/vendor_completions.d" "$root/share/man/man1"
# Stripped, as distributions install programs: half the size, nothing a program reads at run time.
install -m 0755 -s "$bin/pincheck" "$bin/pincheck-watch" "$root/bin/"
"$bin/pincheck" --generate-completion-script bash > "$root/share/bash-completion/completions/pincheck"
"$bin/pincheck" --generate-completion-script zsh > "$root/share/zsh/vendor-completions/_pincheck"
"$bin/pincheck" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/pincheck.fish"
install -m 0644 docs/man/*.1 "$root/share/man/man1/"
echo "==> installed pincheck $("$root/bin/pincheck" --version | head -1) in $root/bin"
