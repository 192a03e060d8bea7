#!/usr/bin/env python3
"""Turns `meshcast bench --json FILE` output into a markdown table: one row per case, for
every strategy its estimate and estimate/bound, plus the bound and meshcast's speedup over
send_recv. Usage: bench_table.py FILE.json [FILE.json ...]"""
import json
import sys

ORDER = ["send_recv", "local_allgather", "broadcast_first", "broadcast_lb_size",
         "broadcast_lb_order", "meshcast"]


def table(path):
    results = json.load(open(path))["results"]
    cases = {}
    for r in results:
        cases.setdefault(r["case"], {})[r["strategy"]] = r
    names = [s for s in ORDER if any(s in c for c in cases.values())]
    head = ["case", "bytes", "bound (s)"] + [f"{s} est (×bound)" for s in names]
    head += ["meshcast vs send_recv"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, rows in cases.items():
        bound = next(iter(rows.values()))["lower_bound_s"]
        cells = [name, str(next(iter(rows.values()))["bytes"]), f"{bound:.4g}"]
        for s in names:
            r = rows.get(s)
            cells.append(f"{r['estimate_s']:.4g} ({r['estimate_s'] / bound:.3f})" if r else "")
        if "meshcast" in rows and "send_recv" in rows:
            cells.append(f"{rows['send_recv']['estimate_s'] / rows['meshcast']['estimate_s']:.2f}×")
        print("| " + " | ".join(cells) + " |")


for p in sys.argv[1:]:
    table(p)
    print()
