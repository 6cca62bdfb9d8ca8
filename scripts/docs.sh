#!/usr/bin/env bash
# Builds the DocC catalogue of every library module with warnings as errors (a broken symbol
# link, an undocumented parameter in a documented list, an article that is not found).
#   scripts/docs.sh                 every public module
#   scripts/docs.sh MODULE…         only these
# They are combined into one static site, .build/docs-site (DocC's static-hosting layout: any
# file server serves it, e.g. `python3 -m http.server -d .build/docs-site`, then open
# /documentation/), with a page per module under documentation/MODULE/. One plugin run builds
# them all: the package is built and its symbol graphs extracted once, not once per module.
#   DOCS_SITE=DIR scripts/docs.sh   the site in DIR instead
#   DOCS_BASE_PATH=pincheck         the path the site is served under (e.g. a project page's)
set -euo pipefail
cd "$(dirname "$0")/.."

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
  modules=(TrustEvaluatorCore TrustEvaluatorFormats ServerTrust ServerTrustFoundation TrustEvaluatorNIO TrustEvaluatorGRPC PincheckAsyncHTTPClient PincheckVapor PincheckHummingbird)
fi
site=${DOCS_SITE:-.build/docs-site}
targets=()
for module in "${modules[@]}"; do targets+=(--target "$module"); done
rm -rf "$site"  # so the pages checked below are this run's
hosting=(--transform-for-static-hosting)
[ -z "${DOCS_BASE_PATH:-}" ] || hosting+=(--hosting-base-path "$DOCS_BASE_PATH")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# --enable-all-traits goes before the plugin's name: after it, it would be handed to docc.
if swift package --enable-all-traits --disable-sandbox generate-documentation "${targets[@]}" --warnings-as-errors \
     --enable-experimental-combined-documentation "${hosting[@]}" --output-path "$site" >"$log" 2>&1; then
  for module in "${modules[@]}"; do
    page="$site/documentation/$(echo "$module" | tr '[:upper:]' '[:lower:]')/index.html"
    [ -f "$page" ] || { echo "docs.sh: $module: no page at $page" >&2; exit 1; }
    echo "docs.sh: $module: built, no warnings"
  done
  echo "docs.sh: the site is $site (serve it: python3 -m http.server -d $site, then open /documentation/)"
else
  grep -E '^(error|warning):|^ *--> |Generating documentation for' "$log" | grep -v 'NSCocoaErrorDomain' >&2 || tail -20 "$log" >&2
  echo "docs.sh: documentation warnings or errors (the module is named above each)" >&2
  exit 1
fi
