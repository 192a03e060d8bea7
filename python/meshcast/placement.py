"""DTensor-style placements: one per mesh axis, Shard(dim), Replicate() or Partial(op)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union


@dataclass(frozen=True)
class Shard:
    """The mesh axis splits tensor dim `dim` (torch.chunk sizes; nested over several axes)."""
    dim: int

    def __str__(self) -> str:
        return f"Shard({self.dim})"


@dataclass(frozen=True)
class Replicate:
    """Every device along the mesh axis holds the same data."""

    def __str__(self) -> str:
        return "Replicate()"


@dataclass(frozen=True)
class Partial:
    """Devices along the mesh axis hold addends combined by reduce_op ("sum", "avg", "max",
    "min")."""
    reduce_op: str = "sum"

    def __str__(self) -> str:
        return f"Partial('{self.reduce_op}')"


Placement = Union[Shard, Replicate, Partial]


def placements_text(placements: Sequence[Placement]) -> str:
    """The DTensor notation the C parser reads: "[Shard(0), Replicate()]"."""
    for p in placements:
        if not isinstance(p, (Shard, Replicate, Partial)):
            raise TypeError(f"not a placement: {p!r} (Shard, Replicate or Partial)")
    return "[" + ", ".join(str(p) for p in placements) + "]"
