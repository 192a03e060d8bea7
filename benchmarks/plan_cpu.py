#!/usr/bin/env python3
"""Plan CPU time of two builds on the scale benchmark, side by side (docs/planning.md,
"Planning speed").

For each seed, runs `meshcast bench --generate 250 --seed S --strategy meshcast` with each build
in turn, `--runs` times (default 3), and keeps per case the least `plan_cpu_ms` (process CPU
time of mc_plan_create): the least of several runs is what the plan costs with the machine's
other work taken out. Prints the load average before and after, then per seed and build the
median, p90 and max with the slowest cases, and how many cases are above 100 ms and 70 ms.

    benchmarks/plan_cpu.py BEFORE/meshcast AFTER/meshcast [SEED ...]   (default 1 2 3 4 5)
"""
import argparse
import os
import subprocess


def run(meshcast, seed, cases, strategy):
    out = subprocess.run([meshcast, "bench", "--generate", str(cases), "--seed", str(seed),
                          "--strategy", strategy], capture_output=True, text=True, check=True)
    ms = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) >= 9 and not line.startswith("#") and f[0] != "case":
            ms[f[0]] = float(f[8])
    return ms


def summary(ms):
    v = sorted(ms.values())
    top = sorted(ms.items(), key=lambda kv: -kv[1])[:4]
    return (f"p50 {v[len(v) // 2]:6.2f}  p90 {v[len(v) * 9 // 10]:6.1f}  max {v[-1]:6.1f}  "
            f">100 ms {sum(x > 100 for x in v):2d}  >70 ms {sum(x > 70 for x in v):2d}  "
            f"sum {sum(v):6.0f}  slowest " + ", ".join(f"{k} {x:.0f}" for k, x in top))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("seeds", nargs="*", type=int, default=[1, 2, 3, 4, 5])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", type=int, default=250)
    ap.add_argument("--strategy", default="meshcast")
    args = ap.parse_args()
    print("# load average before: %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    for seed in args.seeds:
        least = {"before": {}, "after": {}}
        for _ in range(args.runs):
            for name in ("before", "after"):
                for case, ms in run(getattr(args, name), seed, args.cases, args.strategy).items():
                    least[name][case] = min(least[name].get(case, ms), ms)
        for name in ("before", "after"):
            print(f"seed {seed} {name:6s} {summary(least[name])}", flush=True)
    print("# load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
