#!/usr/bin/env python3
"""Turns `meshcast bench --json FILE` output into a markdown table: one row per case, for
every strategy its estimate and estimate/bound, plus the bound and meshcast's speedup over
send_recv. For executed runs (transport local or ucx) the table is of measured medians
instead: meshcast's median/bound, the fastest other strategy, the speedup over send_recv
and the simulator's error (estimate/median - 1), meshcast's and the worst of any strategy.
Usage: bench_table.py FILE.json [FILE.json ...]"""
import json
import sys

ORDER = ["send_recv", "local_allgather", "broadcast_first", "broadcast_lb_size",
         "broadcast_lb_order", "meshcast"]


def measured(cases):
    head = ["case", "MiB", "bound (s)", "meshcast median (×bound)", "fastest other (×bound)",
            "meshcast / fastest other", "speedup over send_recv", "sim error meshcast",
            "worst sim error", "#wrong"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, rows in cases.items():
        m = rows["meshcast"]
        bound, med = m["lower_bound_s"], m["time_s"]["median"]
        others = [r for s, r in rows.items() if s != "meshcast"]
        best = min(others, key=lambda r: r["time_s"]["median"])
        err = {s: r["estimate_s"] / r["time_s"]["median"] - 1 for s, r in rows.items()}
        worst = max(err, key=lambda s: abs(err[s]))
        cells = [name, f"{m['bytes'] / 1048576:.1f}", f"{bound:.4f}",
                 f"{med:.4f} ({med / bound:.3f})",
                 f"{best['strategy']} {best['time_s']['median'] / bound:.3f}",
                 f"{med / best['time_s']['median']:.3f}",
                 f"{rows['send_recv']['time_s']['median'] / med:.2f}×",
                 f"{err['meshcast']:+.1%}", f"{err[worst]:+.1%} ({worst})",
                 str(sum(r["wrong"] for r in rows.values()))]
        print("| " + " | ".join(cells) + " |")


def table(path):
    results = json.load(open(path))["results"]
    cases = {}
    for r in results:
        cases.setdefault(r["case"], {})[r["strategy"]] = r
    if results and results[0].get("transport", "sim") != "sim":
        return measured(cases)
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
