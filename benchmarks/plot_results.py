#!/usr/bin/python3
"""Turns `meshcast bench --json FILE` output into PNG and SVG charts. Run it with Debian's
python, which has python3-matplotlib (a pyenv `python3` may not):
    /usr/bin/python3 benchmarks/plot_results.py --out-dir DIR [--title TEXT] FILE.json [...]
For each FILE.json (stem = file name without .json) it writes into DIR:
  STEM-time-vs-bound.{png,svg}    median time / lower bound per case and strategy, min..max
                                  as error bars, lines at 1.0 (bound) and 1.25 (target)
  STEM-speedup.{png,svg}          send_recv median / strategy median per case, line at 1
  STEM-sim-vs-measured.{png,svg}  estimate_s vs measured median, log-log, y=x and +-25% lines
and prints per case meshcast's median/bound and speedup over send_recv, plus how many rows
are off the estimate by more than 25%. Files without time_s get no charts; `--transport sim`
files (time = estimate) get no sim-vs-measured chart. Bad input exits 2 with one line."""
import argparse
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")  # no display on benchmark hosts
import matplotlib.pyplot as plt

# Strategies in plot order, with fixed colours so charts of different files compare at a
# glance; meshcast stands out.
COLOR = {"send_recv": "#7f7f7f", "local_allgather": "#9ecae1", "broadcast_first": "#6baed6",
         "broadcast_lb_size": "#3182bd", "broadcast_lb_order": "#08519c", "meshcast": "#e6550d"}
NEEDED = ("case", "strategy", "estimate_s", "lower_bound_s")


def fail(msg):
    print(f"plot_results.py: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except ValueError as e:
        fail(f"{path}: bad JSON: {e}")
    rows = data.get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        fail(f"{path}: no results")
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or any(k not in r for k in NEEDED):
            fail(f"{path}: result {i} lacks one of {', '.join(NEEDED)}")
        t = r.get("time_s")  # optional: sim-only output may lack it
        times = [t.get(k) for k in ("median", "min", "max")] if isinstance(t, dict) else [t]
        vals = [r["estimate_s"], r["lower_bound_s"]] + (times if t is not None else [])
        if not all(isinstance(v, (int, float)) for v in vals):
            fail(f"{path}: result {i} has a non-numeric time, estimate or bound")
    if not any(r["strategy"] in COLOR for r in rows):
        fail(f"{path}: no results for a known strategy")
    return rows


def median(r):
    return r["time_s"]["median"]


def speedup(base, r):  # send_recv median / r's median, None where undefined
    return median(base) / median(r) if base and median(r) > 0 else None


def grouped_bars(cases, value):
    """One group per case, one bar per strategy; value(row) -> (height, (lo, hi)) or None."""
    # ~1 inch per case keeps six bars per group readable.
    fig, ax = plt.subplots(figsize=(max(7.0, 1.1 * len(cases) + 2), 5.0))
    names = [s for s in COLOR if any(s in c for c in cases.values())]
    width = 0.8 / len(names)
    for k, s in enumerate(names):
        bars = []
        for x, rows in enumerate(cases.values()):
            v = value(rows[s]) if s in rows else None
            if v:
                h, (a, b) = v
                bars.append((x - 0.4 + (k + 0.5) * width, h, h - a, b - h))
        xs, hs, lo, hi = (list(c) for c in zip(*bars)) if bars else ([], [], [], [])
        err = [lo, hi] if any(lo + hi) else None  # no caps when there is no spread to show
        ax.bar(xs, hs, width, yerr=err, capsize=2, color=COLOR[s], label=s,
               edgecolor="black" if s == "meshcast" else "none", linewidth=0.8,
               error_kw={"elinewidth": 0.7, "ecolor": "#333333"})
    ax.set_xticks(range(len(cases)))
    tilt = len(cases) * max(len(c) for c in cases) > 80  # only when names would collide
    ax.set_xticklabels(list(cases), rotation=30 if tilt else 0, ha="right" if tilt else "center")
    ax.set_xlim(-0.6, len(cases) - 0.4)
    return fig, ax


def save(fig, ax, out_dir, stem, kind):
    # Legend right of the axes: it never covers bars, points or tilted case names.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1, fontsize=8, frameon=False)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, f"{stem}-{kind}.{ext}"), dpi=150)
    plt.close(fig)


def plot_ratio(cases, out_dir, stem, title, what):
    def value(r):
        b, t = r["lower_bound_s"], r["time_s"]
        return (t["median"] / b, (t["min"] / b, t["max"] / b)) if b > 0 else None
    fig, ax = grouped_bars(cases, value)
    top = max((v[1][1] for c in cases.values() for r in c.values() if (v := value(r))), default=1)
    if top > 20:  # one slow strategy would otherwise flatten all the others
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter("{x:g}")  # "10", not "10^1"
    ax.axhline(1.0, color="black", lw=1, label="lower bound (1.0)")
    ax.axhline(1.25, color="green", lw=1, ls="--", label="target (1.25)")
    ax.set(ylabel=f"{what} time / lower bound",
           title=f"{title}: {what} time relative to the lower bound")
    ax.grid(axis="y", alpha=0.3, which="both")
    save(fig, ax, out_dir, stem, "time-vs-bound")


def plot_speedup(cases, out_dir, stem, title, what):
    def value(r):
        s = speedup(cases[r["case"]].get("send_recv"), r)
        return None if s is None else (s, (s, s))
    fig, ax = grouped_bars(cases, value)
    ax.axhline(1.0, color="black", lw=1, label="send_recv (1.0)")
    ax.set(ylabel=f"speedup over send_recv ({what} median)",
           title=f"{title}: speedup over send_recv")
    ax.grid(axis="y", alpha=0.3)
    save(fig, ax, out_dir, stem, "speedup")


def plot_scatter(rows, out_dir, stem, title):
    fig, ax = plt.subplots(figsize=(6.5, 6.0))
    for s in COLOR:
        pts = [(r["estimate_s"], median(r)) for r in rows if r["strategy"] == s]
        if pts:
            ax.scatter(*zip(*pts), s=40 if s == "meshcast" else 22, color=COLOR[s], label=s,
                       edgecolors="black" if s == "meshcast" else "none", zorder=3)
    vals = [v for r in rows for v in (r["estimate_s"], median(r)) if v > 0]
    lo, hi = min(vals, default=1e-3) / 1.5, max(vals, default=1.0) * 1.5
    ax.plot([lo, hi], [lo, hi], color="black", lw=1, label="measured = estimate")
    for f, lab in ((1.25, "±25%"), (0.75, None)):
        ax.plot([lo, hi], [lo * f, hi * f], color="gray", lw=0.8, ls="--", label=lab)
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi),
           xlabel="cost-model estimate (s)", ylabel="measured median (s)",
           title=f"{title}: estimate vs measured")
    ax.grid(alpha=0.3, which="both")
    save(fig, ax, out_dir, stem, "sim-vs-measured")


def summarize(stem, rows, cases, measured):
    print(f"{stem}: {len(rows)} rows, {len(cases)} cases")
    for name, c in cases.items():
        m, base = c.get("meshcast"), c.get("send_recv")
        if not m:
            print(f"  {name}: no meshcast row")
            continue
        b = m["lower_bound_s"]
        ratio = f"{median(m) / b:.3f}x bound" if b > 0 else "bound 0"
        speed = "" if (s := speedup(base, m)) is None else f", {s:.2f}x over send_recv"
        print(f"  {name}: meshcast {ratio}{speed}")
    if measured:
        off = sum(1 for r in rows
                  if r["estimate_s"] > 0 and abs(median(r) / r["estimate_s"] - 1) > 0.25)
        print(f"  rows with |median/estimate - 1| > 0.25: {off} of {len(rows)}")


def main():
    ap = argparse.ArgumentParser(description="Plot `meshcast bench --json` results.")
    ap.add_argument("--out-dir", required=True, help="directory for the PNG and SVG files")
    ap.add_argument("--title", help="chart title prefix (default: the file stem)")
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    args = ap.parse_args()
    loaded = [(p, load(p)) for p in args.files]  # check every file before writing anything
    try:
        os.makedirs(args.out_dir, exist_ok=True)
    except OSError as e:
        fail(f"{args.out_dir}: {e.strerror}")
    for path, rows in loaded:
        stem = os.path.splitext(os.path.basename(path))[0]
        # One --title for several files would make their charts indistinguishable.
        title = f"{args.title} ({stem})" if args.title and len(loaded) > 1 else args.title or stem
        cases = {}  # {case: {strategy: row}} in file order, known strategies only
        for r in rows:
            if r["strategy"] in COLOR:
                cases.setdefault(r["case"], {})[r["strategy"]] = r
        if not all(isinstance(r.get("time_s"), dict) for r in rows):
            print(f"{stem}: no time_s in some rows (sim-only output?); skipping its charts")
            continue
        sim = all(r.get("transport") == "sim" for r in rows)
        what = "simulated" if sim else "measured"
        plot_ratio(cases, args.out_dir, stem, title, what)
        plot_speedup(cases, args.out_dir, stem, title, what)
        if sim:
            print(f"{stem}: transport sim (time = estimate); skipping sim-vs-measured chart")
        else:
            plot_scatter(rows, args.out_dir, stem, title)
        summarize(stem, rows, cases, not sim)


if __name__ == "__main__":
    main()
