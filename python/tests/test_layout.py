"""Meshes, specs in three notations and as placements, dtypes, layouts and tiles."""
import subprocess

import numpy as np
import pytest

import meshcast as mc
from meshcast import Partial, Replicate, Shard


def test_mesh():
    m = mc.Mesh((2, 4), devices=range(8, 16), axis_names=("dp", "tp"))
    assert m.shape == (2, 4) and m.ndim == 2 and m.size == len(m) == 8
    assert m.devices == list(range(8, 16)) and m.axis_names == ("dp", "tp")
    assert m.index(10) == 2 and 10 in m and 3 not in m
    with pytest.raises(ValueError):
        m.index(3)
    p = mc.Mesh.parse("2x2", "0-1,8-9")
    assert p.devices == [0, 1, 8, 9] and p.axis_names == ("x", "y")
    assert mc.Mesh.parse("4", first_device=4).devices == [4, 5, 6, 7]
    assert mc.Mesh((2, 4)) == mc.Mesh.parse("2x4")


def test_mesh_errors_carry_the_c_message():
    with pytest.raises(mc.InvalidArgumentError) as e:
        mc.Mesh((2, 2), devices=[0, 1, 1, 2])
    assert "1" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(mc.Error):
        mc.Mesh.parse("2xq")


@pytest.mark.parametrize("text", ["S0R", "[Shard(0), Replicate()]", "P('x', None)"])
def test_three_notations_mean_the_same(text):
    m = mc.Mesh((2, 4))
    lay = mc.Layout((8, 6), "f32", m, text)
    assert lay.spec("alpa") == "S0R"
    assert lay.spec("dtensor") == "[Shard(0), Replicate()]"
    assert lay.spec("jax") == "P('x', None)"
    assert lay.placements == [Shard(0), Replicate()]


def test_placements_and_spec_objects():
    m = mc.Mesh((2, 4))
    lay = mc.Layout((8, 6), np.float32, m, [Replicate(), Shard(1)])
    assert lay.spec() == "RS1" and lay.dtype == "f32"
    part = mc.Layout((8, 6), "f32", m, [Shard(0), Partial("max")])
    assert part.placements == [Shard(0), Partial("max")]
    with mc.Spec("[Shard(0), Shard(0)]", m, 2) as sp:
        assert sp.ndim == 2 and sp.placements == [Shard(0), Shard(0)]
        assert sp.format("dtensor") == "[Shard(0), Shard(0)]"
        lay2 = mc.Layout((8, 6), "i32", m, sp)
        assert not sp.closed  # the caller's spec stays open
    assert lay2.spec("dtensor") == "[Shard(0), Shard(0)]"
    with pytest.raises(TypeError):
        mc.Layout((8, 6), "f32", m, [Shard(0), "R"])
    with pytest.raises(mc.InvalidArgumentError, match="notation"):
        lay.spec("xla")


def test_flat_cut_over_two_axes_is_not_dtensor():
    lay = mc.Layout((8, 6), "f32", mc.Mesh((2, 4)), "S01R")
    assert lay.spec("jax") == "P(('x', 'y'), None)"
    with pytest.raises(mc.UnsupportedError, match="cut flat"):
        lay.placements


def test_dtypes():
    import torch
    assert mc.dtype_name("float32") == "f32"
    assert mc.dtype_name(np.int64) == "i64"
    assert mc.dtype_name(np.dtype(bool)) == "bool"
    assert mc.dtype_name(torch.bfloat16) == "bf16"
    assert mc.dtype_name(torch.uint8) == "u8"
    with pytest.raises(mc.InvalidArgumentError):
        mc.dtype_name("complex64")


def test_tiles_follow_torch_chunk():
    m = mc.Mesh((1, 3))
    lay = mc.Layout((7, 4), "f64", m, "RS1")
    assert lay.tile_shapes == [(7, 2), (7, 2), (7, 0)]
    assert lay.tile(1) == ((0, 2), (7, 4))
    assert lay.tile_slices(1) == (slice(0, 7), slice(2, 4))
    assert lay.nbytes == 7 * 4 * 8 and lay.itemsize == 8
    with pytest.raises(mc.InvalidArgumentError, match="not in"):
        lay.tile(5)


def test_closed_handle_raises():
    m = mc.Mesh((2,))
    m.close()
    m.close()  # twice is fine
    with pytest.raises(mc.InvalidArgumentError, match="Mesh is closed"):
        m.ndim


@pytest.mark.parametrize("spec", ["S0X", "[Shard(2), Replicate()]", "P('q', None)", "SSS"])
def test_bad_spec_text_gives_the_commands_message(spec, meshcast_bin):
    """The exception's text is the C library's one-line message, as the command prints it."""
    with pytest.raises(mc.InvalidArgumentError) as e:
        mc.Layout((8, 8), "f32", mc.Mesh((2, 4)), spec)
    msg = str(e.value)
    assert msg and "\n" not in msg
    out = subprocess.run([meshcast_bin, "plan", "--shape", "8,8", "--src-mesh", "2x4",
                          "--src-spec", spec, "--dst-mesh", "2x4", "--dst-spec", "RR"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == f"meshcast: src spec: {msg}\n"
