#!/usr/bin/env bash
# Fails when a package that depends on Pincheck for the engine alone would fetch an integration's
# stack. A consumer package is made in a temporary folder, depending on this working tree by path
# with Pincheck's default traits, and resolved: its checkouts must hold none of the packages below.
# Then the same consumer asks for the AsyncHTTPClient trait, and async-http-client must arrive
# (so the first half is not passing because nothing resolves). Last, a consumer is built from
# code written against the API baseline (its example programs that import TrustEvaluator), and a
# program that depends on TrustEvaluatorCore alone must build without TrustEvaluatorFormats.
set -euo pipefail
cd "$(dirname "$0")/.."

integrations='async-http-client vapor hummingbird swift-openapi-async-http-client swift-openapi-runtime'
consumer=$(mktemp -d)
trap 'rm -rf "$consumer"' EXIT
mkdir -p "$consumer/Sources/App"
echo 'import TrustEvaluator; print(TrustPolicy.self)' > "$consumer/Sources/App/main.swift"

manifest() {
  cat > "$consumer/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "consumer",
    dependencies: [.package(path: "$PWD"$1)],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "TrustEvaluator", package: "$(basename "$PWD")")])])
SWIFT
}

fetched() { ls "$consumer/.build/checkouts" 2>/dev/null | tr '\n' ' '; }

manifest ""
resolve() {
  (cd "$consumer" && swift package resolve >"$consumer/resolve.log" 2>&1) || { cat "$consumer/resolve.log" >&2; exit 1; }
}
resolve
for name in $integrations; do
  if [ -d "$consumer/.build/checkouts/$name" ]; then
    echo "dependency-check.sh: an engine-only consumer fetches $name; fetched: $(fetched)" >&2
    exit 1
  fi
done
echo "dependency-check.sh: engine only fetches: $(fetched)"

manifest ', traits: ["AsyncHTTPClient"]'
resolve
if [ ! -d "$consumer/.build/checkouts/async-http-client" ]; then
  echo "dependency-check.sh: the AsyncHTTPClient trait did not bring async-http-client; fetched: $(fetched)" >&2
  exit 1
fi
echo "dependency-check.sh: with the AsyncHTTPClient trait, async-http-client is fetched"

# Source compatibility: the baseline's own example programs, unchanged, against this tree.
baseline=$(awk '!/^#/ && NF { print $1; exit }' api/baseline)
rm -rf "$consumer"/Sources/* "$consumer/.build"
mkdir -p "$consumer/Sources/evaluate-chain" "$consumer/Sources/afnetworking-port" "$consumer/Sources/core-only"
git show "$baseline:Examples/EvaluateChain/main.swift" > "$consumer/Sources/evaluate-chain/main.swift"
git show "$baseline:Examples/AFNetworkingPort/main.swift" > "$consumer/Sources/afnetworking-port/main.swift"
cat > "$consumer/Sources/core-only/main.swift" <<'SWIFT'
import TrustEvaluatorCore
let verdict = try Evaluator(policy: TrustPolicy(anchors: .system)).evaluate([], host: nil, at: .now)
SWIFT
name=$(basename "$PWD")
cat > "$consumer/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "consumer",
    dependencies: [.package(path: "$PWD")],
    targets: [
        .executableTarget(name: "evaluate-chain", dependencies: [.product(name: "TrustEvaluator", package: "$name")]),
        .executableTarget(name: "afnetworking-port", dependencies: [.product(name: "TrustEvaluator", package: "$name")]),
        .executableTarget(name: "core-only", dependencies: [.product(name: "TrustEvaluatorCore", package: "$name")]),
    ])
SWIFT
# Each build also fails on a warning from Pincheck's own sources: a consumer depending on it by path
# compiles them as this repository's build does, and sees what they print.
build() {
  (cd "$consumer" && swift build --target "$1" >"$consumer/build.log" 2>&1) || { cat "$consumer/build.log" >&2; exit 1; }
  if grep -E "^$PWD/Sources/[^ ]*: warning:" "$consumer/build.log" >&2; then
    echo "dependency-check.sh: building $1 as a consumer prints the warnings above from Pincheck's sources" >&2
    exit 1
  fi
}
build core-only
# (SwiftPM plans every target's folder; a compiled module leaves a .swiftmodule or object files.)
if find "$consumer/.build" \( -name 'TrustEvaluatorFormats.swiftmodule' -o -path '*TrustEvaluatorFormats.build/*.o' \) | grep -q .; then
  echo "dependency-check.sh: a program that depends on TrustEvaluatorCore built TrustEvaluatorFormats" >&2
  exit 1
fi
echo "dependency-check.sh: TrustEvaluatorCore alone builds without TrustEvaluatorFormats"
build evaluate-chain
build afnetworking-port
echo "dependency-check.sh: the example programs of $baseline ($(awk '!/^#/ && NF { print $2; exit }' api/baseline)) build unchanged, with no warning from Pincheck's sources"

# Every product with every trait, as a user of all of them builds it: nothing Pincheck's sources
# compile may print a warning there (issue 43; a warning a trait's code printed only in users'
# builds was how this check began).
rm -rf "$consumer"/Sources/* "$consumer/.build"
mkdir -p "$consumer/Sources/everything"
products=$(sed -n 's/^ *\.library(name: "\([A-Za-z]*\)".*/\1/p' Package.swift)
traits=$(awk '/\.trait\(/ { getline; if (match($0, /name: "[A-Za-z]+"/)) print substr($0, RSTART + 6, RLENGTH - 6) }' Package.swift | paste -sd, -)
{ for product in $products; do echo "import $product"; done; echo 'print(TrustPolicy.self)'; } > "$consumer/Sources/everything/main.swift"
cat > "$consumer/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "consumer",
    dependencies: [.package(path: "$PWD", traits: [$traits])],
    targets: [.executableTarget(name: "everything", dependencies: [$(for product in $products; do printf '.product(name: "%s", package: "%s"), ' "$product" "$name"; done)])])
SWIFT
build everything
echo "dependency-check.sh: every product ($(echo $products | wc -w)) with every trait ($traits) builds as a consumer's, with no warning from Pincheck's sources"
