#!/usr/bin/env python3
"""Diffs two `meshcast bench --json` runs of the same cases: per case and strategy, the
plan's estimate, bound, NIC bytes, messages and chunks must be the same (plan time aside).
Used to check that a planning-speed change keeps every plan. Prints each difference and
exits 1 if there is one.

usage: benchmarks/plan_diff.py BEFORE.json AFTER.json [--strategy NAME]"""
import json
import sys

KEYS = ["estimate_s", "lower_bound_s", "nic_bytes", "intra_host_bytes", "messages", "chunks"]


def rows(path, strategy):
    out = {}
    for r in json.load(open(path))["results"]:
        if strategy is None or r["strategy"] == strategy:
            out[(r["case"], r["strategy"])] = {k: r.get(k) for k in KEYS}
    return out


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    strategy = None
    if "--strategy" in argv:
        strategy = argv[argv.index("--strategy") + 1]
        args.remove(strategy)
    if len(args) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    a, b = rows(args[0], strategy), rows(args[1], strategy)
    diffs = 0
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"{key[0]} {key[1]}: only in {'after' if key in b else 'before'}")
            diffs += 1
            continue
        for k in KEYS:
            if a[key][k] != b[key][k]:
                print(f"{key[0]} {key[1]}: {k} {a[key][k]} -> {b[key][k]}")
                diffs += 1
    print(f"{len(a)} rows before, {len(b)} after, {diffs} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
