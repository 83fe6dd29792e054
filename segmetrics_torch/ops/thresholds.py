"""Confusion counts of a soft map at all 256 thresholds, from one histogram pass.

Convention (PySODMetrics 1.6.2, ``Fmeasure.cal_pr`` / ``Emeasure.cal_em_with_cumsumhistogram``):
the map ``p`` in [0, 1] (float64) is binned as ``b = trunc(255 * p)`` (numpy's ``astype(np.uint8)``); the curve has
256 entries in **descending** threshold order, entry ``i`` being the binary map ``b >= 255 - i``. Entry 0 is therefore
"``p == 1``" (after binning) and entry 255 is "every pixel". The bins must be computed from the float64 map with this
exact operation (``p * 255`` then truncation): a float32 pipeline disagrees with the reference on ~2 % of pixels of
stretched maps.

The counts come from one ``bincount`` over ``bin + 256 * gt + 512 * image`` for the whole batch, then a flipped
cumulative sum: no per-threshold pass over the image. Integer counts are exact and deterministic on every device.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from .device_exact import count_by_key

__all__ = ["NUM_THRESHOLDS", "BinaryCounts", "adaptive_threshold", "binary_counts", "threshold_counts"]

NUM_THRESHOLDS = 256


class BinaryCounts(NamedTuple):
    """Confusion counts of binary maps against binary ground truth (float64 tensors, exact integers).

    ``tp`` and ``pp`` (predicted positives) have shape (B,) for one binary map per image or (B, 256) for the
    threshold curve; ``pos`` (ground-truth positives) has shape (B,); ``numel`` is the number of pixels per image.
    """

    tp: Tensor
    pp: Tensor
    pos: Tensor
    numel: int

    def expand(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Return ``(tp, fp, fn, tn)`` broadcast to the shape of ``tp``."""
        pos = self.pos if self.tp.ndim == 1 else self.pos[:, None]
        fp = self.pp - self.tp
        fn = pos - self.tp
        tn = self.numel - self.pp - fn
        return self.tp, fp, fn, tn


def _check_pair(p: Tensor, g: Tensor) -> None:
    """(B, H, W) maps and ground truth of one shape (a shape check only: these run inside the measures' hot path)."""
    if p.ndim != 3 or p.shape != g.shape:
        raise ValueError(f"Expected `p` and `g` of one shape (B, H, W), but got {tuple(p.shape)} and {tuple(g.shape)}.")


def threshold_counts(p: Tensor, g: Tensor) -> BinaryCounts:
    """Counts of ``trunc(255 p) >= 255 - i`` for the 256 thresholds ``i``, per image.

    Args:
        p: (B, H, W) float64 maps in [0, 1].
        g: (B, H, W) bool ground truth.

    Returns:
        :class:`BinaryCounts` with ``tp`` and ``pp`` of shape (B, 256), descending thresholds.
    """
    _check_pair(p, g)
    batch = p.shape[0]
    # truncation toward zero, as numpy's astype(np.uint8) on [0, 255]. A map outside [0, 1] (only reachable with
    # validate_args=False) is clamped to the end bins (NaN to bin 0), as the CPU kernel does, so that it cannot spill
    # into another image's or the other class's bins
    bins = (p * 255).nan_to_num_(nan=0.0, posinf=255.0, neginf=0.0).clamp_(0, 255).to(torch.int64)
    key = bins + g.to(torch.int64) * 256 + torch.arange(batch, device=p.device).view(-1, 1, 1) * 512
    hist = count_by_key(key.reshape(-1), batch * 512).view(batch, 2, 256)
    cum = hist.flip(-1).cumsum(-1).to(torch.float64)  # [:, :, i] = number of pixels with bin >= 255 - i
    tp = cum[:, 1]
    return BinaryCounts(tp=tp, pp=tp + cum[:, 0], pos=cum[:, 1, -1].clone(), numel=p.shape[1] * p.shape[2])


def adaptive_threshold(p: Tensor) -> Tensor:
    """The adaptive threshold ``min(2 * mean(p), 1)`` per image (Achanta et al. CVPR 2009), shape (B,)."""
    return torch.clamp(2 * p.mean(dim=(1, 2)), max=1.0)


def binary_counts(p: Tensor, g: Tensor, threshold: Tensor) -> BinaryCounts:
    """Counts of the binary maps ``p >= threshold`` (one threshold per image, applied to the float map)."""
    _check_pair(p, g)
    binary = p >= threshold.view(-1, 1, 1)
    tp = (binary & g).sum(dim=(1, 2)).to(torch.float64)
    pp = binary.sum(dim=(1, 2)).to(torch.float64)
    pos = g.sum(dim=(1, 2)).to(torch.float64)
    return BinaryCounts(tp=tp, pp=pp, pos=pos, numel=p.shape[1] * p.shape[2])
