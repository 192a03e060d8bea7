"""One rank of the multi-process test (test_ucx.py): a UCX communicator bootstrapped from the
environment (MESHCAST_RANK/NRANKS/ROOT) or mpirun, a cross-mesh reshard of its own tiles, and a
byte-exact check of the tiles it receives. Prints "rank R of N: ok, B bytes checked"."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import meshcast as mc  # noqa: E402

SHAPE = (64, 48, 8)


def main() -> int:
    with mc.Communicator("ucx", timeout=60) as comm:
        topo = mc.Topology("p3.8xlarge", hosts=2)  # devices 0-7
        src = mc.Layout(SHAPE, "i32", mc.Mesh((2, 2), devices=[0, 1, 2, 3]), "S0S1R")
        dst = mc.Layout(SHAPE, "i32", mc.Mesh((2, 2), devices=[4, 5, 6, 7]),
                        "[Replicate(), Shard(2)]")
        plan = mc.Plan(src, dst, topo)
        rng = np.random.default_rng(7)
        g = rng.integers(-2**31, 2**31, size=SHAPE, dtype=np.int64).astype(np.int32)
        mine = lambda lay: [d for d in lay.mesh.devices if topo.owner(d, comm.nranks) == comm.rank]
        s = {d: np.ascontiguousarray(g[src.tile_slices(d)]) for d in mine(src)}
        out = {d: np.full(dst.tile_shape(d), -1, np.int32) for d in mine(dst)}
        req = mc.reshard_start(comm, plan, s, out)
        req.wait()
        req.close()
        checked = 0
        for d, t in out.items():
            want = np.ascontiguousarray(g[dst.tile_slices(d)])
            if t.tobytes() != want.tobytes():
                print(f"rank {comm.rank}: device {d}: wrong bytes", file=sys.stderr)
                return 1
            checked += t.nbytes
        comm.barrier()
        # one write, flushed: mpirun forwards each rank's output in chunks as they come
        sys.stdout.write(f"rank {comm.rank} of {comm.nranks} ({comm.transport}): ok, "
                         f"{checked} bytes checked\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
