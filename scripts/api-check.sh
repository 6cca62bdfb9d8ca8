#!/usr/bin/env bash
# Fails when the public API of the library products breaks against the baseline release:
#   scripts/api-check.sh               compare with the commit api/baseline names
#   API_BASELINE=REV scripts/api-check.sh   compare with another revision (its digests are made
#                                            in api/digests/REV by checking it out and building it)
# A removal or rename must first ship deprecated (@available(*, deprecated, renamed:)) for a
# release; a break that is meant anyway is listed, word for word as the tool prints it, in
# api/allowed-breaks.txt — a deliberate, reviewed step, as moving api/baseline is.
set -euo pipefail
cd "$(dirname "$0")/.."

baseline=${API_BASELINE:-$(awk '!/^#/ && NF { print $1; exit }' api/baseline)}
[ -n "$baseline" ] || { echo "api-check.sh: api/baseline names no commit" >&2; exit 1; }
git cat-file -e "$baseline^{commit}" 2>/dev/null || { echo "api-check.sh: baseline $baseline is not in this repository's history" >&2; exit 1; }
echo "api-check.sh: public API of the library products against $baseline ($(awk '!/^#/ && NF { print $2; exit }' api/baseline))"
# Every library product is held to the baseline from the release that first has it: the trait
# products (PincheckAsyncHTTPClient, PincheckVapor, PincheckHummingbird) are compared once the
# baseline's digests include them (api/digests/COMMIT/PRODUCT.json, made when the baseline moves).
digested=(ServerTrust ServerTrustFoundation TrustEvaluatorNIO TrustEvaluatorGRPC)
mapped=(TrustEvaluator=TrustEvaluatorCore+TrustEvaluatorFormats ServerTrust=ServerTrust ServerTrustFoundation=ServerTrustFoundation
        TrustEvaluatorNIO=TrustEvaluatorNIO TrustEvaluatorGRPC=TrustEvaluatorGRPC)
not_yet=()
for product in PincheckAsyncHTTPClient PincheckVapor PincheckHummingbird; do
  if [ -f "api/digests/$baseline/$product.json" ]; then
    digested+=("$product"); mapped+=("$product=$product")
  else
    not_yet+=("$product")
  fi
done
if [ ${#not_yet[@]} -gt 0 ]; then
  echo "api-check.sh: not in the baseline release, compared from the first baseline that has them: ${not_yet[*]}"
fi
# The baseline's API digests are committed in api/digests/COMMIT/ (made once, with
# --regenerate-baseline, when the baseline moves): the check then builds only the current tree,
# which scripts/test.sh has already built, instead of checking out and building the baseline.
#
# The tool compares `package` declarations too (the digests mark them "isInternal"): they are
# shared between this package's modules, not promised to users, and move freely. The check runs
# against a copy of the baseline's digests with those declarations taken out, so only the
# public API is held to the baseline.
public_digests=$(mktemp -d)
trap 'rm -rf "$public_digests"' EXIT
mkdir -p "$public_digests/$baseline"
for digest in api/digests/"$baseline"/*.json; do
  python3 scripts/lib/api-compare.py --public-only "$digest" "$public_digests/$baseline/$(basename "$digest")"
done
# SwiftPM (6.2 on) no longer hands --breakage-allowlist-path to the digester, so the allowed
# breaks are taken out here: every "API breakage:" line it prints must be listed word for word.
report=$(mktemp)
trap 'rm -rf "$public_digests" "$report"' EXIT
swift package diagnose-api-breaking-changes --enable-all-traits "$baseline" \
  --products "${digested[@]}" \
  --baseline-dir "$public_digests" --breakage-allowlist-path api/allowed-breaks.txt > "$report" 2>&1 || true
grep -v '^\[' "$report" | grep -E 'API breakage:|breaking change|error:' || true
grep -q -E 'No breaking changes detected|breaking changes? detected' "$report" || { cat "$report" >&2; echo "api-check.sh: the API comparison did not run" >&2; exit 1; }
unannounced=$(grep -o 'API breakage: .*' "$report" | grep -v -x -F -f <(grep -v '^#' api/allowed-breaks.txt | sed '/^$/d') || true)
if [ -n "$unannounced" ]; then
  echo "api-check.sh: unannounced API breaks:" >&2
  echo "$unannounced" >&2
  exit 1
fi

# What the tool cannot see, with the digester it runs: TrustEvaluator, whose module re-exports
# TrustEvaluatorCore and TrustEvaluatorFormats (its API is theirs, merged), and a public
# declaration made `package` (taken out of both sides, so it is a removal). scripts/lib/api-compare.py.
echo "api-check.sh: every product as its users see it, public declarations only"
digester="$(dirname "$(readlink -f "$(command -v swift)")")/swift-api-digester"
modules_dir="$(swift build --enable-all-traits --show-bin-path)/Modules"
dump_args=$(mktemp)
trap 'rm -rf "$public_digests" "$report" "$dump_args"' EXIT
{
  printf '%s\n' -sdk / -module-cache-path "$(swift build --enable-all-traits --show-bin-path)/api-digester-cache" -I "$modules_dir" -I Sources/COpenSSL
  # The C modules of the dependencies (NIOSSL's BoringSSL and others): their module maps.
  { find "$(swift build --enable-all-traits --show-bin-path)" -maxdepth 2 -name module.modulemap
    find .build/checkouts -name module.modulemap -not -path '*/Tests/*'; } | sed 's/^/-Xcc\n-fmodule-map-file=/'
} > "$dump_args"
python3 scripts/lib/api-compare.py "$digester" "api/digests/$baseline" api/allowed-breaks.txt "$dump_args" "${mapped[@]}"
echo "api-check.sh: no unannounced break"
