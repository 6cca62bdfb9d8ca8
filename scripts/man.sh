#!/usr/bin/env bash
# docs/man/pincheck.1 and pincheck-watch.1, made by swift-argument-parser's manual generator
# (generate-manual, built from the package's own checkout) from the built commands' help:
#   scripts/man.sh           regenerate them (after `swift build`)
#   scripts/man.sh --check   fail when they differ from what the commands' help now says
# The date in them is the committed one (the .Dd line), so a check compares text, not days.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PINCHECK_BIN:-.build/debug}
checkout=.build/checkouts/swift-argument-parser
[ -d "$checkout" ] || { echo "man.sh: no $checkout (run swift build first)" >&2; exit 1; }
tool=.build/generate-manual/bin/generate-manual
if [ ! -x "$tool" ]; then
  # A copy of the checkout, built as a package of its own: generate-manual is an executable
  # target there, which a dependent package cannot build.
  rm -rf .build/generate-manual && mkdir -p .build/generate-manual
  cp -r "$checkout" .build/generate-manual/source
  swift build --package-path .build/generate-manual/source --product generate-manual -q
  mkdir -p .build/generate-manual/bin
  cp "$(swift build --package-path .build/generate-manual/source --show-bin-path)/generate-manual" "$tool"
fi
date=$(sed -n 's/^\.Dd \(.*\)$/\1/p' docs/man/pincheck.1 2>/dev/null | head -1)
day=$( [ -n "$date" ] && date -d "$date" +%F || date +%F )
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$tool" "$bin/pincheck" --date "$day" --authors "Pincheck developers" -o "$out"
"$tool" "$bin/pincheck-watch" --date "$day" --authors "Pincheck developers" -o "$out"
mv "$out/pincheck watch.1" "$out/pincheck-watch.1"
if [ "${1:-}" = --check ]; then
  diff -u docs/man/pincheck.1 "$out/pincheck.1" && diff -u docs/man/pincheck-watch.1 "$out/pincheck-watch.1" \
    || { echo "man.sh: docs/man is not what the commands' help says: run scripts/man.sh" >&2; exit 1; }
  echo "man.sh: docs/man matches the commands' help"
else
  cp "$out/pincheck.1" "$out/pincheck-watch.1" docs/man/
  echo "man.sh: wrote docs/man/pincheck.1 and pincheck-watch.1"
fi
