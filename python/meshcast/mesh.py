"""Device meshes: an N-d array of distinct device ids with axis names."""
from __future__ import annotations

import ctypes
from typing import List, Optional, Sequence, Tuple

from ._capi import C
from ._handle import Handle
from .errors import check


class Mesh(Handle):
    """A device mesh. Mesh((2, 4)) is devices 0..7 in a 2x4 array with axes "x", "y";
    Mesh((2, 4), devices=range(8, 16), axis_names=("dp", "tp")) names both."""

    _destroy = C.mc_mesh_destroy

    def __init__(self, shape: Sequence[int], devices: Optional[Sequence[int]] = None,
                 axis_names: Optional[Sequence[str]] = None) -> None:
        ndim = len(shape)
        c_shape = (ctypes.c_int64 * max(ndim, 1))(*shape)
        c_dev = None
        if devices is not None:
            devices = list(devices)
            c_dev = (ctypes.c_int64 * max(len(devices), 1))(*devices)
        c_names = None
        if axis_names is not None:
            c_names = (ctypes.c_char_p * max(ndim, 1))(*[n.encode() for n in axis_names])
        out = ctypes.c_void_p()
        check(C.mc_mesh_create(ndim, c_shape, c_dev, c_names, ctypes.byref(out)))
        self._set(out.value)

    def _set(self, ptr: Optional[int]) -> None:
        """A mesh never changes: its devices are read once (tiles are matched against them
        on every reshard)."""
        super()._set(ptr)
        self._devices = tuple(C.mc_mesh_device(ptr, i) for i in range(C.mc_mesh_size(ptr)))

    @classmethod
    def parse(cls, shape: str, devices: Optional[str] = None, first_device: int = 0) -> "Mesh":
        """The command line's text: shape "2x4", devices "0-3,8-11" (None: first_device..)."""
        out = ctypes.c_void_p()
        check(C.mc_mesh_parse(shape.encode(), devices.encode() if devices else None,
                              first_device, ctypes.byref(out)))
        return cls._adopt(out.value)

    @classmethod
    def _adopt(cls, ptr: int) -> "Mesh":
        m = cls.__new__(cls)
        m._set(ptr)
        return m

    @property
    def ndim(self) -> int:
        return C.mc_mesh_ndim(self.ptr)

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(C.mc_mesh_axis_size(self.ptr, a) for a in range(self.ndim))

    @property
    def size(self) -> int:
        """Number of devices."""
        return len(self._devices)

    def __len__(self) -> int:
        return self.size

    @property
    def devices(self) -> List[int]:
        """Device ids in row-major order."""
        return list(self._devices)

    @property
    def axis_names(self) -> Tuple[str, ...]:
        return tuple(C.mc_mesh_axis_name(self.ptr, a).decode() for a in range(self.ndim))

    def index(self, device: int) -> int:
        """Row-major index of a device id; ValueError when it is not in the mesh."""
        i = C.mc_mesh_find(self.ptr, device)
        if i < 0:
            raise ValueError(f"device {device} is not in the mesh")
        return i

    def __contains__(self, device: object) -> bool:
        return isinstance(device, int) and C.mc_mesh_find(self.ptr, device) >= 0

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Mesh) and self.shape == other.shape
                and self.devices == other.devices and self.axis_names == other.axis_names)

    def __hash__(self) -> int:
        return hash((self.shape, tuple(self.devices), self.axis_names))

    def __repr__(self) -> str:
        return (f"Mesh({self.shape}, devices={self.devices}, "
                f"axis_names={self.axis_names})")
