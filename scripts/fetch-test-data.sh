#!/usr/bin/env bash
# The third-party test data (scripts/test-data.manifest, docs/test-data.md), fetched and verified.
#   scripts/fetch-test-data.sh [DATASET…]   fetch the missing datasets (all when none is named)
#                                           into PINCHECK_DATA_DIR (default .test-data, git-ignored)
#   scripts/fetch-test-data.sh pack DIR     write DIR/DATASET.tar.gz for every dataset of
#                                           PINCHECK_SHARED (default ../shared) whose digest is
#                                           the manifest's: what a mirror serves
#   scripts/fetch-test-data.sh --help       this text
# Where from: PINCHECK_DATA_URL, a base URL (https://, http:// or file://) serving
# DATASET.tar.gz. Unset, nothing is fetched and the script says so (exit 3). The network is not
# trusted: an archive is unpacked into a scratch folder inside the destination, and renamed into
# place only when every member is a plain relative path (no "..", no link, no device; read with
# Python's tarfile, not from `tar -tv`'s columns), its size and file count are within the
# manifest's, and its content digest is the manifest's; otherwise nothing of it is kept (exit 1).
# A dataset counts as there only with the marker .DATASET.verified beside it, holding the
# manifest's digest and written after the rename: a folder left by a killed run is verified again
# (its digest computed) and, when it does not verify, fetched anew. One run at a time per
# destination (a lock, waited for up to PINCHECK_DATA_TIMEOUT).
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

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
case "${1:-}" in -*) echo "fetch-test-data.sh: unknown option $1 (--help)" >&2; exit 2 ;; esac

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

# A dataset is there when its marker holds the manifest's digest, or (a folder a killed run left,
# or one put there by hand) when its content digest is the manifest's: the marker is then written.
verified() {
  local dataset=$1 expected
  expected=$(field "$dataset" 4)
  [ -d "$destination/$dataset" ] || return 1
  [ "$(cat "$destination/.$dataset.verified" 2>/dev/null)" = "$expected" ] && return 0
  [ "$(digest_of "$destination/$dataset")" = "$expected" ] || return 1
  echo "$expected" > "$destination/.$dataset.verified"
}

made_destination=no
[ -d "$destination" ] || made_destination=yes
mkdir -p "$destination"
scratch=
cleanup() {
  [ -z "$scratch" ] || rm -rf "$scratch"
  # A run that fetched nothing leaves no empty folder behind.
  if [ "$made_destination" = yes ]; then rm -f "$destination/.fetch.lock"; rmdir "$destination" 2>/dev/null || true; fi
}
trap cleanup EXIT
exec 9> "$destination/.fetch.lock"
flock -w "${PINCHECK_DATA_TIMEOUT:-600}" 9 || { echo "fetch-test-data.sh: another fetch into $destination holds its lock" >&2; exit 1; }

missing=()
for dataset in "${asked[@]}"; do
  verified "$dataset" || missing+=("$dataset")
done
[ ${#missing[@]} -gt 0 ] || { echo "fetch-test-data.sh: ${asked[*]}: already in $destination, verified"; exit 0; }
if [ -z "${PINCHECK_DATA_URL:-}" ]; then
  echo "fetch-test-data.sh: ${missing[*]} missing from $destination and PINCHECK_DATA_URL is not set: nothing fetched (scripts/test-data.manifest names each dataset's source)" >&2
  exit 3
fi

# Inside the destination: the final move is a rename on one filesystem, never a copy a kill can cut.
scratch=$(mktemp -d "$destination/.fetch.XXXXXX")
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
  python3 - "$archive" "$files" "$bytes" > "$scratch/why" <<'PY' || refuse "$dataset" "$(head -1 "$scratch/why")"
import sys, tarfile
archive, files, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
count = total = 0
try:
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            if member.name.startswith("/") or ".." in parts:
                sys.exit(print(f"a member outside the folder: {member.name}") or 1)
            if not (member.isfile() or member.isdir()):
                sys.exit(print(f"a member that is not a file or a folder: {member.name}") or 1)
            if member.isfile():
                count += 1
                total += member.size
            if count > files:
                sys.exit(print(f"{count} files, more than the manifest's {files}") or 1)
            if total > size:
                sys.exit(print(f"{total} bytes, more than the manifest's {size}") or 1)
except (tarfile.TarError, OSError, EOFError) as error:
    sys.exit(print(f"not a gzip'd tar archive ({error})") or 1)
PY
  mkdir "$scratch/$dataset"
  tar -C "$scratch/$dataset" --no-same-owner --no-same-permissions -xzf "$archive" || refuse "$dataset" "the archive did not unpack"
  actual=$(digest_of "$scratch/$dataset")
  [ "$actual" = "$expected" ] || refuse "$dataset" "content digest $actual, the manifest says $expected"
  # A folder that did not verify (a killed run's) goes; then the verified one is renamed in.
  rm -f "$destination/.$dataset.verified"
  if [ -e "$destination/$dataset" ]; then mv "$destination/$dataset" "$scratch/$dataset.old"; fi
  mv "$scratch/$dataset" "$destination/$dataset"
  echo "$expected" > "$destination/.$dataset.verified"
  made_destination=no
  echo "fetch-test-data.sh: $dataset: fetched from $url, $files files, digest verified"
done
