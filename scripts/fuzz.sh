#!/usr/bin/env bash
# libFuzzer targets over Pincheck's parsers and evaluator (Swift, -sanitize=fuzzer,address).
#   scripts/fuzz.sh list                  the target names, one a line
#   scripts/fuzz.sh TARGET [SECONDS]      build and fuzz one target (default 60 s)
#   scripts/fuzz.sh all [SECONDS]         every target in turn (e.g. scripts/fuzz.sh all 3600)
#   scripts/fuzz.sh replay [TARGET]       run the corpora and regression inputs once, no fuzzing
#   scripts/fuzz.sh merge TARGET DIR…     add the inputs of DIR… that reach new edges to Fuzz/Corpus/TARGET
# New interesting inputs go to .build-fuzz/work/TARGET (the committed corpus stays as it is);
# a crash is written to Fuzz/Regressions/TARGET/, which the test suite replays from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
# Leak checking stays on; only leaks inside Foundation itself are suppressed (see the file).
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
targets=(FuzzCertificate FuzzChain FuzzConfiguration FuzzRevocation FuzzChallenge FuzzTransparency)

build() {
  swift build -c debug --product "$1" --scratch-path .build-fuzz \
    -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld >&2
  echo ".build-fuzz/debug/$1"
}

known() { printf '%s\n' "${targets[@]}" | grep -qx "$1" || { echo "unknown target '$1' (scripts/fuzz.sh list)" >&2; exit 2; }; }

fuzz() { # target seconds
  known "$1"
  local binary; binary=$(build "$1")
  mkdir -p ".build-fuzz/work/$1" "Fuzz/Regressions/$1"
  echo "==> fuzzing $1 for $2 s" >&2
  local log=".build-fuzz/work/$1.log" status=0
  # The Swift runtime's own backtracer would run under ASan after a trap; libFuzzer reports instead.
  SWIFT_BACKTRACE=enable=no "$binary" ".build-fuzz/work/$1" "Fuzz/Corpus/$1" -max_total_time="$2" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="Fuzz/Regressions/$1/" -print_final_stats=1 > "$log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|==[0-9]+==( ERROR|ERROR)|SUMMARY|Done|artifact_prefix|Test unit written)' "$log" || true
  if [ "$status" != 0 ]; then
    echo "fuzz.sh: $1 failed (exit $status); the input is in Fuzz/Regressions/$1/, the log in $log:" >&2
    grep -E -A12 'ERROR|deadly signal' "$log" | head -40 >&2
  fi
  return "$status"
}

case "${1:-}" in
  list) printf '%s\n' "${targets[@]}" ;;
  all) for target in "${targets[@]}"; do fuzz "$target" "${2:-60}"; done ;;
  replay)
    for target in ${2:-${targets[@]}}; do
      known "$target"; binary=$(build "$target")
      mkdir -p "Fuzz/Regressions/$target"
      status=0
      SWIFT_BACKTRACE=enable=no "$binary" -runs=0 "Fuzz/Corpus/$target" "Fuzz/Regressions/$target" > ".build-fuzz/replay.log" 2>&1 || status=$?
      grep -E 'DONE|ERROR|SUMMARY' .build-fuzz/replay.log || true
      [ "$status" = 0 ] || { echo "fuzz.sh: replay of $target failed" >&2; exit 1; }
    done ;;
  merge)
    known "$2"; binary=$(build "$2"); target=$2; shift 2
    mkdir -p "Fuzz/Corpus/$target"
    # Edges only (no hit counters): the same new coverage in about a third of the files.
    "$binary" -merge=1 -use_counters=0 "Fuzz/Corpus/$target" "$@" 2>&1 | tail -2 ;;
  ""|-h|--help) sed -n '2,9p' "$0" ;;
  *) fuzz "$1" "${2:-60}" ;;
esac
