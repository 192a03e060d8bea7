"""redistribute: DTensor-style (mesh, placements) -> (mesh, placements), across meshes."""
import threading

import numpy as np
import pytest
import torch

import meshcast as mc
from meshcast import Partial, Replicate, Shard


def _shards(g, mesh, placements):
    lay = mc.Layout(g.shape, g.dtype, mesh, placements)
    return {d: g[lay.tile_slices(d)].clone() for d in mesh.devices}, lay


def test_cross_mesh_in_process_torch():
    g = torch.arange(8 * 12, dtype=torch.float32).reshape(8, 12)
    src_mesh = mc.Mesh((2, 2), devices=[0, 1, 2, 3], axis_names=("dp", "tp"))
    dst_mesh = mc.Mesh((3,), devices=[4, 5, 6])
    local, _ = _shards(g, src_mesh, [Shard(0), Shard(1)])
    out = mc.redistribute(local, (src_mesh, [Shard(0), Shard(1)]), (dst_mesh, [Shard(1)]))
    lay = mc.Layout(g.shape, "f32", dst_mesh, [Shard(1)])
    assert set(out) == {4, 5, 6}
    for d, t in out.items():
        assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
        assert torch.equal(t, g[lay.tile_slices(d)])
    # List form, numpy, same mesh, explicit shape (uneven: 7 rows over 2).
    a = np.arange(7 * 4, dtype=np.int16).reshape(7, 4)
    m = mc.Mesh((2,))
    src = [a[:4], a[4:]]
    out = mc.redistribute(src, (m, [Shard(0)]), (m, [Replicate()]), shape=(7, 4))
    assert len(out) == 2 and all((o == a).all() for o in out)


def test_plans_are_cached():
    g = torch.ones(4, 4)
    m1, m2 = mc.Mesh((2,)), mc.Mesh((2,), devices=[2, 3])
    with mc.Communicator() as comm:
        for _ in range(3):
            local, _ = _shards(g, m1, [Shard(0)])
            mc.redistribute(local, (m1, [Shard(0)]), (m2, [Shard(1)]), comm=comm)
        assert comm.programs_compiled == 1


def test_one_shard_per_thread_rank_across_meshes():
    """DTensor's setting, one device per rank, which DTensor cannot do across meshes: ranks 0
    and 1 hold the src mesh's shards, ranks 2 and 3 receive the dst mesh's."""
    g = torch.arange(6 * 10, dtype=torch.int32).reshape(6, 10)
    src_mesh, dst_mesh = mc.Mesh((2,), devices=[0, 1]), mc.Mesh((2,), devices=[2, 3])
    shards, _ = _shards(g, src_mesh, [Shard(1)])
    results, errors = {}, []

    def rank(r, world):
        try:
            with mc.Communicator(world=world, rank=r) as comm:
                local = shards.get(r)
                results[r] = mc.redistribute(local, (src_mesh, [Shard(1)]),
                                             (dst_mesh, [Shard(0)]), comm=comm,
                                             shape=g.shape, dtype=torch.int32)
        except Exception as e:
            errors.append(e)

    with mc.World(4) as world:
        ts = [threading.Thread(target=rank, args=(r, world)) for r in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert not errors, errors
    assert results[0] is None and results[1] is None
    assert torch.equal(results[2], g[:3]) and torch.equal(results[3], g[3:])


def test_partial_sum_is_reduced():
    m = mc.Mesh((2,))
    parts = {0: np.full((2, 3), 1.5, np.float64), 1: np.full((2, 3), 2.0, np.float64)}
    out = mc.redistribute(parts, (m, [Partial("sum")]), (m, [Replicate()]),
                          strategy="send_recv")
    assert all((o == 3.5).all() for o in out.values())


def test_redistribute_errors():
    m = mc.Mesh((2,))
    with pytest.raises(mc.InvalidArgumentError, match="owns 2 devices"):
        mc.redistribute(torch.ones(2, 2), (m, [Shard(0)]), (m, [Replicate()]))
    with pytest.raises(mc.InvalidArgumentError, match="no shard for src device 1"):
        mc.redistribute({0: torch.ones(2, 2)}, (m, [Shard(0)]), (m, [Replicate()]))
    with pytest.raises(mc.InvalidArgumentError, match="3 shards given"):
        mc.redistribute([torch.ones(1)] * 3, (m, [Shard(0)]), (m, [Replicate()]))
    with pytest.raises(mc.TileError, match="has shape"):
        mc.redistribute([torch.ones(2, 2), torch.ones(3, 2)], (m, [Shard(0)]),
                        (m, [Replicate()]))
