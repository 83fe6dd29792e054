"""Sharding a dataset over processes for evaluation, without padding or duplication.

``torch.utils.data.DistributedSampler`` is made for training: with ``drop_last=False`` it pads the last round with
samples taken again from the start so that every rank gets the same number, which makes a distributed *evaluation*
count those images twice (5 images on 2 ranks: 6 are evaluated, image 0 twice), and with ``drop_last=True`` it
drops images. A dataset measure must see every image exactly once, so the shards here are disjoint contiguous
blocks whose union is the dataset: ranks may differ by one image.

The Metrics of this package reduce their sum states at ``compute()`` (torchmetrics), not per step, so ranks with
different numbers of batches are fine. Do not add per-step collectives (``self.log(..., sync_dist=True)`` of a
plain tensor in Lightning) on uneven shards: a rank with one batch fewer would wait for ever. Log the Metric object
(``self.log("val/mae", self.mae)``) and let torchmetrics synchronise at the end of the epoch.

Example (2 processes; a rank's shard is a contiguous block):

    >>> shard_indices(5, rank=0, world_size=2), shard_indices(5, rank=1, world_size=2)
    (range(0, 2), range(2, 5))
    >>> list(EvaluationSampler(range(5), num_replicas=2, rank=1))
    [2, 3, 4]
"""

from __future__ import annotations

from collections.abc import Iterator, Sized

import numpy as np
from torch.utils.data import Sampler

__all__ = ["EvaluationSampler", "shard_indices"]


def _as_int(value: object, name: str) -> int:
    """``value`` as an int: Python and numpy integers (``np.int64(5)``) are; floats, bools and the rest are not."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        what = "the dataset (anything with len()) or its length" if name == "data_source" else "an int"
        raise TypeError(f"Expected `{name}` to be {what}, but got {value!r} ({type(value).__name__}).")
    return int(value)


def shard_indices(length: int, rank: int, world_size: int) -> range:
    """The indices of ``rank``'s shard of ``length`` items over ``world_size`` processes: a contiguous block.

    Blocks are ``[rank * length // world_size, (rank + 1) * length // world_size)``: disjoint, in order, covering
    ``range(length)`` exactly once; sizes differ by at most one (and a rank may get none when ``length`` is smaller
    than ``world_size``).

    Raises:
        ValueError: a negative ``length``, ``world_size < 1`` or ``rank`` outside ``[0, world_size)``.
    """
    for name, value in (("length", length), ("rank", rank), ("world_size", world_size)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"Expected `{name}` to be an int, but got {value!r}.")
    if length < 0:
        raise ValueError(f"Expected `length` >= 0, but got {length}.")
    if world_size < 1:
        raise ValueError(f"Expected `world_size` >= 1, but got {world_size}.")
    if not 0 <= rank < world_size:
        raise ValueError(f"Expected `rank` in [0, {world_size}), but got {rank}.")
    return range(rank * length // world_size, (rank + 1) * length // world_size)


class EvaluationSampler(Sampler[int]):
    """A sampler giving this process its contiguous block of the dataset, each item once over all processes.

    The evaluation counterpart of ``DistributedSampler``: no padding, no dropping, no shuffling (see the module
    doc). ``num_replicas`` and ``rank`` default to those of the initialised ``torch.distributed`` process group
    (``1`` and ``0`` without one).

    Args:
        data_source: the dataset (anything with ``len``) or its length.
        num_replicas: number of processes.
        rank: this process's rank.
    """

    def __init__(self, data_source: Sized | int, num_replicas: int | None = None, rank: int | None = None) -> None:
        if num_replicas is None or rank is None:
            import torch.distributed as dist

            ready = dist.is_available() and dist.is_initialized()
            if num_replicas is None:
                num_replicas = dist.get_world_size() if ready else 1
            if rank is None:
                rank = dist.get_rank() if ready else 0
        length = _as_int(data_source, "data_source") if not hasattr(data_source, "__len__") else len(data_source)
        num_replicas = _as_int(num_replicas, "num_replicas")
        rank = _as_int(rank, "rank")
        self.indices = shard_indices(length, rank, num_replicas)
        self.num_replicas = num_replicas
        self.rank = rank

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices)

    def __len__(self) -> int:
        return len(self.indices)
