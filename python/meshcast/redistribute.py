"""A DTensor-like helper: redistribute local shards from (mesh, placements) to another
(mesh, placements), across meshes too (which DTensor rejects)."""
from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from .comm import Communicator
from .errors import InvalidArgumentError
from .layout import Layout, dtype_name
from .mesh import Mesh
from .placement import Placement, Shard, placements_text
from .plan import Plan
from .reshard import reshard
from .topology import Topology

Sharding = Tuple[Mesh, Sequence[Placement]]
_plans: "OrderedDict[tuple, Plan]" = OrderedDict()
_PLAN_CACHE = 64
_default_comm: Optional[Communicator] = None


def _key(mesh: Mesh, placements: Sequence[Placement]) -> tuple:
    return (mesh.shape, tuple(mesh.devices), mesh.axis_names, placements_text(placements))


def default_topology(*meshes: Mesh) -> Topology:
    """p3.8xlarge with as many hosts as the meshes' device ids need (as the command does)."""
    return _p3_hosts(max(d for m in meshes for d in m.devices) // 4 + 1)


@lru_cache(maxsize=16)
def _p3_hosts(hosts: int) -> Topology:
    return Topology("p3.8xlarge", hosts=hosts)


def _plan(src: Sharding, dst: Sharding, shape: Tuple[int, ...], dtype: str,
          topology: Optional[Topology], strategy: Optional[str]) -> Plan:
    """Plans are cached (the 64 most recently used), so a training loop plans once."""
    topo = topology or default_topology(src[0], dst[0])
    key = (_key(*src), _key(*dst), shape, dtype, id(topo), strategy)
    plan = _plans.get(key)
    if plan is None:
        plan = Plan(Layout(shape, dtype, src[0], list(src[1])),
                    Layout(shape, dtype, dst[0], list(dst[1])), topo, strategy=strategy)
        _plans[key] = plan
        if len(_plans) > _PLAN_CACHE:
            _plans.popitem(last=False)
    _plans.move_to_end(key)
    return plan


def _global_shape(local: Any, mesh: Mesh, placements: Sequence[Placement]) -> Tuple[int, ...]:
    """DTensor's rule when no shape is given: evenly sharded dims."""
    shape = list(local.shape)
    for axis, p in enumerate(placements):
        if isinstance(p, Shard):
            shape[p.dim] *= mesh.shape[axis]
    return tuple(shape)


def _empty(like: Any, dtype: Any, shape: Tuple[int, ...]) -> Any:
    if like is not None and hasattr(like, "new_empty"):  # torch
        return like.new_empty(shape)
    if like is None and str(dtype).startswith("torch."):
        import torch
        return torch.empty(shape, dtype=dtype)
    import numpy as np
    return np.empty(shape, dtype=like.dtype if like is not None else dtype)


def redistribute(local: Any, src: Sharding, dst: Sharding, *,
                 shape: Optional[Sequence[int]] = None, dtype: Any = None,
                 comm: Optional[Communicator] = None, topology: Optional[Topology] = None,
                 strategy: Optional[str] = None) -> Any:
    """Moves a sharded tensor from src = (mesh, placements) to dst = (mesh, placements) and
    returns this rank's new shards, allocated like the inputs (torch or numpy).

    local is this rank's shard (one tensor, when the rank owns one device of the src mesh),
    a mapping device id -> shard, or a list with one entry per src mesh device (None where
    another rank owns it). The result has the same form for the dst mesh: one tensor (None
    when the rank owns no dst device), a dict, or a list. shape is the global shape
    (default: the local shard's times the mesh axes that shard each dim, as DTensor assumes);
    dtype is needed only by a rank that holds no src shard. comm defaults to one in-process
    rank; topology to p3.8xlarge with enough hosts, which also says which rank owns a device
    (devices in contiguous, equal blocks per rank)."""
    global _default_comm
    if comm is None:
        if _default_comm is None:
            _default_comm = Communicator()
        comm = _default_comm
    src_mesh, dst_mesh = src[0], dst[0]
    topo_for_owner = topology or default_topology(src_mesh, dst_mesh)
    mine = lambda m: [d for d in m.devices if topo_for_owner.owner(d, comm.nranks) == comm.rank]
    src_mine, dst_mine = mine(src_mesh), mine(dst_mesh)

    if isinstance(local, Mapping):
        given: Dict[int, Any] = dict(local)
    elif isinstance(local, (list, tuple)):
        if len(local) != src_mesh.size:
            raise InvalidArgumentError(f"{len(local)} shards given for a src mesh of "
                                       f"{src_mesh.size} devices")
        given = {d: t for d, t in zip(src_mesh.devices, local) if t is not None}
    elif local is None:
        given = {}
    else:
        if len(src_mine) != 1:
            raise InvalidArgumentError(f"one shard given, but this rank owns {len(src_mine)} "
                                       f"devices of the src mesh (pass a dict or a list)")
        given = {src_mine[0]: local}
    missing = [d for d in src_mine if d not in given]
    if missing:
        raise InvalidArgumentError(f"no shard for src device {missing[0]}, which this rank "
                                   f"owns")
    like = next(iter(given.values()), None)
    if like is None and dtype is None:
        raise InvalidArgumentError("this rank holds no src shard: give dtype")
    if shape is None:
        if like is None:
            raise InvalidArgumentError("this rank holds no src shard: give shape")
        shape = _global_shape(like, src_mesh, src[1])
    shape = tuple(int(s) for s in shape)
    plan = _plan(src, dst, shape, dtype_name(like.dtype if like is not None else dtype),
                 topology, strategy)
    out = {d: _empty(like, dtype, plan.dst.tile_shape(d)) for d in dst_mine}
    reshard(comm, plan, given, out)
    if isinstance(local, Mapping):
        return out
    if isinstance(local, (list, tuple)):
        return [out.get(d) for d in dst_mesh.devices]
    return next(iter(out.values()), None)
