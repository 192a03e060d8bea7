#!/usr/bin/python3
"""Overhead of the Python package's reshard over the C call it makes: a 16-device in-process
plan (a 2x4 mesh, devices 0-7, S01R -> another 2x4 mesh, devices 8-15, RS01) of a (8, 1024)
f32 tensor, so every one of the 16 tiles is 4 KiB. Per round, interleaved so that a busy
machine slows each variant alike, it times a block of calls of:
  c       mc_reshard through ctypes on prebuilt mc_buffer_t arrays (the C call itself)
  numpy   meshcast.reshard(comm, plan, src, dst) on lists of numpy arrays (checked each call)
  torch   the same on torch CPU tensors (DLPack)
  tiles   meshcast.reshard on meshcast.Tiles bound once (no per-call checks)
and reports the median per-call time of each and its overhead over c (median over rounds of
the per-round difference), in microseconds of the calling thread's CPU time (which does all
of the Python work; wall time on a shared, loaded machine is mostly other processes' turns).
Every destination is checked afterwards.
usage: python_overhead.py [--rounds N] [--calls N]   (defaults 41 and 200)"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import meshcast as mc  # noqa: E402
from meshcast._capi import C  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    import torch

    shape = (8, 1024)
    src = mc.Layout(shape, "f32", mc.Mesh((2, 4)), "S01R")
    dst = mc.Layout(shape, "f32", mc.Mesh((2, 4), devices=range(8, 16)), "RS01")
    plan = mc.Plan(src, dst, mc.Topology("p3.8xlarge", hosts=4))
    g = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    s_np = [np.ascontiguousarray(g[src.tile_slices(d)]) for d in src.mesh.devices]
    d_np = [np.zeros(t, np.float32) for t in dst.tile_shapes]
    s_t = [torch.from_numpy(a.copy()) for a in s_np]
    d_t = [torch.zeros(t) for t in dst.tile_shapes]
    assert all(a.nbytes == 4096 for a in s_np + d_np)
    comm = mc.Communicator()
    s_tiles, d_tiles = mc.Tiles(src, s_np, "src"), mc.Tiles(dst, d_np, "dst")
    reshard, raw = mc.reshard, C.mc_reshard
    cp, pp, sb, db = comm.ptr, plan.ptr, s_tiles.buffers, d_tiles.buffers

    def c_call():
        assert raw(cp, pp, sb, db, None) == 0

    variants = {
        "c": c_call,
        "numpy": lambda: reshard(comm, plan, s_np, d_np),
        "torch": lambda: reshard(comm, plan, s_t, d_t),
        "tiles": lambda: reshard(comm, plan, s_tiles, d_tiles),
    }
    for f in variants.values():  # warm-up: compiles and caches the program
        for _ in range(20):
            f()
    times = {k: [] for k in variants}
    for _ in range(args.rounds):
        for name, f in variants.items():
            t0 = time.thread_time()
            for _ in range(args.calls):
                f()
            times[name].append((time.thread_time() - t0) / args.calls * 1e6)
    for i, d in enumerate(dst.mesh.devices):
        want = g[dst.tile_slices(d)]
        assert (d_np[i] == want).all() and (d_t[i].numpy() == want).all(), "wrong bytes"
    print(f"# {len(src.mesh.devices) + len(dst.mesh.devices)} tiles of 4 KiB, "
          f"{args.rounds} rounds x {args.calls} calls, median thread CPU us per call")
    print(f"{'variant':8} {'per_call_us':>12} {'overhead_us':>12}")
    for name in variants:
        diff = statistics.median(a - c for a, c in zip(times[name], times["c"]))
        print(f"{name:8} {statistics.median(times[name]):12.2f} {diff:12.2f}")
    comm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
