#!/usr/bin/env bash
# The third-party test data (scripts/test-data.manifest, docs/test-data.md), fetched and verified.
#   scripts/fetch-test-data.sh [DATASET…]   fetch the missing datasets (all when none is named)
#                                           into PINCHECK_DATA_DIR (default .test-data, git-ignored)
#   scripts/fetch-test-data.sh pack DIR     write DIR/DATASET.tar.gz for every dataset of
#                                           PINCHECK_SHARED (default ../shared) whose digest is
#                                           the manifest's: what a mirror serves
# Where from: PINCHECK_DATA_URL, a base URL (https://, http:// or file://) serving
# DATASET.tar.gz. Unset, nothing is fetched and the script says so (exit 3). The network is not
# trusted: an archive is unpacked into a scratch folder, and kept only when every name in it is a
# plain relative path (no "..", no link, no device), its size and file count are within the
# manifest's, and its content digest is the manifest's; otherwise nothing of it is kept (exit 1).
# Budgets: the manifest's size plus 1 MiB per download, PINCHECK_DATA_TIMEOUT seconds (default
# 600) per download, 10 s to connect, redirects to 3 hops.
# Exit: 0 every asked dataset is there and verified, 1 a download was refused, 2 bad usage,
# 3 no PINCHECK_DATA_URL.
set -euo pipefail
cd "$(dirname "$0")/.."
manifest=${PINCHECK_DATA_MANIFEST:-scripts/test-data.manifest}
destination=${PINCHECK_DATA_DIR:-.test-data}

entries() { grep -v '^#' "$manifest" | sed '/^$/d'; }
field() { entries | awk -F'\t' -v d="$1" -v f="$2" '$1 == d { print $f }'; }
digest_of() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1); }

if [ "${1:-}" = pack ]; then
  [ -n "${2:-}" ] || { echo "usage: scripts/fetch-test-data.sh pack DIR" >&2; exit 2; }
  shared=${PINCHECK_SHARED:-$(cd .. && pwd)/shared}
  mkdir -p "$2"
  for dataset in $(entries | cut -f1); do
    [ -d "$shared/$dataset" ] || { echo "pack: $dataset: not in $shared, skipped"; continue; }
    actual=$(digest_of "$shared/$dataset")
    [ "$actual" = "$(field "$dataset" 4)" ] || { echo "pack: $dataset: digest $actual is not the manifest's; not packed" >&2; exit 1; }
    tar -C "$shared/$dataset" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -czf "$2/$dataset.tar.gz" .
    echo "pack: $2/$dataset.tar.gz"
  done
  exit 0
fi

asked=("$@")
[ ${#asked[@]} -gt 0 ] || mapfile -t asked < <(entries | cut -f1)
for dataset in "${asked[@]}"; do
  [ -n "$(field "$dataset" 1)" ] || { echo "fetch-test-data.sh: no dataset '$dataset' in $manifest" >&2; exit 2; }
done

missing=()
for dataset in "${asked[@]}"; do
  [ -d "$destination/$dataset" ] || missing+=("$dataset")
done
[ ${#missing[@]} -gt 0 ] || { echo "fetch-test-data.sh: ${asked[*]}: already in $destination"; exit 0; }
if [ -z "${PINCHECK_DATA_URL:-}" ]; then
  echo "fetch-test-data.sh: ${missing[*]} missing from $destination and PINCHECK_DATA_URL is not set: nothing fetched (scripts/test-data.manifest names each dataset's source)" >&2
  exit 3
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$destination"
refuse() { echo "fetch-test-data.sh: $1: $2; nothing of it is kept" >&2; exit 1; }
for dataset in "${missing[@]}"; do
  files=$(field "$dataset" 2); bytes=$(field "$dataset" 3); expected=$(field "$dataset" 4)
  archive="$scratch/$dataset.tar.gz"
  url="${PINCHECK_DATA_URL%/}/$dataset.tar.gz"
  curl --fail --silent --show-error --location --max-redirs 3 --proto '=https,http,file' \
    --connect-timeout 10 --max-time "${PINCHECK_DATA_TIMEOUT:-600}" --max-filesize $((bytes + 1048576)) \
    --output "$archive" "$url" || refuse "$dataset" "the download from $url failed or exceeded its budget"
  [ "$(stat -c %s "$archive")" -le $((bytes + 1048576)) ] || refuse "$dataset" "the archive is larger than its budget"
  # Every member: a plain relative path, a file or a folder; sizes and count within the manifest's.
  listing=$(tar -tvzf "$archive" 2>/dev/null) || refuse "$dataset" "not a gzip'd tar archive"
  awk -v files="$files" -v bytes="$bytes" '
    { type = substr($1, 1, 1); name = $6; for (i = 7; i <= NF; i++) name = name " " $i }
    type != "-" && type != "d" { print "a member that is not a file or a folder: " name; bad = 1 }
    name ~ /^\// || name ~ /(^|\/)\.\.(\/|$)/ { print "a member outside the folder: " name; bad = 1 }
    type == "-" { count++; total += $3 }
    END {
      if (count > files) { print count " files, more than the manifest'"'"'s " files; bad = 1 }
      if (total > bytes) { print total " bytes, more than the manifest'"'"'s " bytes; bad = 1 }
      exit bad
    }' <<<"$listing" > "$scratch/why" || refuse "$dataset" "$(head -1 "$scratch/why")"
  mkdir "$scratch/$dataset"
  tar -C "$scratch/$dataset" --no-same-owner --no-same-permissions -xzf "$archive" || refuse "$dataset" "the archive did not unpack"
  actual=$(digest_of "$scratch/$dataset")
  [ "$actual" = "$expected" ] || refuse "$dataset" "content digest $actual, the manifest says $expected"
  mv "$scratch/$dataset" "$destination/$dataset"
  echo "fetch-test-data.sh: $dataset: fetched from $url, $files files, digest verified"
done
