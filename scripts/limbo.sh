#!/usr/bin/env bash
# x509-limbo conformance gate (issue 6): runs the limbo-harness over the whole suite and fails on
# any false accept, or when fewer cases pass than conformance/limbo-ratchet.txt records.
#   scripts/limbo.sh                      suite ../shared/limbo/data/limbo.json, build dir .build
#   LIMBO_SUITE=PATH SCRATCH_PATH=DIR LIMBO_RESULTS=FILE scripts/limbo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

suite=${LIMBO_SUITE:-../shared/limbo/data/limbo.json}
scratch=${SCRATCH_PATH:-.build}
ratchet_file=conformance/limbo-ratchet.txt
results=${LIMBO_RESULTS:-$(mktemp)}
summary=$(mktemp)
trap 'rm -f "$summary"; [ -n "${LIMBO_RESULTS:-}" ] || rm -f "$results"' EXIT

[ -f "$suite" ] || { echo "limbo.sh: no x509-limbo suite at $suite" >&2; exit 1; }
# Debug build on purpose: scripts/test.sh has already built it, so this costs no second build.
swift build --scratch-path "$scratch" --product limbo-harness
"$scratch/debug/limbo-harness" "$suite" --results "$results" > "$summary"
grep -E '^(FALSE ACCEPT|FALSE REJECT|SKIPPED) ' "$summary" || true
tail -5 "$summary"

false_accepts=$(sed -n 's/^false accepts: \([0-9]*\)$/\1/p' "$summary")
passed=$(sed -n 's/^\([0-9]*\) passed, [0-9]* failed$/\1/p' "$summary")
ratchet=$(grep -Eo '^[0-9]+' "$ratchet_file" | head -1)
[ -n "$false_accepts" ] && [ -n "$passed" ] || { echo "limbo.sh: the harness did not print its summary" >&2; exit 1; }

status=0
if [ "$false_accepts" -ne 0 ]; then
  echo "limbo.sh: FAIL: $false_accepts false accept(s): chains x509-limbo says must be rejected were trusted" >&2
  status=1
fi
if [ "$passed" -lt "$ratchet" ]; then
  echo "limbo.sh: FAIL: $passed cases passed, fewer than the $ratchet recorded in $ratchet_file" >&2
  status=1
elif [ "$passed" -gt "$ratchet" ]; then
  echo "limbo.sh: $passed cases passed, more than the $ratchet recorded: raise the first line of $ratchet_file to $passed"
fi
[ "$status" -ne 0 ] || echo "limbo.sh: OK ($passed passed, 0 false accepts; ratchet $ratchet)"
exit "$status"
