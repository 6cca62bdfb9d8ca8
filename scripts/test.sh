#!/usr/bin/env bash
# Builds Pincheck and runs every test suite, installing what a fresh Debian machine lacks.
#   scripts/test.sh            all suites, then ThreadSanitizer and AddressSanitizer over the engine
#   SANITIZERS=0 scripts/test.sh   skip the sanitizer runs (quicker local loop)
#   FUZZ_SECONDS=N scripts/test.sh fuzz each target N seconds (default 10; 0 skips the smoke)
#   SOAK_ITERATIONS=N scripts/test.sh  evaluations in the flat-memory check (default 50000)
#   SECOND_LEG=0 scripts/test.sh   skip the second leg: Debian 13 with OpenSSL 3.5 (scripts/debian13.sh),
#                                  where the build, every suite, the demo and x509-limbo run again
#   API_CHECK=0 scripts/test.sh    skip the public-API check (the second leg does: same source)
#   DEPENDENCY_CHECK=0 scripts/test.sh  skip the consumer-package check (the second leg does: same manifest)
#   OPENSSL4_CHECK=0 scripts/test.sh   skip type-checking the C module against OpenSSL 4.0's headers
#   DOCS=0 scripts/test.sh         skip building the DocC catalogues (scripts/docs.sh)
#   TRAITS=AsyncHTTPClient scripts/test.sh   build these package traits instead of all of them (none: no trait)
#   INSTALL_CHECK=0 scripts/test.sh  skip building the .deb and running it in a Debian root without Swift
# With CI=true each sanitizer build folder is deleted once its suite has run: a fresh clone then
# peaks at 3.1 GiB instead of 5.2 GiB with all four build folders kept (measured on this script).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step is stamped with the minutes and seconds since the script started, so a CI log shows
# where the time goes.
log() { printf '\n==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
# Runs a long, quiet step with a line every minute, so a log (and a person) sees it is alive.
with_progress() {
  local label=$1 started=$SECONDS status=0
  shift
  ( while sleep 60; do printf '    … %s: still running (%d s)\n' "$label" $((SECONDS - started)); done ) &
  local ticker=$!
  "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$status"
}

source scripts/setup.sh
system=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-$ID}" || uname -s)
log "Swift $(swift --version 2>/dev/null | head -1 | sed 's/.*version \([0-9.]*\).*/\1/'), OpenSSL $openssl_version, $system"

# A full disk fails a build deep inside the compiler ("No space left on device"); say so up front.
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
log "disk: $((free_kib / 1048576)) GiB free here"
if [ "${free_kib:-0}" -lt $((4 * 1048576)) ]; then
  echo "warning: under 4 GiB free; the builds below need about 3.1 GiB (5.2 GiB without CI=true)" >&2
fi
# Build folders that only CI may delete after use (a local run keeps them for the next build).
discard_in_ci() { if [ "${CI:-}" = true ]; then rm -rf "$1"; fi; }

# --- Third-party test data -------------------------------------------------------------------
# x509-limbo, the real-world chains, the CT log lists, the peers' fixtures, the root programs'
# data: not in the repository (docs/test-data.md, scripts/test-data.manifest). PINCHECK_SHARED
# says where they are: by default ../shared when it exists, otherwise .test-data (git-ignored),
# into which scripts/fetch-test-data.sh fetches what is missing from PINCHECK_DATA_URL, keeping
# only what matches the manifest's digests. Without them the suites that read them are skipped,
# said here in one line; CI must have them.
if [ -z "${PINCHECK_SHARED:-}" ]; then
  if [ -d ../shared ]; then PINCHECK_SHARED=$(cd .. && pwd)/shared; else PINCHECK_SHARED=$PWD/.test-data; fi
fi
export PINCHECK_SHARED
datasets_missing() {
  missing_data=()
  for dataset in limbo realworld ct afnetworking peers rootstores; do
    # In the fetched folder a dataset counts only once verified (its marker): a folder a killed
    # fetch left is fetched again rather than read.
    if [ "$PINCHECK_SHARED" = "$PWD/.test-data" ] && [ ! -f "$PINCHECK_SHARED/.$dataset.verified" ]; then missing_data+=("$dataset"); continue; fi
    [ -d "$PINCHECK_SHARED/$dataset" ] || missing_data+=("$dataset")
  done
}
datasets_missing
if [ ${#missing_data[@]} -gt 0 ] && [ "$PINCHECK_SHARED" = "$PWD/.test-data" ] && [ -n "${PINCHECK_DATA_URL:-}" ]; then
  log "test data: fetching ${missing_data[*]} from $PINCHECK_DATA_URL (verified against scripts/test-data.manifest)"
  PINCHECK_DATA_DIR=$PINCHECK_SHARED scripts/fetch-test-data.sh "${missing_data[@]}" || echo "test data: the fetch failed (above); the suites that need it are skipped" >&2
  datasets_missing
fi
if [ ${#missing_data[@]} -gt 0 ]; then
  if [ "${CI:-}" = true ]; then
    echo "error: third-party test data missing at $PINCHECK_SHARED: ${missing_data[*]} (docs/test-data.md says what each is and where it comes from)" >&2
    exit 1
  fi
  log "THIRD-PARTY TEST DATA MISSING at $PINCHECK_SHARED: ${missing_data[*]} — the suites that read it are SKIPPED (docs/test-data.md: what each is and how to get it: PINCHECK_SHARED, or PINCHECK_DATA_URL and scripts/fetch-test-data.sh)"
fi
if [ "${PINCHECK_TARGET_SUBSET:-}" != second-leg ]; then
  log "test-data fetch: a mirror served on 127.0.0.1; good, tampered, escaping, linked, oversized and missing archives"
  scripts/tests/fetch-test-data-test.sh
fi

# --- Build and test ---------------------------------------------------------------------------
# The gates a switch (or missing data) left out, said again in the closing lines.
not_run=()
results=$(mktemp)
trap 'rm -f "$results"' EXIT

log "module boundaries: only Sources/PincheckOpenSSL imports COpenSSL"
stray=$(grep -rlE '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+([a-z]+[[:space:]]+)?COpenSSL([.[:space:]]|$)' \
  Sources Tests Examples | grep -v '^Sources/PincheckOpenSSL/' || true)
if [ -n "$stray" ]; then
  echo "these files import COpenSSL; OpenSSL is called from Sources/PincheckOpenSSL only:" >&2
  echo "$stray" >&2
  exit 1
fi

log "rooms: the engine (TrustEvaluatorCore) parses no data file: JSON, root-program files and log lists are TrustEvaluatorFormats'"
parsers=$(grep -rlE '\b(JSONSyntax|JSONValue|MozillaCertdata|CCADBRoots|ChromeConstraints|LogListReader)\b' Sources/TrustEvaluatorCore || true)
if [ -n "$parsers" ]; then
  echo "these engine files reach a file-format parser; parse in Sources/TrustEvaluatorFormats and hand the engine its values:" >&2
  echo "$parsers" >&2
  exit 1
fi

if [ "${OPENSSL4_CHECK:-1}" != 0 ]; then
  log "OpenSSL 4.0 readiness: the C module type-checks against the newest headers in Debian's registry"
  scripts/openssl4-check.sh
else
  not_run+=("OpenSSL 4.0 header check (OPENSSL4_CHECK=0)")
fi

log "skips: every test that can be skipped says why (SharedData.requires, or a reason string)"
bare=$(grep -rn '\.enabled(if:' Tests | grep -v 'Comment(' | grep -v ', "' || true)
if [ -n "$bare" ]; then
  echo "these tests can be skipped without a reason; use SharedData.requires(...) or give .enabled(if:_:) a comment:" >&2
  echo "$bare" >&2
  exit 1
fi

log "functions: none in Sources/ over 60 lines (generated data aside)"
python3 scripts/lib/function-length.py >&2 || { echo "split the functions above (scripts/lib/function-length.py)" >&2; exit 1; }

log "locks: no Synchronization.Mutex in the engine or the C module (ThreadSanitizer reports false races on it on Linux)"
mutexes=$(grep -rlE '\bMutex<|Mutex\(' Sources/TrustEvaluatorCore Sources/TrustEvaluatorFormats Sources/PincheckOpenSSL || true)
if [ -n "$mutexes" ]; then
  echo "these files use Synchronization.Mutex; use Locked (engine) or PThreadLocked (C module):" >&2
  echo "$mutexes" >&2
  exit 1
fi

if [ "${PINCHECK_TARGET_SUBSET:-}" != second-leg ]; then
  log "format: Sources/ as .swift-format lays it out (swift format, from the toolchain; the generated root-program data aside)"
  files=$(git ls-files 'Sources/*.swift' | grep -v '/BundledRootPrograms.swift$')
  [ -n "$files" ] || { echo "format check: git lists no Swift source here" >&2; exit 1; }
  unformatted=$(echo "$files" | xargs -r swift format lint --strict --parallel 2>&1 || true)
  if [ -n "$unformatted" ]; then
    echo "these lines are not laid out as .swift-format says; run: git ls-files 'Sources/*.swift' | grep -v BundledRootPrograms | xargs swift format format --in-place --parallel" >&2
    echo "$unformatted" | head -40 >&2
    exit 1
  fi
fi

# The integrations behind traits (Package.swift) are built and tested here: every swift command
# below enables them all, so the build folder is never rebuilt between steps.
if [ "${TRAITS:-}" = none ]; then traits=(); elif [ -n "${TRAITS:-}" ]; then traits=(--traits "$TRAITS"); else traits=(--enable-all-traits); fi
# The sanitizer runs judge the engine and the NIO verifiers that call it, with no trait on.
# AsyncHTTPClient, Vapor and Hummingbird only configure those verifiers and hand their decisions
# on (PincheckAsyncHTTPClient holds no state of its own). With AsyncHTTPClient's stack (HTTP/2,
# NIO extras, tracing) instrumented too, this step took 10:30 of a CI run; without it, a clean
# build of the step took 217 s and its suites 35 s (this 2-core machine, idle, 2026-11-28).

if [ "${DEPENDENCY_CHECK:-1}" != 0 ]; then
  log "dependencies: no integration stack for engine-only packages; TrustEvaluatorCore alone; 0.9.0 code builds unchanged; a consumer of every product and trait sees no warning from Pincheck"
  with_progress "consumer-package check" scripts/dependency-check.sh
else
  not_run+=("consumer-package check (DEPENDENCY_CHECK=0)")
fi

log "build (a warning from the project's own sources or examples fails it: users build them too)"
# A package that depends on Pincheck compiles these sources with the flags this build uses unless
# the manifest sets its own (unsafeFlags and other settings SwiftPM treats differently for a
# dependency): with none, a warning-free build here is a warning-free build there, every trait on.
# The dependency check above builds such a consumer too; this guard says why early.
if grep -nE 'unsafeFlags|swiftSettings|cSettings|enableExperimentalFeature|enableUpcomingFeature|define\(' Package.swift; then
  echo "Package.swift sets compiler settings (above): a consumer's build of Pincheck may then differ from this one; build a consumer package with every trait and check its warnings instead" >&2
  exit 1
fi
build_log=$(mktemp)
swift build --build-tests "${traits[@]}" 2>&1 | tee "$build_log"
own_warnings=$(grep -E "^$PWD/(Sources|Examples)/[^:]+:[0-9]+:[0-9]+: warning:" "$build_log" | sort -u || true)
rm -f "$build_log"
if [ -n "$own_warnings" ]; then
  echo "the build warns in the project's own sources (every trait enabled); fix these:" >&2
  echo "$own_warnings" >&2
  exit 1
fi

if [ "${PINCHECK_TARGET_SUBSET:-}" != second-leg ]; then
  log "man pages: docs/man is what swift-argument-parser's generate-manual makes of the commands' help"
  scripts/man.sh --check
fi

log "impossible states: the code in api/impossible/ does not compile (a pin set without pins, …)"
scripts/impossible.sh
log "documentation snippets: Tests/SnippetTests/Generated is every swift block of README, docs/ and the DocC guides"
python3 scripts/snippets.py --check

log "tests"
# --skip-build: the build above made the test binary. Without it `swift test` compiles every
# module again (its build adds a compiler flag `swift build --build-tests` does not), 225 s here.
swift test --skip-build "${traits[@]}" 2>&1 | tee "$results"

log "demo"
swift run "${traits[@]}" pincheck demo

if [ "${INSTALL_CHECK:-1}" != 0 ] && [ "${PINCHECK_TARGET_SUBSET:-}" != second-leg ]; then
  # What a user installs, where a user installs it: the release build with the Swift runtime
  # linked in, packaged, installed into a Debian root that has no Swift, and run there.
  log "install: scripts/package-deb.sh (release, --static-swift-stdlib), installed and run in a Debian 12 root without Swift"
  with_progress "release build and package" scripts/package-deb.sh .build/deb
  scripts/tests/deb-install-test.sh
elif [ "${INSTALL_CHECK:-1}" = 0 ]; then
  not_run+=("the .deb installed in a root without Swift (INSTALL_CHECK=0)")
fi

if [ "${PINCHECK_TARGET_SUBSET:-}" != second-leg ]; then
  # Prometheus's own tool judges the shipped rules (unit tests of every alert) and a live
  # scrape; the same on both legs (no OpenSSL in it), so the first leg alone runs it.
  log "alerting rules and exposition: promtool check rules, test rules, check metrics (Debian's prometheus)"
  scripts/tests/watch-rules-test.sh .build/debug/pincheck-watch
fi

if [ "${DOCS:-1}" != 0 ]; then
  log "documentation: every module's DocC catalogue builds with warnings as errors, into one static site (.build/docs-site)"
  with_progress "DocC build" scripts/docs.sh
else
  not_run+=("DocC build (DOCS=0)")
fi

if [ "${API_CHECK:-1}" != 0 ]; then
  log "public API against the baseline release (api/baseline): no unannounced break"
  with_progress "public-API check" scripts/api-check.sh
else
  not_run+=("public-API check (API_CHECK=0)")
fi

log "x509-limbo conformance (zero false accepts, passes >= conformance/limbo-ratchet.txt)"
if [ -f "$PINCHECK_SHARED/limbo/data/limbo.json" ] || [ -n "${LIMBO_SUITE:-}" ]; then
  with_progress "x509-limbo" env LIMBO_SUITE="${LIMBO_SUITE:-$PINCHECK_SHARED/limbo/data/limbo.json}" scripts/limbo.sh
else
  echo "no x509-limbo suite at $PINCHECK_SHARED/limbo/data/limbo.json (set PINCHECK_SHARED or LIMBO_SUITE): conformance gate not run"
  not_run+=("x509-limbo conformance gate (no suite at $PINCHECK_SHARED/limbo)")
fi

# 50,000 evaluations: the 1 MiB limit still catches a leak of 21 bytes per evaluation.
log "memory: ${SOAK_ITERATIONS:-50000} evaluations, resident memory must stay flat"
.build/debug/pincheck-soak "${SOAK_ITERATIONS:-50000}"

log "benchmark smoke (debug, --quick): each configuration must reach its expected verdict; speed is not judged"
.build/debug/pincheck-bench --quick --pincheck .build/debug/pincheck | tail -8
log "handshake benchmark smoke (debug, --quick): both verifications complete handshakes; speed is not judged"
.build/debug/pincheck-handshake-bench --certificates Certificates --quick | tail -2
if [ "${PINCHECK_TARGET_SUBSET:-}" != second-leg ]; then
  log "stack benchmark smoke (debug, --quick): pinned AsyncHTTPClient requests and mTLS handshakes complete; speed is not judged"
  .build/debug/pincheck-stack-bench --certificates Certificates --quick | tail -3
fi

if [ "${SANITIZERS:-1}" != 0 ]; then
  # The engine's suites again under the sanitizers: concurrent evaluations sharing one anchor store,
  # pin-set updates swapped under real handshakes and failure reports delivered on their own tasks
  # (ThreadSanitizer), and memory errors and leaks in Swift and libcrypto (AddressSanitizer).
  # Each builds only the targets its suites need (PINCHECK_TARGET_SUBSET, Package.swift): the
  # examples, benchmarks, gRPC and the command are not instrumented.
  log "ThreadSanitizer: the engine's suites (Core, Formats, TLS), handshakes under pin-set updates, report deliveries, mTLS verifiers"
  PINCHECK_TARGET_SUBSET=nio swift test --scratch-path .build-tsan --sanitize=thread --filter 'PincheckOpenSSLTests|TrustEvaluatorCoreTests|TrustEvaluatorFormatsTests|PincheckTLSTests|UpdatableHandshakeTests|TrustLoggingTests|ClientCertificateTests'
  discard_in_ci .build-tsan
  log "AddressSanitizer + LeakSanitizer: the engine's suites (Core, Formats, TLS), fuzz corpus replay"
  LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
    PINCHECK_TARGET_SUBSET=engine swift test --scratch-path .build-asan --sanitize=address --filter 'PincheckOpenSSLTests|TrustEvaluatorCoreTests|TrustEvaluatorFormatsTests|PincheckTLSTests|PincheckFuzzingTests'
  discard_in_ci .build-asan
else
  not_run+=("ThreadSanitizer and AddressSanitizer runs (SANITIZERS=0)")
fi

if [ "${FUZZ_SECONDS:-10}" != 0 ]; then
  # The corpora were replayed by the tests above; here each target explores for a bounded time.
  log "fuzz smoke: ${FUZZ_SECONDS:-10} s per target"
  scripts/fuzz.sh all "${FUZZ_SECONDS:-10}"
else
  not_run+=("fuzz smoke (FUZZ_SECONDS=0)")
fi

# The closing lines count each leg's tests, skipped apart from passed (Swift Testing's count
# includes the skipped ones; each is a "➜ Test … skipped" line with its reason above).
total=$(grep -Eo 'Test run with [0-9]+ tests?' "$results" | grep -Eo '[0-9]+' | tail -1)
skipped=$(grep -cE '^➜ Test .* skipped' "$results" || true)
passed=$(( ${total:-0} - ${skipped:-0} ))
this_leg="$passed passed, 0 failed, ${skipped:-0} skipped"

if [ "${SECOND_LEG:-1}" != 0 ]; then
  # The same build, suites, demo and conformance gate on the other OpenSSL that users deploy on
  # (Debian 13, Ubuntu 26.04 and RHEL 10 carry 3.5). The sanitizers, the fuzz smoke and the API
  # check are not repeated: they judge this project's code, which is the same on both. Nor are
  # the AsyncHTTPClient, OpenAPI, Vapor, Hummingbird and gRPC suites and examples: they reach
  # OpenSSL only through NIOSSL (BoringSSL, not the system's) and Pincheck's NIO verifier, which
  # the NIO suites run here (PINCHECK_TARGET_SUBSET=second-leg leaves them out of that build, no
  # trait on: swift-certificates, swift-crypto, async-http-client and HTTP/2 with them). Nor the
  # consumer-package check, which reads the manifest, the same on both.
  log "second leg: Debian 13 with OpenSSL 3.5 (scripts/debian13.sh, build folder .build-debian13)"
  second_started=$SECONDS
  scripts/debian13.sh env PINCHECK_TARGET_SUBSET=second-leg SECOND_LEG=0 SANITIZERS=0 FUZZ_SECONDS=0 API_CHECK=0 OPENSSL4_CHECK=0 DOCS=0 DEPENDENCY_CHECK=0 \
    TRAITS=none bash scripts/test.sh 2>&1 | tee "$results"
  second_leg=$(grep -E '^tests: [0-9]+ passed, 0 failed, [0-9]+ skipped$' "$results" | tail -1)
  second_system=$(grep -E '^this leg: ' "$results" | tail -1 | sed 's/^this leg: //')
  [ -n "$second_leg" ] || { echo "the second leg printed no test count" >&2; exit 1; }
  echo "second leg: $((SECONDS - second_started)) s"
  discard_in_ci .build-debian13
else
  not_run+=("second leg, Debian 13 with OpenSSL 3.5 (SECOND_LEG=0)")
fi

echo
log "done"
if [ ${#missing_data[@]} -gt 0 ]; then
  echo "datasets missing at $PINCHECK_SHARED: ${missing_data[*]}: the suites that read them were skipped (docs/test-data.md says what each is; scripts/fetch-test-data.sh fetches them)"
fi
if [ ${#not_run[@]} -gt 0 ]; then
  printf 'not run: %s\n' "${not_run[@]}"
fi
echo "this leg: OpenSSL $openssl_version, $system: $this_leg"
if [ "${SECOND_LEG:-1}" != 0 ]; then
  echo "second leg: $second_system"
  read -r second_passed second_skipped < <(echo "$second_leg" | sed -E 's/^tests: ([0-9]+) passed, 0 failed, ([0-9]+) skipped$/\1 \2/')
  echo "tests: $((passed + second_passed)) passed, 0 failed, $((skipped + second_skipped)) skipped"
else
  echo "tests: $this_leg"
fi
