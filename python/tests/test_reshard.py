"""reshard and reshard_start on numpy arrays and torch tensors: results, zero copy, and the
tile checks (shape, dtype, contiguity, read-only, count) with their messages."""
import numpy as np
import pytest
import torch

import meshcast as mc

SHAPE = (8, 1024)


def _plan(src_spec="S01R", dst_spec="RS1", dtype="f32"):
    src = mc.Layout(SHAPE, dtype, mc.Mesh((2, 4)), src_spec)
    dst = mc.Layout(SHAPE, dtype, mc.Mesh((2, 4), devices=range(8, 16)), dst_spec)
    return mc.Plan(src, dst, mc.Topology("p3.8xlarge", hosts=4))


def _global(dtype=np.float32):
    return np.arange(np.prod(SHAPE)).astype(dtype).reshape(SHAPE)


def _src(plan, g, convert=np.ascontiguousarray):
    return [convert(g[plan.src.tile_slices(d)]) for d in plan.src.mesh.devices]


def _check(plan, g, dst):
    for i, d in enumerate(plan.dst.mesh.devices):
        np.testing.assert_array_equal(np.asarray(dst[i]), g[plan.dst.tile_slices(d)])


def test_reshard_numpy(comm):
    plan, g = _plan(), _global()
    dst = [np.zeros(s, np.float32) for s in plan.dst.tile_shapes]
    mc.reshard(comm, plan, _src(plan, g), dst)
    _check(plan, g, dst)
    # A mapping device id -> tensor works too.
    dst2 = {d: np.zeros(plan.dst.tile_shape(d), np.float32) for d in plan.dst.mesh.devices}
    mc.reshard(comm, plan, dict(zip(plan.src.mesh.devices, _src(plan, g))), dst2,
               chunk_bytes=1024)
    _check(plan, g, [dst2[d] for d in plan.dst.mesh.devices])
    assert comm.programs_compiled == 2  # the chunk override compiles a second program


def test_reshard_torch_in_place(comm):
    """Zero copy: the destination tensors' own memory is written; nothing is reallocated."""
    plan, g = _plan(dtype="i64"), _global(np.int64)
    src = _src(plan, g, lambda a: torch.from_numpy(np.ascontiguousarray(a)))
    dst = [torch.zeros(s, dtype=torch.int64) for s in plan.dst.tile_shapes]
    ptrs = [t.data_ptr() for t in dst]
    aliases = [t.view(-1) for t in dst]  # views sharing the storage see the bytes
    mc.reshard(comm, plan, src, dst)
    assert [t.data_ptr() for t in dst] == ptrs
    _check(plan, g, [a.view(t.shape).numpy() for a, t in zip(aliases, dst)])


def test_zero_copy_numpy_views_of_one_buffer(comm):
    """Tiles may be views into one big preallocated buffer: it is written in place."""
    plan, g = _plan(), _global()
    n = len(plan.dst.tile_shapes)
    pool = np.zeros((n,) + plan.dst.tile_shapes[0], np.float32)
    mc.reshard(comm, plan, _src(plan, g), list(pool))
    _check(plan, g, list(pool))
    # The source is read, never written: read-only sources are accepted.
    ro = _src(plan, g)
    for a in ro:
        a.flags.writeable = False
    pool[:] = 0
    mc.reshard(comm, plan, ro, list(pool))
    _check(plan, g, list(pool))


def test_reshard_start_test_wait(comm):
    plan, g = _plan(), _global()
    dst = [np.zeros(s, np.float32) for s in plan.dst.tile_shapes]
    with mc.reshard_start(comm, plan, _src(plan, g), dst) as req:
        while not req.test():
            pass
        req.wait()  # done: returns at once
    assert req.closed
    _check(plan, g, dst)
    r2 = mc.reshard_start(comm, plan, _src(plan, g), dst)
    r2.wait()
    comm.close()  # frees the open request first
    assert r2.closed


def test_tiles_bound_once(comm):
    plan, g = _plan(), _global()
    dst = [np.zeros(s, np.float32) for s in plan.dst.tile_shapes]
    s, d = mc.Tiles(plan.src, _src(plan, g), "src"), mc.Tiles(plan.dst, dst, "dst")
    for _ in range(3):
        mc.reshard(comm, plan, s, d)
    _check(plan, g, dst)
    with pytest.raises(mc.TileError, match="another layout"):
        mc.reshard(comm, plan, d, d)


def _error(comm, plan, src, dst):
    with pytest.raises(mc.TileError) as e:
        mc.reshard(comm, plan, src, dst)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_tile_errors(comm):
    plan, g = _plan(), _global()
    src = _src(plan, g)
    dst = [np.zeros(s, np.float32) for s in plan.dst.tile_shapes]
    bad = list(dst)
    bad[3] = np.zeros(plan.dst.tile_shapes[3], np.float64)
    assert _error(comm, plan, src, bad) == ("dst tile 3 (device 11) has dtype f64, but the "
                                            "layout's dtype is f32")
    bad[3] = np.zeros((8, 255), np.float32)
    assert _error(comm, plan, src, bad) == ("dst tile 3 (device 11) has shape (8, 255), but the "
                                            "layout's tile is (8, 256)")
    bad[3] = np.zeros((256, 8), np.float32).T
    assert _error(comm, plan, src, bad).startswith("dst tile 3 (device 11) is not contiguous")
    tsrc = [torch.from_numpy(a) for a in src]
    tsrc[2] = torch.zeros(2048, 1)[::2].t()  # shape (1, 1024), every other element
    assert _error(comm, plan, tsrc, dst).startswith("src tile 2 (device 2) is not contiguous")
    ro = np.zeros(plan.dst.tile_shapes[0], np.float32)
    ro.flags.writeable = False
    assert _error(comm, plan, src, [ro] + dst[1:]) == "dst tile 0 (device 8) is read-only"
    assert _error(comm, plan, src, dst[:7]) == "dst tiles: 7 given, but the mesh has 8 devices"
    assert _error(comm, plan, src, {99: dst[0]}) == "dst tiles: device 99 is not in the mesh"
    assert _error(comm, plan, ["x"] + src[1:], dst) == (
        "src tile 0 (device 0) is a str, not a tensor (no __dlpack__ or __array_interface__)")
    grad = torch.zeros(1, 1024, requires_grad=True)
    assert "cannot be exported through DLPack" in _error(comm, plan, [grad] + src[1:], dst)


def test_missing_tile_of_an_owned_device_is_the_c_error(comm):
    plan, g = _plan(), _global()
    dst = [np.zeros(s, np.float32) for s in plan.dst.tile_shapes]
    dst[5] = None
    with pytest.raises(mc.InvalidArgumentError) as e:
        mc.reshard(comm, plan, _src(plan, g), dst)
    assert str(e.value) == "dst buffer of mesh index 5 is NULL (this rank owns that device)"


def test_request_keeps_its_tensors_alive(comm):
    """reshard_start on temporaries: the request holds them until it is closed."""
    import gc
    plan, g = _plan(), _global()
    req = mc.reshard_start(comm, plan, _src(plan, g),
                           [np.zeros(s, np.float32) for s in plan.dst.tile_shapes])
    gc.collect()
    req.wait()
    _check(plan, g, req.dst.tensors)
    req.close()
