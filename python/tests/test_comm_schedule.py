"""Communicators (in-process, threads world) and schedules."""
import json
import threading

import numpy as np
import pytest

import meshcast as mc


def test_in_process_communicator():
    with mc.Communicator(threads=2, timeout=5, progress="thread") as c:
        assert (c.rank, c.nranks, c.transport) == (0, 1, "local")
        assert c.allgather(b"ab") == [b"ab"]
        c.barrier()
        assert c.programs_compiled == 0
        assert "rank 0 of 1" in repr(c)
    with pytest.raises(mc.InvalidArgumentError, match="unknown transport"):
        mc.Communicator("carrier-pigeon")
    with pytest.raises(mc.InvalidArgumentError, match="needs its rank"):
        mc.Communicator(world=mc.World(2))


def test_threads_world_reshard():
    """Two thread ranks: rank 0's first device -> rank 1's first device."""
    topo = mc.Topology("cpu-testbed", hosts=2)
    d1 = topo.devices // 2
    assert (topo.owner(0, 2), topo.owner(d1, 2)) == (0, 1)
    src = mc.Layout((4, 8), "i32", mc.Mesh((1,), devices=[0]), "RR")
    dst = mc.Layout((4, 8), "i32", mc.Mesh((1,), devices=[d1]), "RR")
    plan = mc.Plan(src, dst, topo)
    data = np.arange(32, dtype=np.int32).reshape(4, 8)
    out = np.zeros_like(data)
    errors, names = [], {}

    def rank(r, world):
        try:
            with mc.Communicator(world=world, rank=r) as c:
                names[r] = (c.rank, c.nranks, c.allgather(bytes([r])))
                mc.reshard(c, plan, [data if r == 0 else None], [out if r == 1 else None])
        except Exception as e:  # reported by the main thread
            errors.append(e)

    with mc.World(2) as world:
        threads = [threading.Thread(target=rank, args=(r, world)) for r in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    assert names == {0: (0, 2, [b"\0", b"\1"]), 1: (1, 2, [b"\0", b"\1"])}
    assert (out == data).all()


def test_schedule_create_validate_simulate_export():
    with mc.Schedule("zb-h1", 4, 8) as s:
        info = s.info
        assert (info.kind, info.ranks, info.microbatches, info.nstages) == ("zb-h1", 4, 8, 4)
        assert info.split_backward and info.comm == "p2p"
        s.validate()
        assert s.stage_rank(3) == 3
        acts = s.actions(0)
        assert str(acts[0]) == "0F0" and acts[0].op == "F"
        assert {a.op for a in acts} >= {"F", "I", "W", "SEND_F", "RECV_B"}
        tl = s.simulate(f=1, b=2, w=1)
        st = tl.stats
        assert st.makespan > 0 and 0 <= st.bubble_fraction < 1
        assert tl.rank(0).busy == pytest.approx(8 * 3)
        trace = json.loads(tl.to_trace())
        assert trace
        assert tl.to_svg().startswith("<svg")
    s = mc.Schedule("interleaved-1f1b", 2, 4, chunks=2, comm="reshard", iterations=2)
    assert s.info.chunks == 2 and s.info.comm == "reshard" and s.info.iterations == 2
    tl = s.simulate(stage_costs=([1] * 4, [2] * 4, [1] * 4), comm=0.5, overlap=False)
    assert tl.stats.comm_time > 0
    assert mc.Schedule("1f1b", 4, 8, skips=[(0, 3)]).info.nstages == 4
    assert mc.Schedule("zb-auto", 4, 8, gen_costs=(1, 2, 1), gen_comm=0.1,
                       mem_limit=6).info.kind == "zb-auto"


def test_schedule_errors():
    with pytest.raises(mc.InvalidArgumentError, match="kind"):
        mc.Schedule("2f2b", 4, 8)
    with pytest.raises(mc.InvalidArgumentError) as e:
        mc.Schedule("interleaved-1f1b", 4, 6, chunks=2)  # m % p != 0
    assert str(e.value) and "\n" not in str(e.value)
    with pytest.raises(mc.InvalidArgumentError, match="one per stage"):
        mc.Schedule("1f1b", 4, 8).simulate(stage_costs=([1], [2], [1]))
