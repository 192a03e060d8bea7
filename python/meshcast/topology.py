"""Cluster descriptions: built-in profiles, .topo files and text, and discovery."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional

from ._capi import C, DiscoverParams
from ._handle import Handle
from ._stream import capture
from .errors import InvalidArgumentError, check

if TYPE_CHECKING:
    from .comm import Communicator

LINK_CLASSES = {"copy": 0, "intra": 1, "nic": 2}


@dataclass(frozen=True)
class Link:
    bandwidth: float  # bytes per second, per port and direction
    latency: float  # seconds per message


def builtin_names() -> List[str]:
    """Names of the built-in profiles ("p3.8xlarge", "dgx-h100", ...)."""
    names = C.mc_topology_builtin_names()
    out = []
    i = 0
    while names[i]:
        out.append(names[i].decode())
        i += 1
    return out


class Topology(Handle):
    """Hosts, devices per host and link figures that plans are made for."""

    _destroy = C.mc_topology_destroy

    def __init__(self, name_or_path: str, hosts: Optional[int] = None) -> None:
        """A built-in profile by name, or a .topo file by path; hosts overrides its count."""
        out = ctypes.c_void_p()
        check(C.mc_topology_load(name_or_path.encode(), ctypes.byref(out)))
        self._set(out.value)
        if hosts is not None:
            self.hosts = hosts

    @classmethod
    def _adopt(cls, ptr: Optional[int]) -> "Topology":
        t = cls.__new__(cls)
        t._set(ptr)
        return t

    @classmethod
    def parse(cls, text: str, origin: str = "<text>") -> "Topology":
        """From .topo text (docs/topology.md); origin names it in error messages."""
        out = ctypes.c_void_p()
        check(C.mc_topology_parse(text.encode(), origin.encode(), ctypes.byref(out)))
        return cls._adopt(out.value)

    @classmethod
    def discover(cls, comm: Optional["Communicator"] = None, *,
                 devices_per_rank: Optional[int] = None,
                 calibrate_bytes: Optional[int] = None) -> "Topology":
        """The local machine (hwloc), or with comm the cluster of its ranks (collective)."""
        out = ctypes.c_void_p()
        if comm is None:
            if devices_per_rank is not None or calibrate_bytes is not None:
                raise InvalidArgumentError("devices_per_rank and calibrate_bytes need a comm")
            check(C.mc_topology_discover(ctypes.byref(out)))
        else:
            p = DiscoverParams()
            if devices_per_rank is not None:
                p.field_mask |= 1
                p.devices_per_rank = devices_per_rank
            if calibrate_bytes is not None:
                p.field_mask |= 2
                p.calibrate_bytes = calibrate_bytes
            check(C.mc_topology_discover_comm(comm.ptr, ctypes.byref(p), ctypes.byref(out)))
        return cls._adopt(out.value)

    def copy(self) -> "Topology":
        out = ctypes.c_void_p()
        check(C.mc_topology_copy(self.ptr, ctypes.byref(out)))
        return Topology._adopt(out.value)

    @property
    def name(self) -> str:
        return C.mc_topology_name(self.ptr).decode()

    @property
    def hosts(self) -> int:
        return C.mc_topology_hosts(self.ptr)

    @hosts.setter
    def hosts(self, n: int) -> None:
        check(C.mc_topology_set_hosts(self.ptr, n))

    @property
    def devices_per_host(self) -> int:
        return C.mc_topology_devices_per_host(self.ptr)

    @property
    def devices(self) -> int:
        return C.mc_topology_devices(self.ptr)

    def host_of(self, device: int) -> int:
        """Host of a device id; -1 when out of range."""
        return C.mc_topology_host_of(self.ptr, device)

    def owner(self, device: int, nranks: int) -> int:
        """The rank owning a device among nranks ranks (contiguous, equal blocks)."""
        return C.mc_device_owner(self.ptr, nranks, device)

    def link(self, cls: str) -> Link:
        """Figures of a link class: "copy", "intra" or "nic"."""
        if cls not in LINK_CLASSES:
            raise InvalidArgumentError(f"unknown link class '{cls}' (copy, intra or nic)")
        c = C.mc_topology_link(self.ptr, LINK_CLASSES[cls])
        return Link(c.bandwidth, c.latency)

    @property
    def nic_in(self) -> float:
        return C.mc_topology_nic_in(self.ptr)

    @property
    def nic_out(self) -> float:
        return C.mc_topology_nic_out(self.ptr)

    @property
    def nics_per_host(self) -> int:
        return C.mc_topology_nics_per_host(self.ptr)

    @property
    def nic_burst(self) -> float:
        """Bytes a shaped NIC passes at once after an idle spell (.topo burst=); 0: none."""
        return C.mc_topology_nic_burst(self.ptr)

    @property
    def host_bandwidth(self) -> float:
        return C.mc_topology_host_bandwidth(self.ptr)

    def to_text(self) -> str:
        """The topology as .topo text (Topology.parse reads it back)."""
        return capture(lambda f: C.mc_topology_write(self.ptr, f))

    def __repr__(self) -> str:
        return (f"<Topology {self.name}: {self.hosts} host(s) x "
                f"{self.devices_per_host} device(s)>")
