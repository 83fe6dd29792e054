"""The public ops name a bad argument (a fuzzing pass found a raw IndexError, a torch shape error and an all-False
mask for a negative radius)."""

from __future__ import annotations

import math

import pytest
import torch

from segmetrics_torch.ops.morphology import dilate_disk, seg2bmap
from segmetrics_torch.ops.thresholds import binary_counts, threshold_counts


def test_seg2bmap_of_an_empty_image() -> None:
    with pytest.raises(ValueError, match=r"`labels` of shape \(\.\.\., H, W\) with H, W >= 1"):
        seg2bmap(torch.zeros(2, 0, 16, dtype=torch.long))


@pytest.mark.parametrize("radius", [-2.0, math.nan, math.inf])
def test_dilate_disk_radius(radius: float) -> None:
    mask = torch.zeros(2, 8, 8, dtype=torch.bool)
    mask[0, 3, 3] = True
    with pytest.raises(ValueError, match="`radius` to be a finite number >= 0"):
        dilate_disk(mask, radius)
    assert int(dilate_disk(mask, 1.5).sum()) == 9  # the 3 x 3 disk of the one pixel; the empty map stays empty


def test_threshold_counts_of_mismatched_shapes() -> None:
    p, g = torch.rand(2, 8, 8, dtype=torch.float64), torch.zeros(1, 8, 8, dtype=torch.bool)
    with pytest.raises(ValueError, match="`p` and `g` of one shape"):
        threshold_counts(p, g)
    with pytest.raises(ValueError, match="`p` and `g` of one shape"):
        binary_counts(p, g, torch.full((2,), 0.5, dtype=torch.float64))


def test_correspond_pixels_of_an_empty_image() -> None:
    """numpy's 'zero-size array to reduction operation maximum' reached the caller (a fuzzing pass)."""
    from segmetrics_torch.ops.matching import correspond_pixels

    empty = torch.zeros(0, 5, dtype=torch.bool)
    with pytest.raises(ValueError, match=r"`machine` to be a bool \(H, W\) tensor with H, W >= 1"):
        correspond_pixels(empty, empty)
