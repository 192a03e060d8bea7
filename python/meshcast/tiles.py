"""Tensors as tiles, without copying: the data pointer of a numpy array (buffer protocol), a
CPU torch tensor (its accessors) or any other DLPack producer, or of numpy's array interface
where DLPack cannot export (read-only or bool arrays), checked against the layout's tile:
shape, dtype, contiguity, memory."""
from __future__ import annotations

import ctypes
import sys
from functools import lru_cache
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

from ._capi import DLTensor
from .errors import TileError
from .layout import Layout

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_from_address = DLTensor.from_address

# DLPack (code, bits) and numpy array-interface typestr per meshcast dtype.
_DLPACK = {"f64": (2, 64), "f32": (2, 32), "f16": (2, 16), "bf16": (4, 16), "i64": (0, 64),
           "i32": (0, 32), "i16": (0, 16), "i8": (0, 8), "u8": (1, 8), "bool": (6, 8)}
_DLPACK_NAMES = {v: k for k, v in _DLPACK.items()}
_TYPESTR = {"f8": "f64", "f4": "f32", "f2": "f16", "i8": "i64", "i4": "i32", "i2": "i16",
            "i1": "i8", "u1": "u8", "b1": "bool"}
_KDLCPU, _KDLCUDAHOST = 1, 3
TensorsLike = Union[Sequence[Any], Mapping[int, Any], "Tiles"]


def _contiguous(shape: Tuple[int, ...], strides: Optional[Tuple[int, ...]], unit: int) -> bool:
    """Row-major dense? strides in units of `unit` (elements for DLPack, bytes for numpy);
    dims of size 1 may have any stride."""
    if strides is None:
        return True
    want = unit
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != want:
            return False
        want *= n
    return True


def _from_dlpack(obj: Any) -> Tuple[int, Tuple[int, ...], str, bool]:
    cap = obj.__dlpack__()
    t = _from_address(_get_pointer(cap, b"dltensor"))
    if t.device_type not in (_KDLCPU, _KDLCUDAHOST):
        raise TileError(f"is on DLPack device type {t.device_type}; this build moves host "
                        f"memory only")
    nd = t.ndim
    shape = tuple(t.shape[:nd])
    strides = tuple(t.strides[:nd]) if t.strides else None
    dtype = _DLPACK_NAMES.get((t.code, t.bits)) if t.lanes == 1 else None
    if dtype is None:
        dtype = f"DLPack code {t.code} with {t.bits} bits x {t.lanes}"
    return (t.data or 0) + t.byte_offset, shape, dtype, _contiguous(shape, strides, 1)


def _from_array_interface(obj: Any, writable: bool) -> Tuple[int, Tuple[int, ...], str, bool]:
    ai = obj.__array_interface__
    ptr, readonly = ai["data"]
    if writable and readonly:
        raise TileError("is read-only")
    typestr = ai["typestr"]
    dtype = _TYPESTR.get(typestr[1:], typestr) if typestr[0] in "<|" else typestr
    shape = tuple(ai["shape"])
    itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 1
    return ptr, shape, dtype, _contiguous(shape, ai.get("strides"), itemsize)


_NUMPY_NAMES = {"f64": "float64", "f32": "float32", "f16": "float16", "i64": "int64",
                "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "bool": "bool"}
_TORCH_NAMES = dict(_NUMPY_NAMES, bf16="bfloat16")
_fast: dict = {}
_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _fast_types(dtype: str) -> Tuple[Any, Any, Any, Any]:
    """numpy.ndarray and the numpy dtype, torch.Tensor and the torch dtype of a meshcast
    dtype (None for a module not loaded yet), for the checks of the common cases."""
    key = (dtype, "numpy" in sys.modules, "torch" in sys.modules)
    got = _fast.get(key)
    if got is None:
        np, torch = sys.modules.get("numpy"), sys.modules.get("torch")
        got = (np.ndarray if np else None,
               np.dtype(_NUMPY_NAMES[dtype]) if np and dtype in _NUMPY_NAMES else None,
               torch.Tensor if torch else None,
               getattr(torch, _TORCH_NAMES[dtype]) if torch else None)
        _fast[key] = got
    return got


def tensor_pointer(obj: Any, shape: Tuple[int, ...], dtype: str, writable: bool) -> int:
    """The address of obj's data after checking it is a dense row-major `shape` of `dtype` in
    host memory. Raises TileError with what is wrong (the message starts lower-case, to
    follow a name of the tile)."""
    if hasattr(obj, "__dlpack__"):
        try:
            got = _from_dlpack(obj)  # DLPack has no read-only flag
        except (BufferError, RuntimeError, TypeError) as e:
            if not hasattr(obj, "__array_interface__"):
                raise TileError(f"cannot be exported through DLPack: {e}") from None
            got = _from_array_interface(obj, writable)
    elif hasattr(obj, "__array_interface__"):
        got = _from_array_interface(obj, writable)
    else:
        raise TileError(f"is a {type(obj).__name__}, not a tensor (no __dlpack__ or "
                        f"__array_interface__)")
    ptr, got_shape, got_dtype, contiguous = got
    if got_dtype != dtype:
        raise TileError(f"has dtype {got_dtype}, but the layout's dtype is {dtype}")
    if got_shape != shape:
        raise TileError(f"has shape {got_shape}, but the layout's tile is {shape}")
    if not contiguous:
        raise TileError("is not contiguous (row-major dense memory needed; "
                        "use .contiguous() or numpy.ascontiguousarray)")
    return ptr


class Tiles:
    """A layout's tiles bound to tensors, checked once. `tensors` is a sequence with one entry
    per mesh device in row-major order, or a mapping device id -> tensor; None (or a missing
    key) where this rank does not own the device. Passing Tiles to reshard repeatedly skips
    the per-call checks: the tensors must then stay as they are (not resized or freed) while
    bound; Tiles keeps them referenced."""

    def __init__(self, layout: Layout, tensors: Union[Sequence[Any], Mapping[int, Any]],
                 side: str = "src") -> None:
        devices = layout.mesh._devices
        if not isinstance(tensors, (list, tuple)):
            if isinstance(tensors, Mapping):
                unknown = [d for d in tensors if d not in devices]
                if unknown:
                    raise TileError(f"{side} tiles: device {unknown[0]} is not in the mesh")
                tensors = [tensors.get(d) for d in devices]
            else:
                tensors = list(tensors)
        if len(tensors) != len(devices):
            raise TileError(f"{side} tiles: {len(tensors)} given, but the mesh has "
                            f"{len(devices)} devices")
        self.layout = layout
        self.tensors: List[Any] = list(tensors)
        n = len(tensors)
        ptrs = [0] * n
        shapes = layout.tile_shapes
        ndarray, np_dtype, tensor, torch_dtype = _fast_types(layout.dtype)
        for i, t in enumerate(tensors):
            # The common cases first, checked inline without a DLPack capsule (this loop is
            # most of a reshard's Python cost): a numpy array through the buffer protocol
            # (which refuses non-contiguous and read-only arrays), a CPU torch tensor through
            # its accessors. Anything else, or a failed check, takes the general path, which
            # also names what is wrong.
            tp = type(t)
            if tp is ndarray and t.dtype is np_dtype and t.shape == shapes[i]:
                try:
                    ptrs[i] = _addressof(_from_buffer(t))
                    continue
                except (TypeError, ValueError, BufferError):
                    pass
            elif (tp is tensor and t.dtype is torch_dtype and t.is_cpu and t.shape == shapes[i]
                  and not t.requires_grad and t.is_contiguous()):
                ptrs[i] = t.data_ptr()
                continue
            elif t is None:
                continue
            try:
                ptrs[i] = tensor_pointer(t, shapes[i], layout.dtype, side == "dst")
            except TileError as e:
                raise TileError(f"{side} tile {i} (device {devices[i]}) {e}") from None
        # mc_buffer_t is {ptr, memory, stream}: three pointer-sized slots, HOST memory = 0.
        self.buffers = _buffer_array(n)()
        self.buffers[0::3] = ptrs


@lru_cache(maxsize=None)
def _buffer_array(n: int) -> Any:
    return ctypes.c_void_p * (3 * n)


def bind(layout: Layout, tensors: TensorsLike, side: str) -> Tiles:
    if isinstance(tensors, Tiles):
        if tensors.layout is not layout:
            raise TileError(f"{side} tiles were bound to another layout than the plan's")
        return tensors
    return Tiles(layout, tensors, side)
