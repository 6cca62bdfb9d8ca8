#!/usr/bin/env bash
# Benchmarks, printed as ratios against baselines measured in the same run (never judged by the
# tests; CI only builds the benchmark and runs it once in --quick mode as a smoke test):
#   1. live checks, whole process:
#      - `pincheck check` against a local server, versus `curl --pinnedpubkey` and
#        `openssl s_client -verify_hostname -verify_return_error` on the same server;
#      - `pincheck scan` over N local endpoints, versus `xargs -P N curl --pinnedpubkey` on the same list;
#   2. evaluation (pincheck-bench, release): Pincheck's evaluation against OpenSSL called directly
#      from C on the same chains, the caches, threads, allocations, memory, and `pincheck verify`
#      against `openssl verify` as whole processes. Its four summary ratios are the last lines.
#   3. handshakes (pincheck-handshake-bench, release): full TLS 1.3 handshakes from a NIO client
#      to a local NIO server, NIOSSL's own verification against Pincheck's callback (public-key
#      pin, certificate and verdict caches), evaluated on the event loop and on a Task, rounds
#      interleaved; its last line is `ratio pincheck-handshake/niossl-handshake`.
#   RUNS=20 N=8 scripts/bench.sh          all parts
#   4. stacks (pincheck-stack-bench, release): AsyncHTTPClient requests pinned by
#      PincheckAsyncHTTPClient against AHC trusting the same root (a new connection per request,
#      and a reused one), and mTLS handshakes judged by PincheckClientCertificateVerifier against
#      NIOSSL's own client-certificate verification, and two SPIFFE trust domains against one flat
#      anchor set (issue 44); its last four lines are ratios.
#   5. scan throughput (BENCH=throughput, not in "all"): handshakes per second per core. The
#      local farm (N openssl s_server) runs on the last core, the client on core 0 (taskset): a
#      list of HANDSHAKES (default 3000) entries over the farm through `pincheck scan` (pinned,
#      --concurrency N), against `xargs -P N curl --pinnedpubkey` over HANDSHAKES/5 entries and
#      `openssl s_time -new` (one process, sequential full handshakes, no name or pin check) for
#      10 s, each on the same core. Its last lines are ratios.
#   6. the metrics server under hostile peers (BENCH=watch, not in "all"): a release pincheck-watch,
#      then scripts/watch-load.py: 50,000 pipelined requests never read, and 300 slow connections;
#      resident memory after each (budget 64 MiB) and a normal scrape's time beside them.
#   BENCH=evaluation scripts/bench.sh     only part 2 (BENCH=live: only part 1, BENCH=handshake: only
#                                         part 3, BENCH=stack: only part 4, BENCH=throughput: part 5)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
RUNS=${RUNS:-20}
N=${N:-8}
BENCH=${BENCH:-all}

# Release builds as the command would ship: the Swift runtime and Foundation linked in
# (--static-swift-stdlib), which starts several times faster than loading them as shared libraries.
handshake() {
  echo
  echo "== handshakes: pincheck-handshake-bench"
  swift build -c release --product pincheck-handshake-bench >&2
  .build/release/pincheck-handshake-bench --certificates Certificates ${QUICK:+--quick}
}
stack() {
  echo
  echo "== stacks: pincheck-stack-bench"
  swift build -c release --enable-all-traits --product pincheck-stack-bench >&2
  .build/release/pincheck-stack-bench --certificates Certificates ${QUICK:+--quick}
}
watch_load() {
  echo
  echo "== pincheck-watch's /metrics under hostile peers: scripts/watch-load.py"
  swift build -c release --static-swift-stdlib --product pincheck-watch >&2
  local work pin pid port
  work=$(mktemp -d)
  pin=$(openssl x509 -in Certificates/rsa-leaf.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
  printf '{"version":1,"anchors":["%s"],"hosts":[{"pattern":"www.example.test","pins":["sha256/%s"]}]}\n' \
    "$PWD/Certificates/rsa-root.pem" "$pin" > "$work/config.json"
  # Nothing listens on port 9: each round is one quick network failure, and /metrics has series.
  echo "www.example.test 127.0.0.1:9" > "$work/hosts.txt"
  .build/release/pincheck-watch "$work/config.json" --hosts "$work/hosts.txt" --interval 1 --timeout 1 \
    --listen 127.0.0.1:0 2> "$work/watch.err" &
  pid=$!
  for _ in $(seq 100); do
    port=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$work/watch.err" | grep -o ':[0-9]*/' | tr -d ':/' || true)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$work/watch.err" >&2; kill "$pid"; return 1; }
  python3 scripts/watch-load.py --port "$port" --pid "$pid" --pipelined 50000 --slow 300 --budget-mib 64 || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
if [ "$BENCH" = watch ]; then watch_load; exit 0; fi
if [ "$BENCH" = handshake ]; then handshake; exit 0; fi
if [ "$BENCH" = stack ]; then stack; exit 0; fi

echo "==> release build of pincheck and pincheck-bench (--static-swift-stdlib)" >&2
[ "$BENCH" = throughput ] || swift build -c release --static-swift-stdlib --product pincheck-bench >&2
# The command as users install it (scripts/install.sh: the same release build, stripped), so the
# whole-process figures are the installed binary's.
installed=$(mktemp -d)
trap 'rm -rf "$installed"' EXIT
DESTDIR="$installed" scripts/install.sh /usr >&2
pincheck=$installed/usr/bin/pincheck

# A CRL of 100,000 entries from rsa-intermediate (openssl ca), for the one-off cost of parsing and
# indexing a large CRL; `openssl crl -noout` reads the same file as a whole process.
big_crl() {
  local dir=$1 i
  python3 - "$dir/index.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as index:
    for n in range(100_000):
        index.write(f"R\t991231235959Z\t300101000000Z,keyCompromise\t{0x10000000 + n:X}\tunknown\t/CN=revoked {n}\n")
PY
  echo "unique_subject = no" > "$dir/index.txt.attr"; echo 1000 > "$dir/crlnumber"
  printf '%s\n' "[ ca ]" "default_ca = x" "[ x ]" "database = $dir/index.txt" "crlnumber = $dir/crlnumber" \
    "default_md = sha256" "crl_extensions = ext" "[ ext ]" "authorityKeyIdentifier = keyid" > "$dir/ca.cnf"
  openssl ca -batch -gencrl -config "$dir/ca.cnf" -cert Certificates/rsa-intermediate.pem -keyfile Certificates/keys/rsa-intermediate.key \
    -crl_lastupdate 20300101000000Z -crl_nextupdate 20310101000000Z -out "$dir/big.pem" 2>/dev/null
  openssl crl -in "$dir/big.pem" -outform DER -out "$dir/big.crl"
  # The median of 11 runs of openssl crl -noout, in milliseconds.
  for i in $(seq 11); do
    python3 -c "import subprocess,time,sys; t=time.perf_counter(); subprocess.run(['openssl','crl','-inform','DER','-noout','-in',sys.argv[1]],check=True); print((time.perf_counter()-t)*1000)" "$dir/big.crl"
  done | sort -n | sed -n 6p > "$dir/openssl-crl-ms"
}

evaluation() {
  echo
  echo "== evaluation: pincheck-bench"
  local crl_dir; crl_dir=$(mktemp -d)
  big_crl "$crl_dir"
  OPENSSL_CRL_MS=$(cat "$crl_dir/openssl-crl-ms") .build/release/pincheck-bench --certificates Certificates --pincheck "$pincheck" \
    --big-crl "$crl_dir/big.crl" ${QUICK:+--quick}
  rm -rf "$crl_dir"
}
if [ "$BENCH" = evaluation ]; then evaluation; exit 0; fi
command -v curl >/dev/null || { echo "bench.sh needs curl (apt-get install curl)" >&2; exit 1; }
C=Certificates
# curl's --pinnedpubkey pins the leaf's key, so both tools pin the leaf.
pin=$(grep '^rsa-leaf ' $C/pins.txt | cut -d' ' -f2)
curlpin="sha256//${pin#sha256/}"
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; rm -rf "$work" "$installed"; }
trap cleanup EXIT

# N servers on free loopback ports, serving rsa-leaf + rsa-intermediate.
ports=$(python3 -c "
import socket
socks=[socket.socket() for _ in range($N)]
for s in socks: s.bind(('127.0.0.1', 0))
print(' '.join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()")
# Part 5 keeps the farm off the client's core.
farm_cpu=()
if [ "$BENCH" = throughput ] && [ "$(nproc)" -ge 2 ]; then farm_cpu=(taskset -c "$(( $(nproc) - 1 ))"); fi
for port in $ports; do
  "${farm_cpu[@]}" openssl s_server -accept "127.0.0.1:$port" -cert $C/rsa-leaf.pem -key $C/keys/rsa-leaf.key \
    -cert_chain $C/rsa-intermediate.pem -www -quiet >/dev/null 2>&1 &
  pids+=($!)
  disown $!
done
for port in $ports; do
  for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
done
port=${ports%% *}

check()  { "$pincheck" check "127.0.0.1:$1" --host www.example.test --ca-file $C/rsa-root.pem --pin "$pin" --timeout 5; }
curl1()  { curl -sS -o /dev/null --cacert $C/rsa-root.pem --pinnedpubkey "$curlpin" \
             --resolve "www.example.test:$1:127.0.0.1" "https://www.example.test:$1/"; }
sclient() { openssl s_client -connect "127.0.0.1:$1" -servername www.example.test -verify_hostname www.example.test \
             -CAfile $C/rsa-root.pem -verify_return_error </dev/null; }
# Every command must succeed once before it is timed, or the comparison means nothing.
check "$port" >/dev/null; curl1 "$port"; sclient "$port" >/dev/null 2>&1

# Handshakes per second per core: part 5. Each client runs under /usr/bin/time on core 0; its
# rate is handshakes per second of wall time and per second of its own CPU time (user + system,
# its children's included): the second is the per-core figure, whatever the farm's speed.
throughput() {
  local total=${HANDSHAKES:-3000} client=(taskset -c 0) i
  command -v taskset >/dev/null || { echo "BENCH=throughput needs taskset (util-linux)" >&2; exit 1; }
  [ -x /usr/bin/time ] || { echo "BENCH=throughput needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
  for i in $(seq "$total"); do echo "127.0.0.1:$(echo $ports | cut -d' ' -f$(( (i - 1) % N + 1 )))"; done > "$work/farm.txt"
  head -n $(( total / 5 )) "$work/farm.txt" | sed 's/^127.0.0.1://' > "$work/farm-ports.txt"
  timed() { local out=$1; shift; /usr/bin/time -f '%e %U %S' -o "$out" "${client[@]}" "$@"; }
  timed "$work/scan.time" "$pincheck" scan --hosts "$work/farm.txt" --host www.example.test --ca-file $C/rsa-root.pem --pin "$pin" \
    --revocation staple --timeout 5 --concurrency "$N" --json > "$work/scan.jsonl" 2>/dev/null || true
  local trusted; trusted=$(grep -c '"status":"trusted"' "$work/scan.jsonl" || true)
  [ "$trusted" = "$total" ] || { echo "scan: only $trusted of $total handshakes were trusted" >&2; exit 1; }
  timed "$work/curl.time" xargs -P "$N" -I{} curl -sS -o /dev/null --cacert $C/rsa-root.pem --pinnedpubkey "$curlpin" \
    --resolve "www.example.test:{}:127.0.0.1" "https://www.example.test:{}/" < "$work/farm-ports.txt"
  timed "$work/stime.time" openssl s_time -connect "127.0.0.1:$port" -new -time 10 -CAfile $C/rsa-root.pem > "$work/stime.out" 2>/dev/null
  local s_count; s_count=$(grep -Eo '^[0-9]+ connections in [0-9.]+ real' "$work/stime.out" | head -1 | cut -d' ' -f1)
  [ -n "$s_count" ] || { echo "openssl s_time printed no count" >&2; exit 1; }
  # "COUNT TIMEFILE": handshakes per wall second and per CPU second.
  rates() { python3 -c "
w, u, s = map(float, open('$2').read().split()[-3:])
print(f'{$1 / w:.0f} {$1 / (u + s):.0f}')"; }
  local scan_r curl_r stime_r
  read -r -a scan_r <<< "$(rates "$total" "$work/scan.time")"
  read -r -a curl_r <<< "$(rates $(( total / 5 )) "$work/curl.time")"
  read -r -a stime_r <<< "$(rates "$s_count" "$work/stime.time")"
  echo "== scan throughput: clients on core 0, $N openssl s_server on core ${farm_cpu[2]:-shared} ($(nproc) cores)"
  printf '%-66s %10s %14s\n' "" "per second" "per CPU second" \
    "pincheck scan ($total handshakes, pinned, --concurrency $N)" "${scan_r[0]}" "${scan_r[1]}" \
    "xargs -P $N curl --pinnedpubkey ($(( total / 5 )) handshakes, a process each)" "${curl_r[0]}" "${curl_r[1]}" \
    "openssl s_time -new ($s_count handshakes, sequential, unverified)" "${stime_r[0]}" "${stime_r[1]}"
  echo "ratio scan/xargs-curl handshakes per CPU second: $(ratio "${scan_r[1]}" "${curl_r[1]}")"
  echo "ratio scan/s_time handshakes per CPU second: $(ratio "${scan_r[1]}" "${stime_r[1]}")"
}

# Mean wall time of RUNS runs, in microseconds.
mean() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$RUNS"); do "$@" >/dev/null 2>&1; done
  end=$(date +%s%N)
  echo $(( (end - start) / RUNS / 1000 ))
}
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
if [ "$BENCH" = throughput ]; then throughput; exit 0; fi

t_check=$(mean check "$port")
t_curl=$(mean curl1 "$port")
t_sclient=$(mean sclient "$port")

printf '127.0.0.1:%s\n' $ports > "$work/hosts.txt"
scan()  { "$pincheck" scan --hosts "$work/hosts.txt" --host www.example.test --ca-file $C/rsa-root.pem --pin "$pin" \
            --timeout 5 --concurrency "$N"; }
xcurl() { printf '%s\n' $ports | xargs -P "$N" -I{} curl -sS -o /dev/null --cacert $C/rsa-root.pem --pinnedpubkey "$curlpin" \
            --resolve "www.example.test:{}:127.0.0.1" "https://www.example.test:{}/"; }
scan >/dev/null; xcurl
t_scan=$(mean scan)
t_xcurl=$(mean xcurl)

echo "== live checks"
echo "runs: $RUNS, endpoints: $N, one core pair ($(nproc) cores)"
printf '%-58s %8s us\n' "pincheck check (pinned, one host)" "$t_check" \
  "curl --pinnedpubkey (same host)" "$t_curl" \
  "openssl s_client -verify_hostname -verify_return_error" "$t_sclient" \
  "pincheck scan ($N hosts, --concurrency $N)" "$t_scan" \
  "xargs -P $N curl --pinnedpubkey ($N hosts)" "$t_xcurl"
echo "ratio check/curl: $(ratio "$t_check" "$t_curl")"
echo "ratio check/s_client: $(ratio "$t_check" "$t_sclient")"
echo "ratio scan/xargs-curl: $(ratio "$t_scan" "$t_xcurl")"

if [ "$BENCH" = all ]; then evaluation; handshake; stack; fi
