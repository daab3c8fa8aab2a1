"""What the built-in training loop needs to know when it is one rank of several.

The loop (trainer.py) is the same on one process and on each worker of a data-parallel run
(engines/ray): a :class:`Distributed` tells it its rank and the world size, wraps the step
module (DDP, so gradients are averaged across ranks at every backward) and gives each rank
its shard of an epoch's batch order. :data:`SINGLE` is the one-process case: no wrapping,
the whole order. The plan (steps per epoch) is made over one shard's rows, so every rank
takes the same number of steps (a rank that took one more would hang in a collective).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["SINGLE", "Distributed", "shard_order", "shard_rows"]


def shard_rows(rows: int, world_size: int) -> int:
    """Training rows one rank sees per epoch.

    ``rows // world_size`` (at least 1); the remainder is dropped, as
    ``DistributedSampler(drop_last=True)`` does.
    """
    return max(1, rows // max(1, world_size))


def shard_order(order: torch.Tensor, rank: int, world_size: int) -> torch.Tensor:
    """Rank ``rank``'s rows of an epoch's ``order``.

    Every ``world_size``-th row from ``rank`` on, cut to :func:`shard_rows` so that all shards have
    the same length.
    """
    if world_size <= 1:
        return order
    per_rank = shard_rows(int(order.numel()), world_size)
    return order[rank::world_size][:per_rank]


@dataclasses.dataclass(frozen=True)
class Distributed:
    """One rank of a data-parallel run.

    ``wrap`` turns the step module into its distributed form (e.g. ``DistributedDataParallel``);
    None keeps it.
    """

    rank: int = 0
    world_size: int = 1
    wrap_module: Callable[[Any], Any] | None = None

    @property
    def is_primary(self) -> bool:
        """Rank 0: the one that emits events and writes the run directory."""
        return self.rank == 0

    def wrap(self, module: Any) -> Any:
        """The module wrapped for data-parallel training (DDP), or as is on one rank."""
        return module if self.wrap_module is None else self.wrap_module(module)

    def shard(self, order: torch.Tensor) -> torch.Tensor:
        """This rank's part of an epoch's row ``order``."""
        return shard_order(order, self.rank, self.world_size)


SINGLE = Distributed()
