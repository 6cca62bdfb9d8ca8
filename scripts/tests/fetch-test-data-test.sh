#!/usr/bin/env bash
# scripts/fetch-test-data.sh against a mirror served here (python3 -m http.server on 127.0.0.1,
# an ephemeral port): a dataset made for the test, with its own manifest, so the test needs
# neither ../shared nor the network. A good archive is kept; a tampered one, one with a member
# outside its folder, one with a link, one over its download budget, one that unpacks beyond its
# size (also behind an owner name with a space, which shifts `tar -tv`'s columns) and a missing
# one are refused, each leaving nothing behind, not even an empty destination. A folder a killed
# run left half-moved is verified and fetched again; two runs at once leave one copy.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
server=
cleanup() { [ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# The dataset, its manifest, and its archive made by `pack`.
mkdir -p "$work/shared/sample/sub"
printf 'one\n' > "$work/shared/sample/a.txt"
printf 'two\n' > "$work/shared/sample/sub/b.txt"
digest=$(cd "$work/shared/sample" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
printf 'sample\t2\t8\t%s\ta dataset made by the test\n' "$digest" > "$work/manifest"
export PINCHECK_DATA_MANIFEST="$work/manifest"
PINCHECK_SHARED="$work/shared" scripts/fetch-test-data.sh pack "$work/mirror" > /dev/null
cp -r "$work/mirror" "$work/good"

python3 -m http.server 0 --bind 127.0.0.1 --directory "$work/mirror" > "$work/server.log" 2>&1 &
server=$!
port=
for _ in $(seq 100); do
  port=$(grep -Eo 'port [0-9]+' "$work/server.log" | grep -Eo '[0-9]+' | head -1 || true)
  [ -z "$port" ] || break
  sleep 0.1
done
[ -n "$port" ] || { echo "fetch-test-data-test: the mirror did not start" >&2; exit 1; }
export PINCHECK_DATA_URL="http://127.0.0.1:$port"

fails=0
expect() { # name, wanted exit status, what must be left in the destination (yes/no)
  local status=0
  PINCHECK_DATA_DIR="$work/dest" scripts/fetch-test-data.sh sample > "$work/out" 2>&1 || status=$?
  local kept=no; [ -d "$work/dest/sample" ] && kept=yes
  # Nothing kept means nothing at all: no empty destination folder, no scratch, no lock.
  if [ "$kept" = no ] && [ -e "$work/dest" ] && [ -z "${KEEP_DEST:-}" ]; then kept="no, but $(ls -A "$work/dest" | tr '\n' ' ')left in $work/dest"; fi
  if [ "$status" = "$2" ] && [ "$kept" = "$3" ]; then
    echo "fetch-test-data-test: $1: exit $status, kept $kept: $(tail -1 "$work/out")"
  else
    echo "fetch-test-data-test: FAILED $1: exit $status (wanted $2), kept $kept (wanted $3):" >&2
    cat "$work/out" >&2
    fails=$((fails + 1))
  fi
  rm -rf "$work/dest"
}
repack() { # folder → the served archive
  tar -C "$1" -czf "$work/mirror/sample.tar.gz" .
}

expect "a good archive is verified and kept" 0 yes
grep -q 'digest verified' "$work/out" || { echo "fetch-test-data-test: FAILED the good archive was not reported verified" >&2; fails=$((fails + 1)); }

mkdir -p "$work/tampered" && tar -C "$work/tampered" -xzf "$work/good/sample.tar.gz"
printf 'twO\n' > "$work/tampered/sub/b.txt"
repack "$work/tampered"
expect "a tampered file is refused" 1 no
grep -q 'content digest' "$work/out" || { echo "fetch-test-data-test: FAILED the refusal does not name the digest" >&2; fails=$((fails + 1)); }

mkdir -p "$work/escape/inner" && printf 'one\n' > "$work/escape/a.txt" && printf 'two\n' > "$work/escape/inner/b.txt"
tar -P -C "$work/escape/inner" -czf "$work/mirror/sample.tar.gz" ../a.txt b.txt
expect "a member outside the folder is refused" 1 no

mkdir -p "$work/linked" && tar -C "$work/linked" -xzf "$work/good/sample.tar.gz" && ln -s /etc/passwd "$work/linked/sub/link"
repack "$work/linked"
expect "a symbolic link is refused" 1 no

mkdir -p "$work/large" && tar -C "$work/large" -xzf "$work/good/sample.tar.gz"
head -c 2000000 /dev/urandom > "$work/large/sub/b.txt"
repack "$work/large"
expect "an archive over its size budget is refused" 1 no

mkdir -p "$work/bomb" && tar -C "$work/bomb" -xzf "$work/good/sample.tar.gz"
head -c 2000000 /dev/zero > "$work/bomb/sub/b.txt"
repack "$work/bomb"
expect "a small archive that unpacks beyond its size is refused before unpacking" 1 no
grep -q 'more than the manifest' "$work/out" || { echo "fetch-test-data-test: FAILED the size refusal does not name the size" >&2; fails=$((fails + 1)); }

mkdir -p "$work/owner" && tar -C "$work/owner" -xzf "$work/good/sample.tar.gz"
head -c 2000000 /dev/zero > "$work/owner/sub/b.txt"
tar -C "$work/owner" --owner='evil user:0' --group='some group:0' -czf "$work/mirror/sample.tar.gz" .
expect "an owner name with a space does not void the size budget" 1 no
grep -q 'more than the manifest' "$work/out" || { echo "fetch-test-data-test: FAILED the size refusal behind an odd owner name does not name the size" >&2; fails=$((fails + 1)); }

cp "$work/good/sample.tar.gz" "$work/mirror/sample.tar.gz"
# A run killed during the move: one of the two files there, no marker. Verified, found short, fetched again.
mkdir -p "$work/dest/sample" && printf 'one\n' > "$work/dest/sample/a.txt"
expect "a folder a killed run left is verified and fetched again" 0 yes
# Two runs at once: one waits for the other's lock; one copy, no copy nested in another.
( PINCHECK_DATA_DIR="$work/dest" scripts/fetch-test-data.sh sample > "$work/out1" 2>&1; echo $? > "$work/status1" ) &
first=$!
( PINCHECK_DATA_DIR="$work/dest" scripts/fetch-test-data.sh sample > "$work/out2" 2>&1; echo $? > "$work/status2" ) &
second=$!
wait "$first" "$second"
nested=$(find "$work/dest" -mindepth 2 -name sample | wc -l)
if [ "$(cat "$work/status1")$(cat "$work/status2")" = 00 ] && [ "$nested" = 0 ] && \
   [ "$(cd "$work/dest/sample" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)" = "$digest" ]; then
  echo "fetch-test-data-test: two runs at once: both exit 0, one verified copy"
else
  echo "fetch-test-data-test: FAILED two runs at once: exits $(cat "$work/status1") $(cat "$work/status2"), $nested nested copies" >&2
  cat "$work/out1" "$work/out2" >&2
  fails=$((fails + 1))
fi
rm -rf "$work/dest"
scripts/fetch-test-data.sh --help | grep -q 'PINCHECK_DATA_URL' || { echo "fetch-test-data-test: FAILED --help" >&2; fails=$((fails + 1)); }

rm -f "$work/mirror/sample.tar.gz"
expect "a dataset the mirror does not have is refused" 1 no

cp "$work/good/sample.tar.gz" "$work/mirror/sample.tar.gz"
PINCHECK_DATA_URL= expect "without PINCHECK_DATA_URL nothing is fetched" 3 no

[ "$fails" = 0 ] || { echo "fetch-test-data-test: $fails failed" >&2; exit 1; }
echo "fetch-test-data-test: 12 cases passed"
