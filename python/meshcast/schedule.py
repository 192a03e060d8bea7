"""Pipeline-parallel schedules: create, validate, simulate, export the timeline."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, fields
from typing import List, Optional, Sequence, Tuple

from ._capi import (C, Action as CAction, ScheduleInfo, ScheduleParams, SimParams,
                    TimelineRank, TimelineStats)
from ._handle import Handle
from ._stream import capture
from .errors import InvalidArgumentError, check

COMM = {"p2p": 0, "reshard": 1}
OPS = ("F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "RESHARD_START",
       "RESHARD_WAIT", "FB", "UPDATE")


def _ints(values: Sequence[int]):
    return (ctypes.c_int * max(len(values), 1))(*values)


def _doubles(values: Sequence[float]):
    return (ctypes.c_double * max(len(values), 1))(*values)


@dataclass(frozen=True)
class Info:
    kind: str
    ranks: int
    microbatches: int
    chunks: int
    nstages: int
    split_backward: bool
    comm: str
    iterations: int


@dataclass(frozen=True)
class Action:
    """One action of a rank's list; str() gives the PyTorch-pipelining text ("2F0")."""
    op: str
    stage: int
    microbatch: int
    peer: int
    grad: bool
    send: bool
    b_stage: int
    b_microbatch: int
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class TimelineSummary:
    makespan: float
    flush_time: float
    busy: float
    bubble_fraction: float
    comm_time: float
    comm_hidden_fraction: float
    peak_inflight: int
    iterations: int
    period: float
    max_mismatch: int


@dataclass(frozen=True)
class RankSummary:
    first_start: float
    last_end: float
    busy: float
    idle: float
    peak_inflight: int


class Timeline(Handle):
    """A simulated run of a schedule."""

    _destroy = C.mc_timeline_destroy

    @property
    def stats(self) -> TimelineSummary:
        s = TimelineStats()
        check(C.mc_timeline_query(self.ptr, ctypes.byref(s)))
        return TimelineSummary(*[getattr(s, f.name) for f in fields(TimelineSummary)])

    def rank(self, r: int) -> RankSummary:
        s = TimelineRank()
        check(C.mc_timeline_rank(self.ptr, r, ctypes.byref(s)))
        return RankSummary(*[getattr(s, f.name) for f in fields(RankSummary)])

    def to_trace(self) -> str:
        """Chrome trace JSON (chrome://tracing, Perfetto)."""
        return capture(lambda f: C.mc_timeline_write(self.ptr, 0, f))

    def to_svg(self) -> str:
        """One row per rank, F/B/I/W boxes labelled with microbatches."""
        return capture(lambda f: C.mc_timeline_write(self.ptr, 1, f))


class Schedule(Handle):
    """A schedule of `kind` ("gpipe", "1f1b", "zb-h1", "dualpipev", ...) for `stages` ranks and
    `microbatches` microbatches; the keywords are mc_schedule_params_t's fields."""

    _destroy = C.mc_schedule_destroy

    def __init__(self, kind: str, stages: int, microbatches: int, *,
                 chunks: Optional[int] = None, comm: Optional[str] = None,
                 joins: Optional[int] = None,
                 gen_costs: Optional[Tuple[float, float, float]] = None,
                 skips: Optional[Sequence[Tuple[int, int]]] = None,
                 iterations: Optional[int] = None, gen_comm: Optional[float] = None,
                 mem_limit: Optional[int] = None,
                 interactions: Optional[Sequence[Tuple[int, int]]] = None) -> None:
        k = ctypes.c_int()
        check(C.mc_sched_kind_parse(kind.encode(), ctypes.byref(k)))
        p = ScheduleParams()
        keep = []  # arrays p points into, alive until the call returns
        if chunks is not None:
            p.field_mask |= 1 << 0
            p.chunks = chunks
        if comm is not None:
            if comm not in COMM:
                raise InvalidArgumentError(f"unknown schedule comm '{comm}' (p2p or reshard)")
            p.field_mask |= 1 << 1
            p.comm = COMM[comm]
        if joins is not None:
            p.field_mask |= 1 << 2
            p.joins = joins
        if gen_costs is not None:
            p.field_mask |= 1 << 3
            p.gen_f, p.gen_b, p.gen_w = gen_costs
        if skips is not None:
            p.field_mask |= 1 << 4
            keep.append(_ints([s for pair in skips for s in pair]))
            p.nskips, p.skips = len(skips), keep[-1]
        if iterations is not None:
            p.field_mask |= 1 << 5
            p.iterations = iterations
        if gen_comm is not None:
            p.field_mask |= 1 << 6
            p.gen_comm = gen_comm
        if mem_limit is not None:
            p.field_mask |= 1 << 7
            p.mem_limit = mem_limit
        if interactions is not None:
            p.field_mask |= 1 << 8
            keep.append(_ints([s for pair in interactions for s in pair]))
            p.ninteractions, p.interactions = len(interactions), keep[-1]
        out = ctypes.c_void_p()
        check(C.mc_schedule_create(k.value, stages, microbatches, ctypes.byref(p),
                                   ctypes.byref(out)))
        self._set(out.value)

    @property
    def info(self) -> Info:
        i = ScheduleInfo()
        check(C.mc_schedule_info(self.ptr, ctypes.byref(i)))
        return Info(C.mc_sched_kind_name(i.kind).decode(), i.ranks, i.microbatches, i.chunks,
                    i.nstages, bool(i.split_backward), ("p2p", "reshard")[i.comm], i.iterations)

    def stage_rank(self, stage: int) -> int:
        r = ctypes.c_int()
        check(C.mc_schedule_stage_rank(self.ptr, stage, ctypes.byref(r)))
        return r.value

    def actions(self, rank: int) -> List[Action]:
        arr, n = ctypes.POINTER(CAction)(), ctypes.c_size_t()
        check(C.mc_schedule_actions(self.ptr, rank, ctypes.byref(arr), ctypes.byref(n)))
        buf = ctypes.create_string_buffer(64)
        out = []
        for i in range(n.value):
            a = arr[i]
            check(C.mc_sched_action_format(ctypes.byref(a), buf, len(buf)))
            out.append(Action(OPS[a.op], a.stage, a.microbatch, a.peer, bool(a.grad),
                              bool(a.send), a.b_stage, a.b_microbatch, buf.value.decode()))
        return out

    def validate(self) -> None:
        """Raises InvalidArgumentError with the first problem (counts, dependencies,
        unmatched communication, deadlock)."""
        check(C.mc_schedule_validate(self.ptr))

    def simulate(self, *, f: float = 1.0, b: float = 2.0, w: float = 1.0,
                 stage_costs: Optional[Tuple[Sequence[float], Sequence[float],
                                             Sequence[float]]] = None,
                 comm: Optional[float] = None, stage_comm: Optional[Sequence[float]] = None,
                 overlap: Optional[bool] = None, fb: Optional[float] = None) -> Timeline:
        """Runs every rank's list on costs F, B (full backward) and W (its weight part)."""
        n = self.info.nstages
        lists = list(stage_costs or ()) + ([stage_comm] if stage_comm is not None else [])
        if any(len(c) != n for c in lists):  # C reads nstages values from each
            raise InvalidArgumentError(f"per-stage costs need {n} values (one per stage)")
        p = SimParams()
        keep = []
        p.field_mask |= 1 << 0
        p.f, p.b, p.w = f, b, w
        if stage_costs is not None:
            p.field_mask |= 1 << 1
            keep += [_doubles(c) for c in stage_costs]
            p.stage_f, p.stage_b, p.stage_w = keep[-3:]
        if comm is not None:
            p.field_mask |= 1 << 2
            p.comm = comm
        if stage_comm is not None:
            p.field_mask |= 1 << 3
            keep.append(_doubles(stage_comm))
            p.stage_comm = keep[-1]
        if overlap is not None:
            p.field_mask |= 1 << 4
            p.overlap = int(overlap)
        if fb is not None:
            p.field_mask |= 1 << 5
            p.fb = fb
        out = ctypes.c_void_p()
        check(C.mc_schedule_simulate(self.ptr, ctypes.byref(p), ctypes.byref(out)))
        t = Timeline.__new__(Timeline)
        t._set(out.value)
        t.schedule = self  # the timeline refers to the schedule's lists
        return t
