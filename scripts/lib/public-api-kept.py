"""Every public declaration of the baseline's API digests is still public now.

swift package diagnose-api-breaking-changes treats `package` declarations as API, so the check
runs against digests without them; it then also misses a public declaration made `package`
(it sees it still "there"). This closes that gap: each public declaration of the baseline
(by USR) must be in the current public symbol graphs (swift package dump-symbol-graph
--minimum-access-level public). Usage: public-api-kept.py DIGEST_DIR SYMBOLGRAPH_DIR MODULE...
"""
import json
import os
import sys

DECLARATIONS = {"TypeDecl", "Var", "Function", "Constructor", "Subscript", "TypeAlias", "EnumElement"}


def baseline_public(node, module, found):
    """The module's own public declarations (an extension of another module's type is walked
    for its members, and not counted itself)."""
    if isinstance(node, dict):
        if node.get("isInternal"):
            return
        if (node.get("kind") in DECLARATIONS and not node.get("implicit") and node.get("usr")
                and node.get("moduleName") == module):
            found[node["usr"]] = node.get("printedName", node["usr"])
        for value in node.values():
            baseline_public(value, module, found)
    elif isinstance(node, list):
        for child in node:
            baseline_public(child, module, found)


def main():
    digests, graphs, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    current = set()
    for name in os.listdir(graphs):
        if name.endswith(".symbols.json"):
            with open(os.path.join(graphs, name)) as source:
                current.update(symbol["identifier"]["precise"] for symbol in json.load(source).get("symbols", []))
    missing = []
    for module in modules:
        path = os.path.join(digests, module + ".json")
        if not os.path.exists(path):
            continue
        with open(path) as source:
            found = {}
            baseline_public(json.load(source), module, found)
        missing += [f"{module}: {printed}" for usr, printed in sorted(found.items(), key=lambda item: item[1]) if usr not in current]
    for line in missing:
        print(f"API breakage: public {line} is no longer public")
    sys.exit(1 if missing else 0)


main()
