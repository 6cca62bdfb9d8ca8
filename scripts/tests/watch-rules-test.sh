#!/usr/bin/env bash
# The shipped alerting rules and the exposition, judged by Prometheus's own tool (promtool, from
# Debian's prometheus package, installed when missing):
#   - promtool check rules docs/examples/pincheck-watch-alerts.yml: the rules parse;
#   - promtool test rules docs/examples/pincheck-watch-alerts.test.yml: every rule fires and stays
#     quiet when it should, with its $value and summary text;
#   - promtool check metrics on a live scrape of the built pincheck-watch (one host reached, an
#     openssl s_server on 127.0.0.1 serving the test PKI's leaf, so every certificate gauge is
#     served; one that refuses connections): no lint line (a missing HELP, a bad name, a unit
#     that is not a base unit) for what it serves.
#   scripts/tests/watch-rules-test.sh [PINCHECK_WATCH]   (default .build/debug/pincheck-watch)
set -euo pipefail
cd "$(dirname "$0")/../.."
watch_binary=${1:-.build/debug/pincheck-watch}
if ! command -v promtool >/dev/null 2>&1; then
  echo "==> installing prometheus (for promtool)"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends prometheus >/dev/null \
    || { $sudo apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends prometheus >/dev/null; }
fi
(cd docs/examples && promtool check rules pincheck-watch-alerts.yml && promtool test rules pincheck-watch-alerts.test.yml)

work=$(mktemp -d)
pid=
server=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; [ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
printf '{"version":1,"anchors":["%s"],"hosts":[{"pattern":"www.example.test","pins":["sha256/%s","sha256/%s"]}]}\n' \
  "$PWD/Certificates/rsa-root.pem" "$(printf 'A%.0s' $(seq 43))=" "$(printf 'B%.0s' $(seq 42))A=" > "$work/config.json"
tls_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
openssl s_server -quiet -accept "127.0.0.1:$tls_port" -cert Certificates/rsa-leaf.pem -key Certificates/keys/rsa-leaf.key \
  -cert_chain Certificates/rsa-intermediate.pem -naccept 1000 < /dev/null > /dev/null 2>&1 &
server=$!
printf 'www.example.test 127.0.0.1:%s\nwww.example.test 127.0.0.1:9\n' "$tls_port" > "$work/hosts.txt"
"$watch_binary" "$work/config.json" --hosts "$work/hosts.txt" --interval 1 --timeout 1 --listen 127.0.0.1:0 2> "$work/watch.err" &
pid=$!
url=
for _ in $(seq 200); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$work/watch.err" || true)
  [ -n "$url" ] && curl -sf "$url" | grep -q pincheck_watch_leaf_lifetime_seconds && break
  sleep 0.1
done
[ -n "$url" ] || { echo "watch-rules-test: the watch did not start" >&2; cat "$work/watch.err" >&2; exit 1; }
curl -sf "$url" > "$work/metrics"
grep -q '^pincheck_watch_leaf_lifetime_seconds' "$work/metrics" \
  || { echo "watch-rules-test: the reached host's certificate gauges are not served" >&2; cat "$work/metrics" "$work/watch.err" >&2; exit 1; }
lint=$(promtool check metrics < "$work/metrics" 2>&1 || true)
if [ -n "$lint" ]; then
  echo "watch-rules-test: promtool check metrics found:" >&2
  echo "$lint" >&2
  exit 1
fi
echo "watch-rules-test: rules checked and unit-tested; $(grep -c '^# HELP' "$work/metrics") metrics served, each with HELP, no lint"
