"""Compares the public API of each library product with the baseline's, as a user of the product
sees it. Usage: api-compare.py DIGESTER BASELINE_DIGESTS ALLOWLIST DUMP_ARGS_FILE PRODUCT=MODULE[+MODULE…]…
(or api-compare.py --public-only IN OUT: a digest without its `package` declarations).

swift package diagnose-api-breaking-changes compares a product's own module. Two things it cannot
see are checked here, with the same tool (swift-api-digester) underneath:
- a product whose module re-exports others (`TrustEvaluator` is `@_exported import` of
  TrustEvaluatorCore and TrustEvaluatorFormats): its current API is those modules' APIs merged,
  named as the product, so a declaration that moved between them is not a break and one that
  left both is;
- `package` declarations: the digests mark them "isInternal"; they are taken out of both sides,
  so a public declaration made `package` is a removal.
Prints every break not listed word for word in ALLOWLIST and exits 1 if there is one.
"""
import json
import os
import subprocess
import sys
import tempfile


def public(node):
    if isinstance(node, dict):
        if node.get("isInternal"):
            return None
        return {key: public(value) for key, value in node.items()}
    if isinstance(node, list):
        return [kept for kept in (public(child) for child in node) if kept is not None]
    return node


def renamed(node, modules, product):
    """Module names of the re-exported modules become the product's, in fields and in printed types."""
    if isinstance(node, dict):
        return {key: (product if key == "moduleName" and value in modules else renamed(value, modules, product))
                for key, value in node.items()}
    if isinstance(node, list):
        return [renamed(child, modules, product) for child in node]
    if isinstance(node, str):
        for module in modules:
            node = node.replace(module + ".", product + ".")
        return node
    return node


def main():
    if sys.argv[1] == "--public-only":
        with open(sys.argv[2]) as source:
            digest = json.load(source)
        with open(sys.argv[3], "w") as target:
            json.dump(public(digest), target)
        return
    digester, baseline_dir, allowlist, dump_args_file, *products = sys.argv[1:]
    with open(dump_args_file) as source:
        dump_args = [line.rstrip("\n") for line in source if line.strip()]
    with open(allowlist) as source:
        allowed = {line.strip() for line in source if line.strip() and not line.startswith("#")}
    # Every module that a product is made of, so a type's printed module reads as its product's.
    merged_modules = {module for product in products for module in product.split("=", 1)[1].split("+")
                      if "+" in product.split("=", 1)[1]}
    breaks = []
    with tempfile.TemporaryDirectory() as work:
        for spec in products:
            product, modules = spec.split("=", 1)
            modules = modules.split("+")
            baseline_path = os.path.join(baseline_dir, product + ".json")
            if not os.path.exists(baseline_path):
                continue  # a product newer than the baseline
            current_path = os.path.join(work, product + ".current.json")
            command = [digester, "-dump-sdk", "-o", current_path, "-swift-only", "-abort-on-module-fail"]
            for module in modules:
                command += ["-module", module]
            subprocess.run(command + dump_args, check=True)
            with open(current_path) as source:
                current = json.load(source)
            current["ABIRoot"]["name"] = product
            current = renamed(public(current), merged_modules, "TrustEvaluator")
            with open(baseline_path) as source:
                baseline = public(json.load(source))
            for path, digest in ((current_path, current), (os.path.join(work, product + ".baseline.json"), baseline)):
                with open(path, "w") as target:
                    json.dump(digest, target)
            report = subprocess.run([digester, "-diagnose-sdk", "-input-paths", os.path.join(work, product + ".baseline.json"),
                                     "-input-paths", current_path], check=True, capture_output=True, text=True)
            found = [line.strip() for line in (report.stdout + report.stderr).splitlines()
                     if line.strip() and not line.strip().startswith("/*")]
            kept_out = [line for line in found if line not in allowed]
            breaks += [f"{product}: {line}" for line in kept_out]
            print(f"api-compare: {product} ({' + '.join(modules)}): {len(kept_out)} unannounced change(s)")
    for line in breaks:
        print(f"API breakage: {line}")
    sys.exit(1 if breaks else 0)


main()
