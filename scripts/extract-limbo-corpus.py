#!/usr/bin/env python3
"""Writes the certificates of x509-limbo as fuzz seeds: one PEM bundle per test case (the peer
certificate then its untrusted intermediates, as a server would send them) into OUT/chains, and
each distinct certificate alone into OUT/certificates. Feed them to `scripts/fuzz.sh merge`,
which keeps only the inputs that add coverage.

usage: scripts/extract-limbo-corpus.py [LIMBO_JSON] OUT
"""
import hashlib
import json
import os
import sys

args = sys.argv[1:]
limbo = args[0] if len(args) == 2 else os.path.join(os.path.dirname(__file__), "../../shared/limbo/data/limbo.json")
out = args[-1]
for sub in ("chains", "certificates"):
    os.makedirs(os.path.join(out, sub), exist_ok=True)

seen = set()
with open(limbo) as handle:
    cases = json.load(handle)["testcases"]
for case in cases:
    chain = [case["peer_certificate"]] + case.get("untrusted_intermediates", [])
    name = hashlib.sha256(case["id"].encode()).hexdigest()[:16]
    with open(os.path.join(out, "chains", name + ".pem"), "w") as handle:
        handle.write("".join(pem if pem.endswith("\n") else pem + "\n" for pem in chain))
    for pem in chain + case.get("trusted_certs", []):
        digest = hashlib.sha256(pem.encode()).hexdigest()[:16]
        if digest not in seen:
            seen.add(digest)
            with open(os.path.join(out, "certificates", digest + ".pem"), "w") as handle:
                handle.write(pem)
print(f"{len(cases)} chains, {len(seen)} certificates in {out}")
