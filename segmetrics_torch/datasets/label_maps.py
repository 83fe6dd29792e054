"""Checks of decoded label maps. Whether a "label map" is really a soft map: a partition command given a boundary or
saliency probability map (or a smooth depth map) would score it as thousands of one-pixel regions. The checks look at
how many distinct values an image has and how scattered its equal-value runs are, on the first images of a folder;
and whether every hierarchy (a ``segs`` stack) of a folder has the same number of levels."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..errors import InputError

__all__ = ["SOFT_MAP_CHECKED", "SOFT_MAP_SCATTER", "check_depth", "check_soft_labels", "soft_map_reason"]

#: a label map with at least this many values, most of whose pixels off its commonest value differ from a
#: 4-neighbour, is a soft map (probability / edge strength), not regions (BSDS annotations: 2-8 %, 3,000 SLIC
#: superpixels: ~48 % of such pixels on a region border; soft and ucm2 maps saved as PNG: 77-100 %)
SOFT_MAP_LEVELS, SOFT_MAP_BORDER = 32, 0.75

#: a label map with values above 255 (16-bit) is a soft map when, besides the above, its gray levels are scattered:
#: at least this many 4-connected runs of equal value per distinct value (16-bit soft maps of the BSDS sample: 4-7,
#: ucm2 saved as 16-bit: 2.2-2.4; label maps: SLIC 1.0, even 25,000-45,000 Felzenszwalb regions 1.4-1.6)
SOFT_MAP_SCATTER = 1.8


#: decoded label maps looked at by the check (the first ones of a method)
SOFT_MAP_CHECKED = 3


def soft_map_reason(labels: np.ndarray) -> str | None:
    """Why an (H, W) label map looks like a soft map saved as gray levels rather than a partition, or None.

    A partition stored as gray has solid regions; a soft boundary or probability map read as labels has one region
    per gray level, scattered in thin runs: at least :data:`SOFT_MAP_LEVELS` values and at least
    :data:`SOFT_MAP_BORDER` of the pixels off the commonest value next to another value. Above 255 (16-bit) a
    partition can have that many small regions (superpixels), so there each value must also fall apart into
    :data:`SOFT_MAP_SCATTER` or more separate runs on average, as gray levels do and regions do not.
    """
    if labels.ndim != 2 or labels.size == 0 or labels.min() < 0:
        return None
    values, counts = np.unique(labels, return_counts=True)
    levels = len(values)
    if levels < SOFT_MAP_LEVELS:
        return None
    common = values[counts.argmax()]
    other = labels != common
    border = np.zeros(labels.shape, bool)
    across, down = labels[:, 1:] != labels[:, :-1], labels[1:] != labels[:-1]
    border[:, 1:] |= across
    border[:, :-1] |= across
    border[1:] |= down
    border[:-1] |= down
    share = float(border[other].mean())
    if share < SOFT_MAP_BORDER:
        return None
    reason = (
        f"{levels} gray levels; {share:.0%} of its pixels other than its most common value ({int(common)}) "
        "touch a different value"
    )
    if labels.max() <= 255:
        return reason
    runs = _equal_value_runs(labels, across, down)
    if runs < SOFT_MAP_SCATTER * levels:
        return None
    return f"{reason}, and its values fall apart into {runs / levels:.1f} separate runs each"


def _equal_value_runs(labels: np.ndarray, across: np.ndarray, down: np.ndarray) -> int:
    """The number of 4-connected runs of equal value (``across``/``down``: where neighbours differ)."""

    h, w = labels.shape
    index = np.arange(h * w).reshape(h, w)
    rows = np.concatenate([index[:, 1:][~across], index[1:][~down]])
    cols = np.concatenate([index[:, :-1][~across], index[:-1][~down]])
    graph = coo_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(h * w, h * w))
    return int(connected_components(graph, directed=False)[0])


def check_soft_labels(
    images: Iterator[tuple[str, Any, Any]], paths: dict[str, Path], warn: Callable[[str], None] | None
) -> Iterator[tuple[str, Any, Any]]:
    """Warn once (``warn(message)``; None: no warning, e.g. on a process that does not speak) when the first label
    maps look like soft maps (:func:`soft_map_reason`): every gray level would be read as a region, a silently
    meaningless score."""
    warned = warn is None
    for i, (stem, pred, gt) in enumerate(images):
        reason = soft_map_reason(pred) if i < SOFT_MAP_CHECKED and not warned else None
        if reason is not None and warn is not None:
            warn(
                f"warning: the predictions look like soft maps (edge strengths or probabilities), not label maps: "
                f"{paths[stem]}: {reason}. `partition` reads every gray level as a region; evaluate edge maps with "
                "`segmetrics evaluate boundary`, or save partitions as label maps"
            )
            warned = True
        yield stem, pred, gt


def check_depth(images: Iterator[tuple[str, Any, Any]], paths: dict[str, Path]) -> Iterator[tuple[str, Any, Any]]:
    """Every `segs` stack must have the depth of the first (the levels are the columns of one curve)."""
    first: tuple[Path, int] | None = None
    for stem, pred, gt in images:
        first = first or (paths[stem], pred.shape[0])
        if pred.shape[0] != first[1]:
            raise InputError(
                f"{stem}: `segs` of {paths[stem]} holds {pred.shape[0]} levels but that of {first[0]} holds "
                f"{first[1]}; every hierarchy needs the same number of levels"
            )
        yield stem, pred, gt
