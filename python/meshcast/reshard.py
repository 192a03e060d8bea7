"""Executing a plan on tensors: blocking reshard, or reshard_start and a Request."""
from __future__ import annotations

import ctypes
from typing import Optional

from ._capi import C, ReshardParams
from ._handle import Handle
from .comm import Communicator
from .errors import check, error
from .plan import Plan
from .tiles import Tiles, TensorsLike, bind

_start = C.mc_reshard_start
_reshard = C.mc_reshard
_test = C.mc_request_test
_wait = C.mc_request_wait
_byref = ctypes.byref


def _params(chunk_bytes: Optional[int]):
    if chunk_bytes is None:
        return None
    return _byref(ReshardParams(1, chunk_bytes))


def reshard(comm: Communicator, plan: Plan, src: TensorsLike, dst: TensorsLike, *,
            chunk_bytes: Optional[int] = None) -> None:
    """Moves the tensor from the src tiles into the dst tiles, in place (collective over the
    ranks owning a device of either mesh). src and dst: one tensor per mesh device (row-major,
    None where another rank owns it), a mapping device id -> tensor, or Tiles."""
    s = src if type(src) is Tiles and src.layout is plan.src else bind(plan.src, src, "src")
    d = dst if type(dst) is Tiles and dst.layout is plan.dst else bind(plan.dst, dst, "dst")
    status = _reshard(comm.ptr, plan.ptr, s.buffers, d.buffers, _params(chunk_bytes))
    if status:
        raise error(status)


def reshard_start(comm: Communicator, plan: Plan, src: TensorsLike, dst: TensorsLike, *,
                  chunk_bytes: Optional[int] = None) -> "Request":
    """Starts a reshard and returns its Request; the tensors are kept referenced, and dst
    must not be touched, until it completes."""
    s, d = bind(plan.src, src, "src"), bind(plan.dst, dst, "dst")
    out = ctypes.c_void_p()
    check(_start(comm.ptr, plan.ptr, s.buffers, d.buffers, _params(chunk_bytes), _byref(out)))
    return Request(out.value, comm, plan, s, d)


class Request(Handle):
    """A reshard in flight. test() says whether it is done, wait() blocks until it is; both
    raise the error that failed it. Closing an unfinished request waits for it first."""

    _destroy = C.mc_request_free

    def __init__(self, ptr: int, comm: Communicator, plan: Plan, src: Tiles, dst: Tiles):
        self._set(ptr)
        # The C request uses all of these until it is freed.
        self.comm, self.plan, self.src, self.dst = comm, plan, src, dst
        comm._requests.add(self)

    def test(self) -> bool:
        """True when complete, False while in progress (and makes progress)."""
        status = _test(self.ptr)
        if status < 0:
            raise error(status)
        return status == 0

    def wait(self) -> None:
        status = _wait(self.ptr)
        if status:
            raise error(status)
