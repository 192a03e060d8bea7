"""Plans: moving a tensor from one layout to another on a topology, with statistics."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, fields
from typing import Optional

from ._capi import C, PlanParams, PlanStats
from ._handle import Handle
from ._stream import capture
from .errors import check
from .layout import Layout
from .topology import Topology


@dataclass(frozen=True)
class Stats:
    """mc_plan_stats_t: what the plan moves, and its estimate against the lower bound."""
    pieces: int
    flows: int
    messages: int
    chunks: int
    nic_bytes: int
    intra_host_bytes: int
    local_bytes: int
    peak_staging_bytes: int
    estimate_s: float
    lower_bound_s: float
    plan_ms: float
    valid: bool


def strategies() -> list:
    """Strategy names accepted by Plan (as on the command line)."""
    return ["send_recv", "local_allgather", "broadcast", "broadcast_first",
            "broadcast_lb_size", "broadcast_lb_order", "meshcast"]


class Plan(Handle):
    """A plan moving a tensor from src to dst layout on topology (same shape and dtype)."""

    _destroy = C.mc_plan_destroy

    def __init__(self, src: Layout, dst: Layout, topology: Topology, *,
                 strategy: Optional[str] = None, chunk_bytes: Optional[int] = None,
                 seed: Optional[int] = None) -> None:
        p = PlanParams()
        if strategy is not None:
            s, sender = ctypes.c_int(), ctypes.c_int()
            check(C.mc_strategy_parse(strategy.encode(), ctypes.byref(s), ctypes.byref(sender)))
            p.field_mask |= 1 | 2
            p.strategy, p.sender = s.value, sender.value
        if chunk_bytes is not None:
            p.field_mask |= 4
            p.chunk_bytes = chunk_bytes
        if seed is not None:
            p.field_mask |= 8
            p.seed = seed
        out = ctypes.c_void_p()
        check(C.mc_plan_create(src.ptr, dst.ptr, topology.ptr, ctypes.byref(p),
                               ctypes.byref(out)))
        self._set(out.value)
        self.src, self.dst, self.topology = src, dst, topology

    @property
    def stats(self) -> Stats:
        s = PlanStats()
        check(C.mc_plan_query(self.ptr, ctypes.byref(s)))
        return Stats(*[getattr(s, f.name) for f in fields(Stats)[:-1]], valid=bool(s.valid))

    def validate(self) -> None:
        """Re-checks the plan; raises when a needer would miss or double a byte."""
        check(C.mc_plan_validate(self.ptr))

    def to_text(self) -> str:
        return capture(lambda f: C.mc_plan_write(self.ptr, 0, f))

    def to_json(self) -> str:
        return capture(lambda f: C.mc_plan_write(self.ptr, 1, f))

    def to_dot(self) -> str:
        """A Graphviz graph of the plan's transfers."""
        return capture(lambda f: C.mc_plan_write(self.ptr, 2, f))


def lower_bound(src: Layout, dst: Layout, topology: Topology) -> float:
    """The fluid lower bound in seconds for any plan, without building one."""
    out = ctypes.c_double()
    check(C.mc_lower_bound(src.ptr, dst.ptr, topology.ptr, ctypes.byref(out)))
    return out.value
