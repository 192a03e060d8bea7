"""The C API as ctypes sees it: the structs of include/meshcast/*.h and every prototype."""
from __future__ import annotations

import ctypes
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int32, c_int64,
                    c_size_t, c_uint8, c_uint16, c_uint64, c_void_p)

from ._lib import lib

MAX_NDIM = 8
p_int64 = POINTER(c_int64)
p_double = POINTER(c_double)
p_int = POINTER(c_int)


class Box(Structure):
    _fields_ = [("lo", c_int64 * MAX_NDIM), ("hi", c_int64 * MAX_NDIM)]


class PlanParams(Structure):
    _fields_ = [("field_mask", c_uint64), ("strategy", c_int), ("sender", c_int),
                ("chunk_bytes", c_int64), ("seed", c_uint64)]


class PlanStats(Structure):
    _fields_ = [(n, c_int64) for n in ("pieces", "flows", "messages", "chunks", "nic_bytes",
                                       "intra_host_bytes", "local_bytes", "peak_staging_bytes")]
    _fields_ += [("estimate_s", c_double), ("lower_bound_s", c_double), ("plan_ms", c_double),
                 ("valid", c_int)]


class Link(Structure):
    _fields_ = [("bandwidth", c_double), ("latency", c_double)]


class DiscoverParams(Structure):
    _fields_ = [("field_mask", c_uint64), ("devices_per_rank", c_int64),
                ("calibrate_bytes", c_int64), ("report", c_void_p)]


class Oob(Structure):
    _fields_ = [("allgather", c_void_p), ("req_test", c_void_p), ("req_free", c_void_p),
                ("coll_info", c_void_p), ("rank", c_int), ("nranks", c_int)]


class CommParams(Structure):
    _fields_ = [("field_mask", c_uint64), ("transport", c_int), ("bootstrap", c_int),
                ("oob", Oob), ("world", c_void_p), ("world_rank", c_int), ("threads", c_int),
                ("timeout_s", c_double), ("progress", c_int)]


class Buffer(Structure):
    _fields_ = [("ptr", c_void_p), ("memory", c_int), ("stream", c_void_p)]


class ReshardParams(Structure):
    _fields_ = [("field_mask", c_uint64), ("chunk_bytes", c_int64)]


class ScheduleParams(Structure):
    _fields_ = [("field_mask", c_uint64), ("chunks", c_int), ("comm", c_int), ("joins", c_int),
                ("gen_f", c_double), ("gen_b", c_double), ("gen_w", c_double),
                ("nskips", c_int), ("skips", p_int), ("iterations", c_int),
                ("gen_comm", c_double), ("mem_limit", c_int), ("ninteractions", c_int),
                ("interactions", p_int), ("gen_stage_f", p_double), ("gen_stage_b", p_double),
                ("gen_stage_w", p_double)]


class ScheduleInfo(Structure):
    _fields_ = [(n, c_int) for n in ("kind", "ranks", "microbatches", "chunks", "nstages",
                                     "split_backward", "comm", "iterations")]


class Action(Structure):
    _fields_ = [(n, c_int) for n in ("op", "stage", "microbatch", "peer", "grad", "send",
                                     "b_stage", "b_microbatch")]


class SimParams(Structure):
    _fields_ = [("field_mask", c_uint64), ("f", c_double), ("b", c_double), ("w", c_double),
                ("stage_f", p_double), ("stage_b", p_double), ("stage_w", p_double),
                ("comm", c_double), ("stage_comm", p_double), ("overlap", c_int),
                ("fb", c_double)]


class TimelineStats(Structure):
    _fields_ = [(n, c_double) for n in ("makespan", "flush_time", "busy", "bubble_fraction",
                                        "comm_time", "comm_hidden_fraction")]
    _fields_ += [("peak_inflight", c_int), ("iterations", c_int), ("period", c_double),
                 ("max_mismatch", c_int)]


class TimelineRank(Structure):
    _fields_ = [("first_start", c_double), ("last_end", c_double), ("busy", c_double),
                ("idle", c_double), ("peak_inflight", c_int)]


class BuildDep(Structure):
    _fields_ = [("name", c_char_p), ("built", c_int), ("version", c_char * 64)]


class DLTensor(Structure):
    """DLPack's DLTensor (dlpack.h), the head of a DLManagedTensor."""
    _fields_ = [("data", c_void_p), ("device_type", c_int32), ("device_id", c_int32),
                ("ndim", c_int32), ("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16),
                ("shape", p_int64), ("strides", p_int64), ("byte_offset", c_uint64)]


P = c_void_p  # every opaque handle
S = c_int  # mc_status_t
_PROTOTYPES = {
    # status.h
    "mc_status_string": (c_char_p, [c_int]),
    "mc_last_error": (c_char_p, []),
    # build.h
    "mc_build_dep_count": (c_size_t, []),
    "mc_build_dep": (c_int, [c_size_t, POINTER(BuildDep)]),
    # layout.h
    "mc_dtype_parse": (S, [c_char_p, p_int]),
    "mc_dtype_name": (c_char_p, [c_int]),
    "mc_dtype_size": (c_size_t, [c_int]),
    "mc_mesh_create": (S, [c_int, p_int64, p_int64, POINTER(c_char_p), POINTER(P)]),
    "mc_mesh_parse": (S, [c_char_p, c_char_p, c_int64, POINTER(P)]),
    "mc_mesh_copy": (S, [P, POINTER(P)]),
    "mc_mesh_destroy": (None, [P]),
    "mc_mesh_ndim": (c_int, [P]),
    "mc_mesh_axis_size": (c_int64, [P, c_int]),
    "mc_mesh_size": (c_int64, [P]),
    "mc_mesh_device": (c_int64, [P, c_int64]),
    "mc_mesh_axis_name": (c_char_p, [P, c_int]),
    "mc_mesh_find": (c_int64, [P, c_int64]),
    "mc_spec_parse": (S, [c_char_p, P, c_int, POINTER(P)]),
    "mc_spec_copy": (S, [P, POINTER(P)]),
    "mc_spec_destroy": (None, [P]),
    "mc_spec_tensor_ndim": (c_int, [P]),
    "mc_spec_mesh_ndim": (c_int, [P]),
    "mc_spec_dim_naxes": (c_int, [P, c_int]),
    "mc_spec_dim_axis": (c_int, [P, c_int, c_int]),
    "mc_spec_cut": (c_int, [P]),
    "mc_spec_axis_reduce": (c_int, [P, c_int]),
    "mc_reduce_name": (c_char_p, [c_int]),
    "mc_spec_format": (S, [P, P, c_int, ctypes.c_char_p, c_size_t]),
    "mc_layout_create": (S, [c_int, p_int64, c_int, P, P, POINTER(P)]),
    "mc_layout_destroy": (None, [P]),
    "mc_layout_spec": (P, [P]),
    "mc_layout_bytes": (c_int64, [P]),
    "mc_layout_tile": (S, [P, c_int64, POINTER(Box)]),
    # topology.h
    "mc_topology_load": (S, [c_char_p, POINTER(P)]),
    "mc_topology_parse": (S, [c_char_p, c_char_p, POINTER(P)]),
    "mc_topology_discover": (S, [POINTER(P)]),
    "mc_topology_discover_comm": (S, [P, POINTER(DiscoverParams), POINTER(P)]),
    "mc_topology_copy": (S, [P, POINTER(P)]),
    "mc_topology_destroy": (None, [P]),
    "mc_topology_write": (S, [P, P]),
    "mc_topology_name": (c_char_p, [P]),
    "mc_topology_hosts": (c_int64, [P]),
    "mc_topology_devices_per_host": (c_int64, [P]),
    "mc_topology_devices": (c_int64, [P]),
    "mc_topology_set_hosts": (S, [P, c_int64]),
    "mc_topology_host_of": (c_int64, [P, c_int64]),
    "mc_topology_link": (Link, [P, c_int]),
    "mc_topology_nic_in": (c_double, [P]),
    "mc_topology_nic_out": (c_double, [P]),
    "mc_topology_nics_per_host": (c_int, [P]),
    "mc_topology_nic_burst": (c_double, [P]),
    "mc_topology_host_bandwidth": (c_double, [P]),
    "mc_topology_builtin_names": (POINTER(c_char_p), []),
    # plan.h
    "mc_strategy_parse": (S, [c_char_p, p_int, p_int]),
    "mc_strategy_name": (c_char_p, [c_int, c_int]),
    "mc_plan_create": (S, [P, P, P, POINTER(PlanParams), POINTER(P)]),
    "mc_plan_destroy": (None, [P]),
    "mc_plan_query": (S, [P, POINTER(PlanStats)]),
    "mc_plan_validate": (S, [P]),
    "mc_plan_write": (S, [P, c_int, P]),
    "mc_lower_bound": (S, [P, P, P, p_double]),
    # comm.h, reshard.h
    "mc_world_create": (S, [c_int, POINTER(P)]),
    "mc_world_destroy": (None, [P]),
    "mc_comm_create": (S, [POINTER(CommParams), POINTER(P)]),
    "mc_comm_destroy": (None, [P]),
    "mc_comm_rank": (c_int, [P]),
    "mc_comm_nranks": (c_int, [P]),
    "mc_comm_transport_name": (c_char_p, [P]),
    "mc_comm_programs_compiled": (c_int64, [P]),
    "mc_comm_allgather": (S, [P, c_void_p, c_void_p, c_size_t]),
    "mc_device_owner": (c_int, [P, c_int, c_int64]),
    "mc_reshard_start": (S, [P, P, c_void_p, c_void_p, POINTER(ReshardParams), POINTER(P)]),
    "mc_request_test": (S, [P]),
    "mc_request_wait": (S, [P]),
    "mc_request_free": (None, [P]),
    "mc_reshard": (S, [P, P, c_void_p, c_void_p, POINTER(ReshardParams)]),
    # schedule.h
    "mc_sched_kind_parse": (S, [c_char_p, p_int]),
    "mc_sched_kind_name": (c_char_p, [c_int]),
    "mc_schedule_create": (S, [c_int, c_int, c_int, POINTER(ScheduleParams), POINTER(P)]),
    "mc_schedule_destroy": (None, [P]),
    "mc_schedule_info": (S, [P, POINTER(ScheduleInfo)]),
    "mc_schedule_stage_rank": (S, [P, c_int, p_int]),
    "mc_schedule_actions": (S, [P, c_int, POINTER(POINTER(Action)), POINTER(c_size_t)]),
    "mc_sched_action_format": (S, [POINTER(Action), ctypes.c_char_p, c_size_t]),
    "mc_schedule_validate": (S, [P]),
    "mc_schedule_simulate": (S, [P, POINTER(SimParams), POINTER(P)]),
    "mc_timeline_destroy": (None, [P]),
    "mc_timeline_query": (S, [P, POINTER(TimelineStats)]),
    "mc_timeline_rank": (S, [P, c_int, POINTER(TimelineRank)]),
    "mc_timeline_write": (S, [P, c_int, P]),
}


class _Api:
    """Attribute access to the declared C functions, e.g. C.mc_mesh_size(ptr)."""

    def __init__(self) -> None:
        so = lib()
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(so, name)
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name, fn)


C = _Api()
