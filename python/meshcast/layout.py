"""Sharding specs (three notations or placements), dtypes and layouts with their tiles."""
from __future__ import annotations

import ctypes
from typing import Any, List, Optional, Sequence, Tuple, Union

from ._capi import C, Box
from ._handle import Handle
from .errors import InvalidArgumentError, check
from .mesh import Mesh
from .placement import Partial, Placement, Replicate, Shard, placements_text

NOTATIONS = {"alpa": 0, "dtensor": 1, "jax": 2}
DTYPES = ("f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "bool")
SpecLike = Union[str, Sequence[Placement], "Spec"]


def dtype_name(dtype: Any) -> str:
    """meshcast's name ("f32") of a dtype given as text ("f32", "float32"), a numpy dtype or
    type, or a torch dtype."""
    if isinstance(dtype, str):
        text = dtype
    elif str(dtype).startswith("torch."):
        text = str(dtype)[len("torch."):]
    else:
        import numpy as np
        text = np.dtype(dtype).name
    out = ctypes.c_int()
    check(C.mc_dtype_parse(text.encode(), ctypes.byref(out)))
    return DTYPES[out.value]


def _format(spec_ptr: int, mesh_ptr: Optional[int], notation: str) -> str:
    if notation not in NOTATIONS:
        raise InvalidArgumentError(f"unknown notation '{notation}' (alpa, dtensor or jax)")
    buf = ctypes.create_string_buffer(4096)
    check(C.mc_spec_format(spec_ptr, mesh_ptr, NOTATIONS[notation], buf, len(buf)))
    return buf.value.decode()


def _placements(spec_ptr: int, mesh_ptr: int) -> List[Placement]:
    _format(spec_ptr, mesh_ptr, "dtensor")  # raises when DTensor cannot express the spec
    out: List[Placement] = [Replicate() for _ in range(C.mc_spec_mesh_ndim(spec_ptr))]
    for d in range(C.mc_spec_tensor_ndim(spec_ptr)):
        for k in range(C.mc_spec_dim_naxes(spec_ptr, d)):
            out[C.mc_spec_dim_axis(spec_ptr, d, k)] = Shard(d)
    for a in range(len(out)):
        op = C.mc_spec_axis_reduce(spec_ptr, a)
        if op:
            out[a] = Partial(C.mc_reduce_name(op).decode())
    return out


class Spec(Handle):
    """A sharding spec for a tensor of `ndim` dims on `mesh`, from Alpa ("S0R"), DTensor
    ("[Shard(0), Replicate()]") or JAX ("P('x', None)") text, or a list of placements."""

    _destroy = C.mc_spec_destroy

    def __init__(self, spec: Union[str, Sequence[Placement]], mesh: Mesh, ndim: int) -> None:
        text = spec if isinstance(spec, str) else placements_text(spec)
        out = ctypes.c_void_p()
        check(C.mc_spec_parse(text.encode(), mesh.ptr, ndim, ctypes.byref(out)))
        self._set(out.value)
        self.mesh = mesh

    @property
    def ndim(self) -> int:
        return C.mc_spec_tensor_ndim(self.ptr)

    def format(self, notation: str = "alpa") -> str:
        """The spec as text in a notation: "alpa", "dtensor" or "jax"."""
        return _format(self.ptr, self.mesh.ptr, notation)

    @property
    def placements(self) -> List[Placement]:
        return _placements(self.ptr, self.mesh.ptr)

    def __str__(self) -> str:
        return self.format("alpa")


class Layout(Handle):
    """A tensor's shape and dtype, a mesh and a spec: which box of the tensor each device
    holds. The spec may be text in any notation, a list of placements, or a Spec."""

    _destroy = C.mc_layout_destroy

    def __init__(self, shape: Sequence[int], dtype: Any, mesh: Mesh, spec: SpecLike) -> None:
        self.shape: Tuple[int, ...] = tuple(int(s) for s in shape)
        self.dtype = dtype_name(dtype)
        self.mesh = mesh
        sp = spec if isinstance(spec, Spec) else Spec(spec, mesh, len(self.shape))
        c_shape = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        out = ctypes.c_void_p()
        try:
            check(C.mc_layout_create(len(self.shape), c_shape, DTYPES.index(self.dtype),
                                     mesh.ptr, sp.ptr, ctypes.byref(out)))
        finally:
            if sp is not spec:  # a Spec the caller passed stays theirs
                sp.close()
        self._set(out.value)
        self._tiles: Optional[List[Tuple[int, ...]]] = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return C.mc_dtype_size(DTYPES.index(self.dtype))

    @property
    def nbytes(self) -> int:
        """Bytes of the whole tensor."""
        return C.mc_layout_bytes(self.ptr)

    def spec(self, notation: str = "alpa") -> str:
        """The spec as text: "alpa", "dtensor" or "jax"."""
        return _format(C.mc_layout_spec(self.ptr), self.mesh.ptr, notation)

    @property
    def placements(self) -> List[Placement]:
        return _placements(C.mc_layout_spec(self.ptr), self.mesh.ptr)

    def tile(self, device: int) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        """The box (lo, hi) of the tensor that a device holds, hi exclusive."""
        box = Box()
        check(C.mc_layout_tile(self.ptr, device, ctypes.byref(box)))
        n = self.ndim
        return tuple(box.lo[:n]), tuple(box.hi[:n])

    def tile_slices(self, device: int) -> Tuple[slice, ...]:
        """The device's tile as slices of the global tensor: tensor[layout.tile_slices(d)]."""
        lo, hi = self.tile(device)
        return tuple(slice(a, b) for a, b in zip(lo, hi))

    def tile_shape(self, device: int) -> Tuple[int, ...]:
        lo, hi = self.tile(device)
        return tuple(b - a for a, b in zip(lo, hi))

    @property
    def tile_shapes(self) -> List[Tuple[int, ...]]:
        """Tile shape per mesh index (row-major), computed once."""
        if self._tiles is None:
            self._tiles = [self.tile_shape(d) for d in self.mesh.devices]
        return self._tiles

    def __repr__(self) -> str:
        return f"Layout({self.shape}, '{self.dtype}', {self.mesh!r}, '{self.spec()}')"
