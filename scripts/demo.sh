#!/usr/bin/env bash
# Runs `pincheck demo` on a fresh Debian machine: installs what is missing, builds, runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
exec swift run pincheck demo "$@"
