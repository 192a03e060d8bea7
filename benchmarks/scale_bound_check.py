#!/usr/bin/env python3
"""The lower bound's validity on the scale benchmark (docs/planning.md, "Scale benchmark").

For every case of the given seeds and every strategy's plan, the simulator's estimate must not
be below the lower bound (both from `meshcast bench --generate 250 --seed S --strategy all
--json`, 10 significant digits). Prints per seed the plans checked and the least
estimate / bound; exits 1 naming every plan below its bound.

    benchmarks/scale_bound_check.py [--meshcast build/meshcast] [SEED ...]   (default 1 2 3)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meshcast", default="build/meshcast")
    ap.add_argument("--cases", type=int, default=250)
    ap.add_argument("seeds", nargs="*", type=int, default=[1, 2, 3])
    args = ap.parse_args()
    bad = 0
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.json")
            subprocess.run([args.meshcast, "bench", "--generate", str(args.cases), "--seed",
                            str(seed), "--strategy", "all", "--json", path],
                           check=True, stdout=subprocess.DEVNULL)
            with open(path) as f:
                results = json.load(f)["results"]
        least, at = float("inf"), ""
        for r in results:
            est, bound = r["estimate_s"], r["lower_bound_s"]
            ratio = est / bound if bound > 0 else float("inf")
            if ratio < least:
                least, at = ratio, f'{r["case"]} {r["strategy"]}'
            if est < bound * (1 - 1e-9):
                bad += 1
                print(f'seed {seed}: {r["case"]} {r["strategy"]}: estimate {est:.9g} s < '
                      f'bound {bound:.9g} s')
        print(f"seed {seed}: {len(results)} plans, least estimate/bound {least:.6f} ({at})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
