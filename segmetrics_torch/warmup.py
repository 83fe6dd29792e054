"""Compile the package's CPU kernels ahead of time: for Docker images, CI machines and shared installs.

On CPU the exact algorithms run as numba kernels, compiled on a machine's first call of each (seconds to a minute
on a small machine, announced once on the ``segmetrics_torch.compile`` logger) and cached on disk by numba
(``NUMBA_CACHE_DIR``, else the package's ``ops/_kernels/__pycache__``), so later processes load them in
milliseconds. :func:`compile_kernels` makes that first call for every family on a tiny synthetic batch, with the
compiled backend forced (``use_backend("compiled")``), so that the kernels the families' defaults use are in the
cache before the first real call. ``segmetrics warmup`` runs it and prints the time of each family.

What it covers: the foreground suite (:class:`~segmetrics_torch.ForegroundMeasures`: S-measure, weighted F, the
threshold measures) on uint8 and float maps, the BSDS boundary benchmark on soft maps with thinning and on a ucm2,
the partition measures on label maps, object proposals, and the boundary distances (2-D and 3-D masks, label maps);
not the optional measures with their own dependencies (HCE, the context measures) nor a measure's non-default
keyword that selects another kernel. A kernel already in the cache loads instead of compiling, so a second run
takes about a second.

Example:
    >>> from segmetrics_torch.warmup import FAMILIES, compile_kernels
    >>> seconds = compile_kernels(["foreground"])
    >>> list(seconds) == ["foreground"] and seconds["foreground"] >= 0.0
    True
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable

import torch

from . import BoundaryPR, ForegroundMeasures, PartitionMeasures, ProposalRecall, SurfaceDistanceMeasures
from ._checks import check_choice
from .ops.backend import use_backend
from .ops.foreground import kernel_cache_folder
from .ops.soft_map_counts import compile_ahead

__all__ = ["FAMILIES", "cache_folder", "compile_kernels"]


def _disk(h: int, w: int, cy: int, cx: int, r: int) -> torch.Tensor:
    yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    return (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r


def _foreground() -> None:
    target = torch.stack([_disk(24, 32, 12, 14, 7), _disk(24, 32, 10, 18, 5)])
    soft = torch.linspace(0, 1, 24 * 32).reshape(24, 32)
    for preds in ((soft * 255).to(torch.uint8).expand(2, -1, -1), soft.expand(2, -1, -1).float()):
        metric = ForegroundMeasures()
        metric.update(preds, target)
        metric.compute()


def _boundary() -> None:
    edges = torch.zeros(1, 1, 24, 32, dtype=torch.bool)
    edges[0, 0, 6, 4:28] = True
    edges[0, 0, 4:20, 16] = True
    soft = torch.rand(1, 24, 32, generator=torch.Generator().manual_seed(0))
    metric = BoundaryPR(thresholds=9)
    metric.update(soft, edges)
    metric.compute()
    ucm = torch.zeros(1, 49, 65)
    ucm[0, 12, :] = 0.5
    ucm[0, :, 32] = 0.8
    metric = BoundaryPR(thresholds=9, input_format="ucm2")
    metric.update(ucm, edges)
    metric.compute()
    compile_ahead()  # the soft-map matching kernel, in the background process it uses on a first run


def _partition() -> None:
    labels = torch.zeros(1, 24, 32, dtype=torch.int64)
    labels[0, :, 16:] = 1
    labels[0, 12:, :] += 2
    human = labels.roll(2, dims=2).unsqueeze(1)
    metric = PartitionMeasures()
    metric.update(labels, human)
    metric.compute()


def _proposals() -> None:
    objects = torch.zeros(2, 24, 32, dtype=torch.bool)
    objects[0, 4:12, 4:14] = True
    objects[1, 14:22, 16:30] = True
    proposals = torch.stack([objects[0], objects[1], _disk(24, 32, 12, 16, 6)])
    metric = ProposalRecall(counts=[1, 3])
    metric.update(proposals, objects)
    metric.compute()


def _surface() -> None:
    g2 = _disk(24, 32, 12, 14, 7).unsqueeze(0)
    p2 = _disk(24, 32, 13, 15, 6).unsqueeze(0)
    g3 = torch.stack([_disk(24, 32, 12, 14, r) for r in (3, 6, 7, 6, 3)]).unsqueeze(0)
    metric = SurfaceDistanceMeasures(tolerance=1.0)
    for p, g in ((p2, g2), (g3.roll(1, dims=3), g3)):
        metric.update(p, g, spacing=(1.0,) * (p.ndim - 1))
    metric.compute()
    labels = g2.long() + _disk(24, 32, 12, 14, 3).unsqueeze(0).long()  # classes 0, 1, 2
    metric = SurfaceDistanceMeasures(tolerance=1.0, num_classes=3)
    metric.update(labels.roll(1, dims=2), labels)
    metric.compute()


#: the families :func:`compile_kernels` warms, in order, each with the calls that compile its kernels
FAMILIES: dict[str, Callable[[], None]] = {
    "foreground": _foreground,
    "boundary": _boundary,
    "partition": _partition,
    "proposals": _proposals,
    "surface": _surface,
}


def cache_folder() -> str:
    """Where numba caches the compiled kernels: ``NUMBA_CACHE_DIR``, else the package's ``ops/_kernels/__pycache__``
    (a private folder under the system's temporary directory when neither can be written)."""
    return kernel_cache_folder()


def compile_kernels(families: Iterable[str] | None = None) -> dict[str, float]:
    """Compile (or load from numba's cache) the CPU kernels of ``families`` (default: every one of :data:`FAMILIES`);
    ``{family: seconds}`` in the order run. The compiled backend is forced for the calls and restored after.

    Raises:
        ValueError: a family not in :data:`FAMILIES`.
    """
    names = list(FAMILIES if families is None else families)
    for name in names:
        check_choice(name, "families", tuple(FAMILIES))
    seconds: dict[str, float] = {}
    with use_backend("compiled"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny batches' own notes (an R50 never reached, ...) say nothing here
        for name in names:
            start = time.perf_counter()
            FAMILIES[name]()
            seconds[name] = time.perf_counter() - start
    return seconds
