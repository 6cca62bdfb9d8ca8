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
  python3 - "$digest" "$public_digests/$baseline/$(basename "$digest")" <<'PY'
import json, sys

def public(node):
    if isinstance(node, dict):
        if node.get("isInternal"):
            return None
        return {key: public(value) for key, value in node.items()}
    if isinstance(node, list):
        return [kept for kept in (public(child) for child in node) if kept is not None]
    return node

with open(sys.argv[1]) as source:
    digest = json.load(source)
with open(sys.argv[2], "w") as target:
    json.dump(public(digest), target)
PY
done
swift package diagnose-api-breaking-changes --enable-all-traits "$baseline" \
  --products TrustEvaluator ServerTrust ServerTrustFoundation TrustEvaluatorNIO TrustEvaluatorGRPC \
  --baseline-dir "$public_digests" --breakage-allowlist-path api/allowed-breaks.txt

# The tool sees a public declaration made `package` as still there: check that every public
# declaration of the baseline is still public, in the current public symbol graphs.
echo "api-check.sh: every public declaration of $baseline is still public"
swift package dump-symbol-graph --enable-all-traits --minimum-access-level public --skip-synthesized-members >/dev/null
python3 scripts/lib/public-api-kept.py "api/digests/$baseline" "$(swift build --enable-all-traits --show-bin-path)/../symbolgraph" \
  TrustEvaluator ServerTrust ServerTrustFoundation TrustEvaluatorNIO TrustEvaluatorGRPC
echo "api-check.sh: no unannounced break"
