#!/usr/bin/env bash
# Builds the DocC catalogue of every library module with warnings as errors (a broken symbol
# link, an undocumented parameter in a documented list, an article that is not found).
#   scripts/docs.sh                 every public module
#   scripts/docs.sh MODULE…         only these
# The archives are written to .build/plugins/Swift-DocC/outputs/MODULE.doccarchive. One plugin
# run builds them all: the package is built and its symbol graphs extracted once, not once per
# module.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
  modules=(TrustEvaluatorCore TrustEvaluatorFormats ServerTrust ServerTrustFoundation TrustEvaluatorNIO TrustEvaluatorGRPC PincheckAsyncHTTPClient PincheckVapor PincheckHummingbird)
fi
targets=()
for module in "${modules[@]}"; do
  targets+=(--target "$module")
  rm -rf ".build/plugins/Swift-DocC/outputs/$module.doccarchive"  # so an archive below is this run's
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# --enable-all-traits goes before the plugin's name: after it, it would be handed to docc.
if swift package --enable-all-traits --disable-sandbox generate-documentation "${targets[@]}" --warnings-as-errors >"$log" 2>&1; then
  for module in "${modules[@]}"; do
    [ -d ".build/plugins/Swift-DocC/outputs/$module.doccarchive" ] || { echo "docs.sh: $module: no archive was written" >&2; exit 1; }
    echo "docs.sh: $module: built, no warnings"
  done
else
  grep -E '^(error|warning):|^ *--> |Generating documentation for' "$log" | grep -v 'NSCocoaErrorDomain' >&2 || tail -20 "$log" >&2
  echo "docs.sh: documentation warnings or errors (the module is named above each)" >&2
  exit 1
fi
