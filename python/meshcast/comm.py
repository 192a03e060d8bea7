"""Communicators: in-process, ranks as threads of a World, or UCX processes."""
from __future__ import annotations

import ctypes
import weakref
from typing import TYPE_CHECKING, List, Optional

from ._capi import C, CommParams
from ._handle import Handle
from .errors import InvalidArgumentError, check

if TYPE_CHECKING:
    from .reshard import Request

TRANSPORTS = {"local": 0, "ucx": 1}
BOOTSTRAPS = {"auto": 0, "single": 1, "threads": 2, "mpi": 3, "env": 4}
PROGRESS = {"caller": 0, "thread": 1}


def _choice(kind: str, table: dict, value: str) -> int:
    if value not in table:
        raise InvalidArgumentError(f"unknown {kind} '{value}' ({', '.join(table)})")
    return table[value]


class World(Handle):
    """Ranks as threads of this process: each thread makes Communicator(world=w, rank=r)."""

    _destroy = C.mc_world_destroy

    def __init__(self, nranks: int) -> None:
        out = ctypes.c_void_p()
        check(C.mc_world_create(nranks, ctypes.byref(out)))
        self._set(out.value)
        self.nranks = nranks


class Communicator(Handle):
    """The ranks that execute plans together. Communicator() is one in-process rank owning
    every device; Communicator(world=w, rank=r) a thread rank; Communicator("ucx") a process
    rank bootstrapped under mpirun or through MESHCAST_RANK/NRANKS/ROOT (collective)."""

    def __init__(self, transport: str = "local", *, bootstrap: Optional[str] = None,
                 world: Optional[World] = None, rank: Optional[int] = None,
                 threads: Optional[int] = None, timeout: Optional[float] = None,
                 progress: Optional[str] = None) -> None:
        self._requests: "weakref.WeakSet[Request]" = weakref.WeakSet()
        p = CommParams()
        p.field_mask |= 1
        p.transport = _choice("transport", TRANSPORTS, transport)
        if bootstrap is not None:
            p.field_mask |= 2
            p.bootstrap = _choice("bootstrap", BOOTSTRAPS, bootstrap)
        if world is not None:
            if rank is None:
                raise InvalidArgumentError("a world communicator needs its rank")
            p.field_mask |= 8
            p.world, p.world_rank = world.ptr, rank
        if threads is not None:
            p.field_mask |= 16
            p.threads = threads
        if timeout is not None:
            p.field_mask |= 32
            p.timeout_s = timeout
        if progress is not None:
            p.field_mask |= 64
            p.progress = _choice("progress mode", PROGRESS, progress)
        out = ctypes.c_void_p()
        check(C.mc_comm_create(ctypes.byref(p), ctypes.byref(out)))
        self._set(out.value)
        self.world = world  # destroyed after this communicator

    def close(self) -> None:
        """Frees the requests still open on it (waiting for unfinished ones), then it."""
        for r in list(self._requests):
            r.close()
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            C.mc_comm_destroy(ptr)

    @property
    def rank(self) -> int:
        return C.mc_comm_rank(self.ptr)

    @property
    def nranks(self) -> int:
        return C.mc_comm_nranks(self.ptr)

    @property
    def transport(self) -> str:
        return C.mc_comm_transport_name(self.ptr).decode()

    @property
    def programs_compiled(self) -> int:
        """Reshard programs this rank compiled (cache misses)."""
        return C.mc_comm_programs_compiled(self.ptr)

    def allgather(self, data: bytes) -> List[bytes]:
        """Every rank's bytes (all of one size), in rank order. Collective."""
        n = len(data)
        recv = ctypes.create_string_buffer(max(n * self.nranks, 1))
        check(C.mc_comm_allgather(self.ptr, data, recv, n))
        return [recv.raw[r * n:(r + 1) * n] for r in range(self.nranks)]

    def barrier(self) -> None:
        check(C.mc_comm_allgather(self.ptr, None, None, 0))

    def __repr__(self) -> str:
        return f"<Communicator {self.transport} rank {self.rank} of {self.nranks}>"
