#!/usr/bin/env bash
# Type-checks each api/impossible/*.swift against the debug build's modules: the control
# (compiles.swift) must type-check, every other file must be refused with its `// error:` text.
# Run after `swift build` (scripts/test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=.build/debug/Modules
[ -d "$modules" ] || { echo "impossible.sh: no $modules; build first" >&2; exit 1; }
check() { swiftc -typecheck -I "$modules" -I Sources/COpenSSL "$1" 2>&1; }

if ! out=$(check api/impossible/compiles.swift); then
  echo "impossible.sh: the control does not type-check, so no refusal below would mean anything:" >&2
  echo "$out" >&2
  exit 1
fi
failed=0
for file in api/impossible/*.swift; do
  [ "$file" = api/impossible/compiles.swift ] && continue
  expected=$(sed -n 's|^// error: ||p' "$file" | head -1)
  [ -n "$expected" ] || { echo "impossible.sh: $file names no expected error (// error: …)" >&2; failed=1; continue; }
  if out=$(check "$file"); then
    echo "impossible.sh: $file compiles; it must not" >&2; failed=1
  elif ! grep -qF "error: $expected" <<<"$out"; then
    echo "impossible.sh: $file is refused, but not with \"$expected\":" >&2; echo "$out" >&2; failed=1
  else
    echo "refused as it must be: $file"
  fi
done
exit "$failed"
