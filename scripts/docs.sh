#!/usr/bin/env bash
# Builds the DocC catalogue of every library module with warnings as errors (a broken symbol
# link, an undocumented parameter in a documented list, an article that is not found).
#   scripts/docs.sh                 every public module
#   scripts/docs.sh MODULE…         only these
# The archives are written to .build/plugins/Swift-DocC/outputs/MODULE.doccarchive.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
  modules=(TrustEvaluatorCore TrustEvaluatorFormats ServerTrust ServerTrustFoundation TrustEvaluatorNIO TrustEvaluatorGRPC PincheckAsyncHTTPClient PincheckVapor PincheckHummingbird)
fi
failed=()
for module in "${modules[@]}"; do
  log=$(mktemp)
  # --enable-all-traits goes before the plugin's name: after it, it would be handed to docc.
  if swift package --enable-all-traits --disable-sandbox generate-documentation --target "$module" --warnings-as-errors >"$log" 2>&1; then
    echo "docs.sh: $module: built, no warnings"
  else
    grep -E '^(error|warning):|^ *--> ' "$log" | grep -v 'NSCocoaErrorDomain' >&2 || tail -20 "$log" >&2
    failed+=("$module")
  fi
  rm -f "$log"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "docs.sh: documentation warnings in: ${failed[*]}" >&2
  exit 1
fi
