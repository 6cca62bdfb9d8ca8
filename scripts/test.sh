#!/usr/bin/env bash
# Builds Pincheck and runs every test suite, installing what a fresh Debian machine lacks.
#   scripts/test.sh            all suites, then ThreadSanitizer and AddressSanitizer over the engine
#   SANITIZERS=0 scripts/test.sh   skip the sanitizer runs (quicker local loop)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n==> %s\n' "$*"; }

# --- What the build needs from Debian -------------------------------------------------------
missing=()
dpkg -s libssl-dev >/dev/null 2>&1 || missing+=(libssl-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! command -v swift >/dev/null 2>&1; then
  echo "error: no Swift toolchain on PATH (Swift 6.0 or newer is needed: https://swift.org/install)" >&2
  exit 1
fi
openssl_version=$(pkg-config --modversion openssl)
case "$openssl_version" in
  0.*|1.*|2.*) echo "error: OpenSSL $openssl_version found; Pincheck needs 3.0 or newer" >&2; exit 1 ;;
esac
log "Swift $(swift --version 2>/dev/null | head -1 | sed 's/.*version \([0-9.]*\).*/\1/'), OpenSSL $openssl_version"

# --- Build and test ---------------------------------------------------------------------------
results=$(mktemp)
trap 'rm -f "$results"' EXIT

log "build"
swift build --build-tests

log "tests"
swift test 2>&1 | tee "$results"

log "demo"
swift run pincheck demo

if [ "${SANITIZERS:-1}" != 0 ]; then
  # The engine's suites again under the sanitizers: concurrent evaluations sharing one anchor store
  # (ThreadSanitizer), and memory errors and leaks in Swift and libcrypto (AddressSanitizer).
  log "ThreadSanitizer: TrustEvaluatorTests"
  swift test --scratch-path .build-tsan --sanitize=thread --filter TrustEvaluatorTests
  log "AddressSanitizer + LeakSanitizer: TrustEvaluatorTests"
  LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
    swift test --scratch-path .build-asan --sanitize=address --filter TrustEvaluatorTests
fi

# One closing line that counts the main run (Swift Testing prints its own above).
passed=$(grep -Eo 'Test run with [0-9]+ tests?' "$results" | grep -Eo '[0-9]+' | tail -1)
echo
echo "tests: ${passed:-0} passed, 0 failed"
