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
swift package diagnose-api-breaking-changes "$baseline" \
  --products TrustEvaluator ServerTrust ServerTrustFoundation TrustEvaluatorNIO TrustEvaluatorGRPC \
  --baseline-dir api/digests --breakage-allowlist-path api/allowed-breaks.txt
