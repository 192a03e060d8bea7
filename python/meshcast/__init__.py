"""meshcast from Python: plan and execute cross-mesh resharding of sharded tensors, on numpy
arrays and PyTorch tensors without copying (DLPack), and pipeline schedules. A thin layer over
libmeshcast through ctypes; meshcast.library_path() says which library was loaded."""
from ._lib import library_path
from .comm import Communicator, World
from .errors import (Error, FileError, InternalError, InvalidArgumentError, MismatchError,
                     NotFoundError, OutOfMemoryError, PeerError, PeerTimeoutError,
                     SizeOverflowError, TileError, UnsupportedError)
from .info import build_info
from .layout import Layout, Spec, dtype_name
from .mesh import Mesh
from .placement import Partial, Placement, Replicate, Shard
from .plan import Plan, Stats, lower_bound, strategies
from .redistribute import redistribute
from .reshard import Request, reshard, reshard_start
from .schedule import Action, Info, RankSummary, Schedule, Timeline, TimelineSummary
from .tiles import Tiles
from .topology import Link, Topology, builtin_names

__version__ = "0.1.0"
__all__ = [
    "library_path", "build_info", "Communicator", "World", "Error", "FileError",
    "InternalError", "InvalidArgumentError", "MismatchError", "NotFoundError",
    "OutOfMemoryError", "PeerError", "PeerTimeoutError", "SizeOverflowError", "TileError",
    "UnsupportedError", "Layout", "Spec", "dtype_name", "Mesh", "Partial", "Placement",
    "Replicate", "Shard", "Plan", "Stats", "lower_bound", "strategies", "redistribute",
    "Request", "reshard", "reshard_start", "Action", "Info", "RankSummary", "Schedule",
    "Timeline", "TimelineSummary", "Tiles", "Link", "Topology", "builtin_names",
]
