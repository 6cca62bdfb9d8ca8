#!/usr/bin/env bash
# Regenerates the bundled root-program data (Sources/TrustEvaluatorCore/Generated/BundledRootPrograms.swift)
# from the root programs' files: Mozilla's certdata.txt, the CCADB's records, Chrome Root Store's constraints.
# Run on demand when the files change (not in CI). The revisions name where each file came from; update them
# with the files (../shared/rootstores/README.md lists the current ones).
#
#   scripts/generate-root-programs.sh [ROOTSTORES_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-${PINCHECK_SHARED:-../shared}/rootstores}"
for file in nss-certdata.txt ccadb-records.jsonl chrome-root-store-v17-constraints.json; do
    [[ -f "$dir/$file" ]] || { echo "generate-root-programs: $dir/$file is missing" >&2; exit 2; }
done
swift build --product pincheck-generate-root-programs >/dev/null
bin="$(swift build --product pincheck-generate-root-programs --show-bin-path)/pincheck-generate-root-programs"
out=Sources/TrustEvaluatorCore/Generated/BundledRootPrograms.swift
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
"$bin" "$dir/nss-certdata.txt" "$dir/ccadb-records.jsonl" "$dir/chrome-root-store-v17-constraints.json" \
    --revision "nss-certdata=nss-dev/nss 9d75dfde2e791c38fdf5ea7f3da9609c46d8a4f8 (2026-05-01)" \
    --revision "ccadb=mcpherrinm/pki-data aca3e87ef614dcd86c8eb535ef947f7c2236df38 (2026-08-22)" \
    --revision "chrome-root-store=v17 c076418dc96836106b8e93b3456fb9f97253dd39" \
    > "$tmp"
mv "$tmp" "$out"
echo "generate-root-programs: wrote $out ($(wc -c < "$out") bytes)"
